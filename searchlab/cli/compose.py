"""Compose the command line's overrides into jobs, once each (issue 21, item 2); the one place that composes
Hydra configs (issue 52, item 4: :func:`compose_config`, :func:`hydra_app`).

Hydra composes each job's config exactly once, here, through its compose API: a single run is
one job, a sweep (``-m a=1,2 b=x,y``) one job per combination, in the order of Hydra's basic
sweeper (the first override varies slowest). A job's directory comes from the same composition
(``hydra.run.dir``, or ``hydra.sweep.dir``/``hydra.sweep.subdir``), so nothing is created
before its run passed :func:`searchlab.run.prepare.prepare` (a sweep: before every job passed it;
the jobs then run through Hydra's sweeper and launcher, :mod:`searchlab.cli.launch`).

Every other composition goes through :func:`compose_config` too -- a study file (``conf/study/``), a study's
cells, the sweep's launcher (:func:`hydra_app`) -- so Hydra's and OmegaConf's errors become one line the same
way everywhere (:func:`one_line`), with the caller's prefix.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from searchlab.core.commands import command
from searchlab.core.groups import CONF_DIR
from searchlab.core.schema import built_from
from searchlab.errors import ConfigError, append_hint, did_you_mean


@dataclass(frozen=True)
class Job:
    """One composed run of the command line."""

    cfg: DictConfig  # the run's config (Hydra's own node removed)
    hydra: DictConfig  # Hydra's node of the same composition: directories, logging
    overrides: tuple[str, ...]
    names: tuple[str, str]  # the problem and searcher chosen
    run_dir: Path  # a single run's directory (hydra.run.dir)
    sweep_dir: Path  # a sweep's directory (hydra.sweep.dir) ...
    subdir: str  # ... and this job's directory in it (hydra.sweep.subdir)
    full: DictConfig | None = None  # the whole composition, Hydra's node in it: what a sweep's launcher gets


def config_names(group: str) -> list[str]:
    """The configs of a group of ``searchlab/conf/`` (``study``: the shipped study files), sorted."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def one_line(exc: BaseException) -> str:
    """Hydra's and OmegaConf's multi-line messages as one line: the message, the reason Hydra
    keeps in the cause, and the available options where it lists them; hints dropped."""
    skip = ("full_key:", "object_type", "reference_type", "To append", "Set the environment", "See https",
            "Config search path", "provider=", "None")
    lines: list[str] = []
    options: list[str] = []
    cause: BaseException | None = exc
    while cause is not None:
        listing = False
        for raw in str(cause).splitlines():
            line = raw.strip()
            if line.startswith("Available options"):
                listing = True
            elif not line or line.startswith(skip) or "$VALUE" in line:
                listing = False
            elif listing and raw.startswith("\t"):
                options.append(line)
            else:
                lines.append(line)
        cause = cause.__cause__
    text = " ".join(list(dict.fromkeys(lines))[:2]) or type(exc).__name__
    return _hint(exc, text, options)


def _hint(exc: BaseException, text: str, options: list[str]) -> str:
    """Add "did you mean" to a name Hydra could not find, and the valid keys to a key it refused."""
    missing = re.search(r"Could not find '[^'/]*/([^']*)'", text)
    hint = did_you_mean(missing.group(1), options) if missing else ""
    cause: BaseException | None = exc
    while cause is not None and not hint:
        schema, key = getattr(cause, "object_type", None), getattr(cause, "key", None)
        if "not in" in str(cause) and key is not None and isinstance(schema, type) and dataclasses.is_dataclass(schema):
            hint = _renamed(schema, str(key), text)
        cause = cause.__cause__
    text = re.sub(r"Could not override '([^']*)'\. Key '[^']*' not in '[^']*'", r"\1: no such option", text) + hint
    if not hint and append_hint(exc):  # a mapping that may gain the key (a study's searchers): say how
        text = re.sub(r"(Could not override '[^']*')\. Key '[^']*' is not in struct", r"\1", text) + append_hint(exc)
    return _typed(exc, text) or _listing(text, options)


_LIMIT = 140  # the message; "searchlab: error: " makes the printed line at most 160 characters (issue 35)


