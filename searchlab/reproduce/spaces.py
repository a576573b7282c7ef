"""Each GPU x application of an experiment file: its T1 file, its brute-forced T4 space, objective and direction.

As the reference (``experiments.generate_all_experimental_groups``) finds and reads them, through searchlab's own
readers (:mod:`searchlab.interchange.t1`, :mod:`searchlab.interchange.t4_space`: bounded reads, every row checked):

- the space file: ``pattern_for_full_search_space_filenames`` with ``${applications}`` and ``${gpus}`` filled in,
  else the T1 file's ``KernelSpecification.SimulationInput`` (relative to the T1 file, ``.json`` added if missing);
- the objective: the application's ``objective_performance_keys`` (schema 1.2.0), else ``statistics_settings``'
  (where schema 1.1.0 puts them), else the T4 file's first row's ``objectives``, as the reference infers it;
- the direction: the application's ``minimization``, else ``statistics_settings``', else from the objective's
  name as the reference infers it (``time``: minimise; ``score``, ``GFLOP/s``, ``GFLOPs``, ``GB/s``: maximise);
- Kernel Tuner's cache, which the reference's runs read: the space file's name without ``_T4``. Where it is missing
  (the hub ships T4 only) a cache converted from the T4 file is used (:func:`kt_cache_from_t4`), written into the
  output directory when the run starts (:func:`write_cache`); the reference fails there.

Relative paths are taken from the working directory, as the reference takes them, then from the experiment file's
directory, so a file also works from elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.interchange.t1 import T1File, read_t1_file

__all__ = ["Space", "find", "read_space", "write_cache"]

MAXIMISED = ("score", "gflop/s", "gflops", "gb/s")


@dataclass(frozen=True)
class Space:
    gpu: str
    application: str
    t1: T1File = field(repr=False)
    t4: Path
    kt_cache: Path | None  # Kernel Tuner's own cache beside the T4 file, else None (converted at start)
    objective: str
    objective_from: str  # where the key came from: the application, statistics_settings, or the space file
    minimization: bool
    doc: Mapping[str, Any] = field(repr=False, compare=False)  # the checked T4 document
    digest: str = ""  # SHA-256 of the T4 file's bytes (provenance marks; the cells' fingerprint is its start)

    @property
    def key(self) -> str:
        return f"{self.gpu}+{self.application}"  # as report_experiments.get_aggregation_data_key


def find(value: str, base: Path, what: str) -> Path:
    """An existing path: as given (the working directory), else relative to ``base`` (the experiment's folder)."""
    path = Path(value)
    for candidate in (path,) if path.is_absolute() else (path, base / path):
        if candidate.exists():
            return candidate.absolute()  # not resolve(): Kernel Tuner's cache is looked for beside a link
    raise ConfigError(f"{what} {value!r}: no such file (looked in {Path.cwd()} and {base})")


def _space_file(defaults: Mapping[str, Any], t1: T1File, gpu: str, app: str, base: Path) -> Path:
    pattern = defaults.get("pattern_for_full_search_space_filenames")
    if pattern is None:
        simulation = t1.kernel.get("SimulationInput")
        if not isinstance(simulation, str) or not simulation:
            raise ConfigError(f"application {app!r}: no pattern_for_full_search_space_filenames and no "
                              f"KernelSpecification.SimulationInput in {t1.path}: where is the brute-forced space?")
        name = simulation if simulation.endswith(".json") else simulation + ".json"
        return find(str(t1.path.parent / name) if not Path(name).is_absolute() else name, base,
                    f"space {gpu}/{app}: SimulationInput")
    name = str(pattern["regex"]).replace("${applications}", app).replace("${gpus}", gpu)
    if "${" in name:
        raise ConfigError(f"pattern {pattern['regex']!r}: only ${{applications}} and ${{gpus}} can be filled in "
                          "(the reference refuses others too)")
    return find(name, base, f"space {gpu}/{app}: full search space file")


def _objective(app: Mapping[str, Any], stats: Mapping[str, Any]) -> tuple[list[str] | None, str]:
    if "objective_performance_keys" in app:
        return list(app["objective_performance_keys"]), "the application"
    if "objective_performance_keys" in stats:
        return list(stats["objective_performance_keys"]), "statistics_settings"
    return None, "the space file (inferred as the reference infers it)"


def _direction(app: Mapping[str, Any], stats: Mapping[str, Any], objective: str) -> bool:
    for source in (app, stats):
        if isinstance(source.get("minimization"), bool):
            return bool(source["minimization"])
    if "time" in objective.lower():
        return True
    if any(k in objective.lower() for k in MAXIMISED):
        return False
    raise ConfigError(f"application {app['name']!r}: objective {objective!r}: the direction cannot be inferred from its "
                      "name; set 'minimization' for this application (the reference refuses this too)")


def _kt_cache(t4: Path, t1: T1File, where: str) -> Path | None:
    """The reference's cache (the T4 name without ``_T4``), checked against the T1 file as Kernel Tuner checks it."""
    cache = t4.with_name(t4.name.replace("_T4", ""))
    if cache == t4 or not cache.is_file():
        return None
    from searchlab.interchange import read_json

    doc = read_json(cache, f"{where}: Kernel Tuner cache")
    if not isinstance(doc, Mapping) or doc.get("tune_params_keys") != list(t1.tune_params()):
        keys = doc.get("tune_params_keys") if isinstance(doc, Mapping) else None
        raise ConfigError(f"{where}: Kernel Tuner cache {str(cache)!r} holds parameters {keys}, not the T1 file's "
                          f"{list(t1.tune_params())} (Kernel Tuner refuses it)")
    if doc.get("kernel_name") != t1.kernel.get("KernelName"):
        raise ConfigError(f"{where}: Kernel Tuner cache {str(cache)!r} is of kernel {doc.get('kernel_name')!r}, not "
                          f"{t1.kernel.get('KernelName')!r} (Kernel Tuner refuses it)")
    return cache


def read_space(raw: Mapping[str, Any], app: Mapping[str, Any], gpu: str, base: Path, time_keys: list[str],
               t1s: dict[str, T1File]) -> Space:
    """One GPU x application, checked whole (module docstring); ``t1s`` caches T1 files by application."""
    from searchlab.interchange.t4_space import read_t4_space

    defaults, stats = raw["experimental_groups_defaults"], raw["statistics_settings"]
    name = str(app["name"])
    if name not in t1s:
        folder = Path(str(app.get("folder", ".")))
        t1 = read_t1_file(find(str(folder / str(app["input_file"])), base, f"application {name!r}: input_file"))
        output = (t1.document.get("General") or {}).get("OutputFormat")
        if output != "JSON":
            raise ConfigError(f"application {name!r}: {t1.path}: General.OutputFormat={output!r}; only JSON is "
                              "supported (the reference refuses others too)")
        t1s[name] = t1
    t1 = t1s[name]
    t4 = _space_file(defaults, t1, gpu, name, base)
    keys, source = _objective(app, stats)
    if keys is not None and len(keys) != 1:
        raise ConfigError(f"application {name!r}: objective_performance_keys {keys}: one key only (the reference "
                          "refuses multi-objective too)")
    space = read_t4_space(t4, {p: tuple(v) for p, v in t1.tune_params().items()}, time_keys,
                          keys[0] if keys else None, what=f"space {gpu}/{name}")
    where = f"space {gpu}/{name}"
    from searchlab.core.files import noted

    return Space(gpu, name, t1, t4, _kt_cache(t4, t1, where), space.objective, source,
                 _direction(app, stats, space.objective), space.doc, noted().get(str(t4.resolve()), ""))


def write_cache(space: Space, folder: Path) -> Path:
    """Kernel Tuner's cache of ``space`` (its own, or one converted from its T4 file into ``folder``)."""
    if space.kt_cache is not None:
        return space.kt_cache
    import hashlib

    from searchlab.interchange.kt_cache import kt_cache_from_t4
    from searchlab.reproduce.store import atomic_write

    path = folder / f"space_{hashlib.sha256(space.key.encode()).hexdigest()[:16]}.json"  # no file name in the path
    if not path.is_file():
        doc = kt_cache_from_t4(space.doc, space.t1.tune_params(), kernel=str(space.t1.kernel.get("KernelName")),
                               problem_size=space.t1.kernel.get("ProblemSize"), device=space.gpu,
                               objective=space.objective, higher_is_better=not space.minimization)
        atomic_write(path, json.dumps(doc).encode())
    return path
