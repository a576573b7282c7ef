"""One repeat of one group, run by Kernel Tuner's own code in its simulation mode.

Where the reference's time goes (profiled on this machine, Kernel Tuner 1.5): per repeat ``tune_kernel_T1``
re-reads and re-validates the T1 file, regenerates the kernel's arguments (``numpy.random.randn`` of the
4111 x 4111 convolution input: 1.2 s), re-reads Kernel Tuner's cache (0.07 s for a convolution space), runs
``lshw`` and reads package metadata for the T4 metadata (0.03 s), and only then tunes (0.01 s for a
hyperparameter space, 0.2-0.3 s for ``random_sample`` on convolution). Here a worker process reads each T1 file
once (:mod:`searchlab.interchange.t1`: its values through the safe evaluator), and each cache once (Kernel Tuner's
own ``read_cache``, memoised while ``tune_kernel`` runs: in simulation mode Kernel Tuner only reads it); the
arguments are one-element arrays of the declared types (simulation mode never reads them, Kernel Tuner still checks
them against the kernel's signature), and no metadata is collected. Everything that decides *what is evaluated
and how it is counted* is Kernel Tuner's: ``kernel_tuner.tune_kernel`` with the T1 file's parameters and
restrictions, its ``SimulationRunner``, its budget (``max_fevals``/``time_limit``, the latter charged the recorded
compile + verification + benchmark time plus the real time the strategy spends), its strategies, and custom ones
through ``OptAlgWrapper`` as ``tune_kernel_T1`` builds them. Results go through Kernel Tuner's ``get_t4_results``
and the methodology's unit conversion, and the methodology's retry rule (``runner.collect_results``) is kept.

Seeds: before each attempt Python's and NumPy's global generators (which Kernel Tuner's strategies draw from) are
seeded with the repeat's seed, and a searchlab searcher gets it too; the seed is recorded with the repeat. A seed
the file fixes (``SearchlabOptAlg``'s ``seed``) is used as given for every repeat and attempt, as the reference
uses it; a derived seed moves on by one per retried attempt (a retry is a new run).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = ["RepeatSpec", "run_repeat"]


@dataclass(frozen=True)
class RepeatSpec:
    """Everything one repeat needs, picklable (it is shipped to worker processes)."""

    t1: str
    cache: str
    objective: str
    higher_is_better: bool
    samples: int
    search_method: str
    custom: str | None  # None | "searchlab" | a file (imported only when the run allows code)
    hyperparameters: tuple[tuple[str, Any], ...]
    budget: tuple[tuple[str, float], ...]  # ("max_fevals", n) or ("time_limit", seconds)
    cutoff_time_start: float
    cutoff_time: float
    min_num_evals: int
    time_keys: tuple[str, ...]
    seed: int
    seed_fixed: bool = False  # the file fixed it: every attempt uses it unchanged


_T1: dict[str, dict[str, Any]] = {}
_CACHES: dict[tuple[str, int, int], Any] = {}


def _kernel(path: str) -> dict[str, Any]:
    """What ``tune_kernel_T1`` passes to ``tune_kernel``, from the T1 file (read once per process)."""
    if path not in _T1:
        import numpy as np

        from searchlab.interchange.t1 import read_t1_file

        t1 = read_t1_file(path)
        spec = t1.kernel
        source = Path(str(spec["KernelFile"]))
        for candidate in (source, t1.path.parent / source, t1.path.parent.parent / source):
            if candidate.exists():
                source = candidate
                break
        arguments: list[Any] = []
        cmem: dict[str, Any] = {}
        for arg in spec.get("Arguments") or ():
            kind = {"float": np.float32, "int32": np.int32}.get(str(arg.get("Type")), np.float32)
            value = np.zeros(1, dtype=kind) if arg.get("MemoryType") == "Vector" else kind(arg.get("FillValue", 0))
            arguments.append(value)
            if arg.get("MemType") == "Constant":
                cmem[str(arg.get("Name"))] = value
        grid = {k: (spec[k] if spec.get(k) else None) for k in ("GridDivX", "GridDivY", "GridDivZ")}
        _T1[path] = dict(kernel_name=spec["KernelName"], kernel_source=str(source), problem_size=spec["ProblemSize"],
                         arguments=arguments, tune_params=t1.tune_params(), grid_div_x=grid["GridDivX"],
                         grid_div_y=grid["GridDivY"], grid_div_z=grid["GridDivZ"], cmem_args=cmem,
                         restrictions=list(t1.conditions), lang=spec["Language"])
    return _T1[path]


@contextlib.contextmanager
def _quiet_kernel_tuner() -> Iterator[None]:
    """While ``tune_kernel`` runs: Kernel Tuner's ``read_cache`` memoised by (path, mtime, size), and its
    ``print_config_output`` skipped when quiet (it formats every result's line before it looks at ``quiet``: a
    third of a simulated evaluation's time). Neither changes what is evaluated or recorded; both make Kernel
    Tuner's own ``framework`` time (the real time outside the strategy, which it records) smaller, as a faster
    machine would."""
    import kernel_tuner.util as util

    original = util.read_cache
    printer = util.print_config_output

    def quiet_printer(tune_params: Any, params: Any, quiet: bool, metrics: Any, units: Any) -> None:
        if not quiet:
            printer(tune_params, params, quiet, metrics, units)

    def memoised(cachefile: str, open_cache: bool = True) -> Any:
        if open_cache:  # not simulation mode: Kernel Tuner appends to the file, no memo
            return original(cachefile, open_cache)
        st = os.stat(cachefile)
        key = (str(cachefile), st.st_mtime_ns, st.st_size)
        if key not in _CACHES:
            _CACHES.clear()  # one space at a time per worker, mostly: keep memory bounded
            _CACHES[key] = original(cachefile, open_cache)
        return _CACHES[key]

    util.read_cache, util.print_config_output = memoised, quiet_printer
    try:
        yield
    finally:
        util.read_cache, util.print_config_output = original, printer


class _NoTorch:
    """A meta-path finder that makes ``import torch`` fail while Kernel Tuner is imported (see :func:`_import`)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is not imported by searchlab reproduce's Kernel Tuner (no 1.5 strategy uses it)")


def _import_kernel_tuner() -> None:
    """Import Kernel Tuner without torch: Kernel Tuner 1.5 imports torch (1.2 s per process) only to offer its
    search space as tensors, which none of its strategies uses (``strategies/`` never touches them), and falls back
    to a placeholder when torch is missing. Where torch is imported already, nothing changes."""
    import sys

    if "kernel_tuner.interface" in sys.modules or "torch" in sys.modules:
        return
    blocker = _NoTorch()
    sys.meta_path.insert(0, blocker)
    try:
        import kernel_tuner.interface  # noqa: F401
    finally:
        sys.meta_path.remove(blocker)


def _strategy(spec: RepeatSpec, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The strategy object and options as ``tune_kernel_T1`` makes them (custom: ``OptAlgWrapper``)."""
    if spec.custom is None:
        return spec.search_method, options
    from kernel_tuner.strategies.wrapper import OptAlgWrapper

    params = {k: v for k, v in options.items() if k not in ("custom_search_method_path", "max_fevals",
                                                              "time_limit", "constraint_aware")}
    if spec.custom == "searchlab":
        from searchlab.integrations.kernel_tuner import SearchlabOptAlg

        optimizer: Any = SearchlabOptAlg(**{**params, "seed": spec.seed})
    else:
        from kernel_tuner.file_utils import import_class_from_file

        optimizer = import_class_from_file(Path(spec.custom), spec.search_method)(**params)
        options["custom_search_method_path"] = spec.custom
    if "constraint_aware" not in options and hasattr(optimizer, "constraint_aware"):
        options["constraint_aware"] = optimizer.constraint_aware
    return OptAlgWrapper(optimizer), options


def _tune_once(spec: RepeatSpec) -> dict[str, Any]:
    import random

    import numpy as np

    _import_kernel_tuner()
    from kernel_tuner import tune_kernel
    from kernel_tuner.file_utils import get_t4_results

    from searchlab.reproduce.arrays import compact

    kernel = _kernel(spec.t1)
    options: dict[str, Any] = dict(spec.budget)
    options.update(dict(spec.hyperparameters))  # the file's Attributes, as tune_kernel_T1 adds them
    strategy, options = _strategy(spec, options)
    random.seed(spec.seed)
    np.random.seed(spec.seed % 2**32)
    with warnings.catch_warnings(), _quiet_kernel_tuner():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(**kernel, device=None, cache=spec.cache, simulation_mode=True, quiet=True,
                                 verbose=False, iterations=spec.samples, strategy=strategy,
                                 strategy_options=options, objective=spec.objective,
                                 objective_higher_is_better=spec.higher_is_better)
        t4 = get_t4_results(results, kernel["tune_params"], objective=spec.objective)
    out = compact(t4, spec.objective, spec.time_keys)
    names = list(kernel["tune_params"])
    out["configs"] = [_config(names, r["configuration"]) for r in t4["results"]]
    return out


_CONFIGS: dict[tuple[Any, ...], Any] = {}


def _config(names: list[str], conf: dict[str, Any]) -> Any:
    """The configuration as a searchlab ``Config`` (the records' evaluation key), one object per distinct one."""
    values = tuple(conf[n] for n in names)
    found = _CONFIGS.get(values)
    if found is None:
        from searchlab.core.records import Config

        if len(_CONFIGS) > 1_000_000:
            _CONFIGS.clear()
        found = _CONFIGS[values] = Config({n: (v.item() if hasattr(v, "item") else v) for n, v in conf.items()})
    return found


def _cumulative(run: dict[str, Any]) -> list[float]:
    """``collect_results``' ``cumulative_time_taken``: the counted times summed along the run."""
    total, out = 0.0, list[float]()
    for row in run["t"]:
        total += sum(v for v in row if v is not None)
        out.append(total)
    return out


def run_repeat(spec: RepeatSpec) -> dict[str, Any]:
    """One repeat: Kernel Tuner's results in T4 form, retried as ``collect_results`` retries (at most 20).

    Deviation: a strategy that lets Kernel Tuner's ``StopCriterionReached`` escape ``tune_kernel`` counts as an
    attempt with no results (and is retried), where the reference's whole run ends with a traceback. Kernel Tuner
    1.5's ``greedy_ils`` does this when the time budget is spent by its first evaluation (that call sits outside
    its ``try``): on the convolution_milo W6600 space (a 15 s budget) one of 25 repeats hit it and ended
    ``autotuning_experiment`` after 950 s (bench/results/historical/reproduce.json)."""
    _import_kernel_tuner()
    from kernel_tuner.util import StopCriterionReached

    first = spec.seed
    for attempt in range(20):
        spec = replace(spec, seed=first if spec.seed_fixed else (first + attempt) % 2**63)
        try:
            run = _tune_once(spec)
        except StopCriterionReached:  # the budget ended before the strategy returned: nothing was kept
            continue
        inside = [i for i, t in zip(run["i"], _cumulative(run)) if spec.cutoff_time_start <= t <= spec.cutoff_time]
        valid = [i for i in inside if i == "correct"]
        if len(valid) >= 2 and len(inside) >= spec.min_num_evals:
            return {"run": run, "attempts": attempt + 1, "seed": spec.seed, "seed_fixed": spec.seed_fixed}
    raise RepeatFailed(f"{spec.search_method}: too few valid results within the cutoff in 20 attempts (needs "
                       f"{spec.min_num_evals} inside the cutoff, two of them valid; the reference gives up there too)")


class RepeatFailed(RuntimeError):
    """The methodology's retry rule gave up on a repeat (the reference ends the whole run there)."""