def _listing(text: str, options: list[str]) -> str:
    """``text`` with as many of ``options`` as fit, then where the rest are (``--help``)."""
    if not options:
        return text
    more = f"; all {len(options)}: {command('searchlab', '--help')}"
    shown: list[str] = []
    for name in options:
        if len(f"{text} (available: {', '.join([*shown, name])}, ...{more})") > _LIMIT:
            break
        shown.append(name)
    if len(shown) == len(options) and len(f"{text} (available: {', '.join(shown)})") <= _LIMIT:
        return f"{text} (available: {', '.join(shown)})"
    return f"{text} (available: {', '.join(shown)}, ...{more})" if shown else f"{text} ({more[2:]})"


_KINDS = {"Integer": ("an integer", 10), "Float": ("a number", 1.5), "Boolean": ("true or false", "true")}


def _typed(exc: BaseException, text: str) -> str:
    """A value of the wrong type as key, expected type and an example (issue 35):
    ``budget.evaluations=ten: expected an integer, e.g. budget.evaluations=100`` (the default)."""
    found = re.search(r"override (\S+?)=(\S*) Value .* (?:could not be converted to (\w+)|is not a valid bool)", text)
    if not found or (found.group(3) or "Boolean") not in _KINDS:
        return ""
    key, value, kind = found.group(1), found.group(2), found.group(3) or "Boolean"
    words, example = _KINDS[kind]
    cause: BaseException | None = exc
    while cause is not None:
        schema = getattr(cause, "object_type", None)
        field = next((f for f in dataclasses.fields(schema) if f.name == key.rsplit(".", 1)[-1]), None) \
            if isinstance(schema, type) and dataclasses.is_dataclass(schema) else None
        if field is not None and isinstance(field.default, (int, float)) and field.default not in (None, 0):
            example = str(field.default).lower() if isinstance(field.default, bool) else field.default
        cause = cause.__cause__
    return f"{key}={value}: expected {words}, e.g. {key}={example}"


def _renamed(schema: type, key: str, text: str) -> str:
    """Why ``key`` is not an option of ``schema``: a former option the class names in
    ``renamed_options`` (futhark's ``runs``), one that moved into a nested config (issue 21: the flat
    ``problem.min_runs`` is now ``problem.measure.min_runs``), else did-you-mean and the valid keys."""
    renamed = getattr(built_from(schema), "renamed_options", {}).get(key)
    if renamed:
        return f": renamed, use {renamed}"
    for f in dataclasses.fields(schema):
        if isinstance(f.type, type) and dataclasses.is_dataclass(f.type) and key in {g.name for g in dataclasses.fields(f.type)}:
            full = re.search(r"override '([^']*)'", text)
            prefix = full.group(1).rsplit(".", 1)[0] + "." if full and "." in full.group(1) else ""
            return f" (it moved: use {prefix}{f.name}.{key})"
    valid = [f.name for f in dataclasses.fields(schema) if not f.name.startswith("_")]
    hint = did_you_mean(key, valid)
    shown = ", ".join(valid) or "none"
    if len(shown) > 40:  # the line stays within 160 characters; --help lists every option
        shown = shown[:shown.rfind(", ", 0, 40)] + ", ... (--help lists them)"
    return hint or f" (valid keys: {shown})"


def _parse(overrides: list[str]) -> list[Any]:
    """Hydra's parsed overrides; the one the grammar refuses is named."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    parsed = []
    for override in overrides:
        try:
            parsed += parser.parse_overrides([override])
        except HydraException as exc:
            raise ConfigError(f"{override!r}: {one_line(exc)}") from None
    return parsed


def sweep(overrides: list[str]) -> list[list[str]]:
    """Every combination of a multirun's overrides (``a=1,2`` -> ``a=1`` and ``a=2``), as Hydra's basic
    sweeper spells and orders them (the first override varies slowest), Hydra's own overrides first."""
    hydra, jobs = task_combinations(overrides)
    return [hydra + job for job in jobs]


def task_combinations(overrides: list[str]) -> tuple[list[str], list[list[str]]]:
    """(Hydra's own overrides, every job's task overrides) spelt as Hydra's basic sweeper spells them, so a
    launcher's request for a job's config finds the job the check composed (searchlab.cli.launch)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    parsed = _parse(overrides)
    hydra = [o.input_line or "" for o in parsed if o.is_hydra_override()]
    (batch,) = BasicSweeper.split_arguments([o for o in parsed if not o.is_hydra_override()], None)
    return hydra, [list(job) for job in batch]


def compose_config(overrides: list[str], *, name: str = "config", group: str = "", where: str = "",
                   hydra: bool = False, resolve: bool = False) -> DictConfig:
    """``searchlab/conf/[group/]name.yaml`` with ``overrides``, composed by Hydra's compose API; every refusal is one
    ConfigError line, ``where`` its prefix (``study=NAME: ...``). ``hydra``: keep Hydra's own node (a job's
    directories); ``resolve``: resolve every interpolation now, so a bad one is refused here, not later."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from searchlab.cli.config import register_configs

    register_configs()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR / group), version_base="1.3"):
            cfg = hydra_compose(name, overrides=overrides, return_hydra_config=hydra)
        if resolve:
            OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException, ValueError) as exc:  # ValueError: `budget=1`
        raise ConfigError(f"{where}{one_line(exc)}") from None
    return cfg


@contextmanager
def hydra_app(job_name: str = "searchlab") -> Iterator[Any]:
    """Hydra's application over ``searchlab/conf/`` (a sweep's launcher composes its master config with it and
    runs the jobs inside it: :mod:`searchlab.cli.launch`)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from searchlab.cli.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name=job_name):
        app = GlobalHydra.instance().hydra
        assert app is not None
        yield app


def compose(overrides: list[str], num: int = 0) -> Job:
    """The job of ``overrides`` (number ``num`` of a sweep); one line (ConfigError) if Hydra refuses."""
    from hydra.errors import HydraException
    from omegaconf import OmegaConf, open_dict, read_write
    from omegaconf.errors import OmegaConfBaseException

    _parse(overrides)
    cfg = compose_config(overrides, hydra=True)
    try:
        with open_dict(cfg):
            cfg.hydra.job.num = num
        dirs = _directories(cfg)
        with read_write(cfg.hydra), open_dict(cfg.hydra):  # the launcher makes the job's directory from this
            cfg.hydra.sweep.subdir = dirs[2]  # literal (searchlab.cli.launch), not from Hydra's override_dirname
        choices = cfg.hydra.runtime.choices
        names = (str(choices.get("problem")), str(choices.get("searcher")))
        hydra = cfg.hydra
        full = copy.deepcopy(cfg)
        with open_dict(cfg):
            del cfg["hydra"]
        OmegaConf.to_container(cfg, resolve=True)  # interpolation errors surface here, as one line
    except (HydraException, OmegaConfBaseException, ValueError) as exc:  # ValueError: `budget=1`
        raise ConfigError(one_line(exc)) from None
    return Job(cfg, hydra, tuple(overrides), names, *dirs, full=full)


def _directories(cfg: DictConfig) -> tuple[Path, Path, str]:
    """The run directory, sweep directory and sweep subdirectory, resolved as Hydra does."""
    from hydra.core.hydra_config import HydraConfig

    HydraConfig.instance().set_config(cfg)  # ${hydra:runtime.choices.problem} in the directory names
    return (Path(str(cfg.hydra.run.dir)).resolve(), Path(str(cfg.hydra.sweep.dir)).resolve(),
            safe_subdir(str(cfg.hydra.sweep.subdir), int(cfg.hydra.job.num)))


_NAME_MAX = 200  # bytes; file systems allow 255, and Hydra's override_dirname grows with every override


def safe_subdir(subdir: str, num: int) -> str:
    """A sweep job's directory name that stays inside ``hydra.sweep.dir`` (issue 47, case 18): Hydra's
    ``override_dirname`` spells a path-valued override (``problem.path=../../t.json``) as a path, so a
    ``/`` (or ``\\``, NUL) in it becomes ``%2F``-style text; ``.``/``..`` alone become ``job_N``; a name
    too long for the file system keeps its start and a digest of the whole."""
    import hashlib

    name = re.sub(r"[/\\\x00]", lambda m: f"%{ord(m.group(0)):02X}", subdir)
    if name.strip(".") == "":
        name = f"job_{num}"
    if len(name.encode()) > _NAME_MAX:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = name.encode()[:_NAME_MAX - 13].decode("utf-8", "ignore") + "-" + digest
    return name


def save_hydra_files(job: Job, run_dir: Path) -> None:
    """``run_dir/.hydra``: the composed config, Hydra's node and the overrides, as Hydra writes them."""
    from omegaconf import OmegaConf

    out = run_dir / ".hydra"
    out.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(job.cfg, out / "config.yaml")
    OmegaConf.save(job.hydra, out / "hydra.yaml")
    OmegaConf.save(OmegaConf.create(list(job.overrides)), out / "overrides.yaml")


def configure_logging(job: Job) -> None:
    """Python logging as Hydra's job logging config says (conf/config.yaml: to stdout)."""
    from hydra.core.utils import configure_log

    configure_log(job.hydra.job_logging, job.hydra.verbose)
