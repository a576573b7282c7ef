"""Prepare a run from a composed config: every check that can refuse it, nothing started or written.

Every check that can refuse a run (seed, budget and option values, unknown options, an
incompatible problem/searcher pair, an executor that cannot place its workers, a bad
``cache=``) happens in :func:`prepare`, before ``results.db`` is created, so bad input
leaves no half-made records behind; the CLI runs it before it makes an output directory.
Classes are built only from registered schemas (:mod:`searchlab.recompose`), and a resumed
run's stored config is re-composed through them: records are data.

What :func:`prepare` returns is frozen (:class:`Prepared`); what changes while the run goes
(its store, its loop, its summary) belongs to :class:`searchlab.run.lifecycle.Run`.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from searchlab.core.cache import SQLiteCache
from searchlab.core.groups import REGISTERED, RESUMABLE
from searchlab.core.problem import Problem
from searchlab.core.records import Result
from searchlab.core.threads import cpu_share
from searchlab.errors import ConfigError, SearchlabError
from searchlab.recompose import recompose, registered_class
from searchlab.run.checks import check_run_config
from searchlab.run.confirm import ConfirmConfig
from searchlab.run.execution import AutoExecutor, Executor, build_problem
from searchlab.run.loop import Budget, MeasurementCache, Progress, Recorder
from searchlab.run.progress import ProgressReporter
from searchlab.searchers import Searcher, build_searcher, searcher_class


@dataclass(frozen=True)
class Prepared:
    """A run that passed every check; nothing has been started or written yet.

    ``run_dir`` None: a run in memory (:func:`searchlab.api.optimize`): no ``results.db``,
    no confirm phase, no summary; ``recorder`` (if any) gets every result.
    """

    run_dir: Path | None
    budget: Budget
    problem: Problem
    searcher: Searcher
    executor: Executor
    cfg: DictConfig | None = None
    resuming: bool = False
    names: tuple[str, str] = ("", "")
    progress: Progress | None = None
    cache: MeasurementCache | None = None
    confirm: ConfirmConfig = field(default_factory=lambda: ConfirmConfig(k=0))
    start_executor: bool = True  # False: the caller started it and closes it
    recorder: Recorder | None = None
    prior: tuple[Result, ...] = ()
    plot: bool = True
    inputs: Mapping[str, Any] = field(default_factory=dict)  # what the run read (searchlab.run.inputs)
    changed: str = ""  # a resume's changed inputs that resume_changed=true accepted ('' if none)
    accept_changed: bool = False  # resume_changed=true
    stored_fingerprint: str | None = None  # a resume: the run's recorded problem fingerprint

    def close(self) -> None:
        """Release what was opened while checking (the cache), for a run that will not start."""
        close = getattr(self.cache, "close", None)
        if callable(close):
            close()


def build_registered(group: str, node: Mapping[str, Any], where: str, **kwargs: Any) -> Any:
    """An object of a registered class from the plain values of its config (no nested instantiation)."""
    cls = registered_class(group, node.get("_target_"), where)
    options = {str(k): v for k, v in node.items() if not str(k).startswith("_")}
    try:
        return cls(**options, **kwargs)
    except SearchlabError:
        raise
    except TypeError as exc:  # an option the class does not take
        raise ConfigError(f"{where} {node.get('_target_')!r} could not be built: {exc}") from None


def make_searcher(node: Mapping[str, Any], problem: Problem, seed: int, name: str | None = None) -> Searcher:
    """The run's searcher, through the one door (:func:`searchlab.searchers.build_searcher`): its class looked
    up once, the problem/searcher pair checked (a refusal names searchers that do fit)."""
    raw = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
    assert isinstance(raw, dict)
    return build_searcher({str(k): v for k, v in raw.items()}, problem.space, direction=problem.direction, seed=seed,
                          capabilities=problem.capabilities, where=f"searcher={name}" if name else None,
                          refusal=lambda who, reason: f"problem={problem.name} {who} is not a valid pair: {reason}; "
                                                      f"{_fitting(problem)}")


def _fitting(problem: Problem, shown: int = 5) -> str:
    """A few registered searchers that do fit ``problem`` (issue 35: an incompatible pair names them)."""
    from searchlab import registry

    fit = []
    for entry_name in sorted(registry.searchers()):
        try:
            if searcher_class(entry_name).incompatibility(problem.space, problem.capabilities) is None:
                fit.append(entry_name)
        except Exception:  # a plugin that cannot be loaded is not a suggestion
            continue
    if not fit:
        return "no registered searcher fits it"
    more = f", ... ({len(fit)} in all)" if len(fit) > shown else ""
    return f"searchers that fit: {', '.join(fit[:shown])}{more}"


def _stored_config(run_dir: Path) -> tuple[DictConfig, Mapping[str, Any]]:
    """The config stored in ``run_dir/results.db``, re-composed through the registered schemas."""
    from searchlab.core.store import read_run

    info, _ = read_run(run_dir)
    where = f"resume={run_dir}: {run_dir / 'results.db'}"
    stored_plain = info.get("config")
    if not isinstance(stored_plain, dict):
        raise ConfigError(f"{where} stores no run config")
    for group in REGISTERED:
        stored_plain[group] = recompose(group, stored_plain.get(group), where)
    return OmegaConf.create(stored_plain), info


def _changes(item: str) -> str:
    return item.lstrip("+~").partition("=")[0]


def resume_config(cfg: DictConfig, overrides: Sequence[str]) -> tuple[DictConfig, Path, Mapping[str, Any]]:
    """The stored config of ``cfg.resume`` with only the changes a resume may make
    (:data:`searchlab.core.groups.RESUMABLE`: how the run goes, not what it searches), and the run's
    record (refused at once if another process writes the run: searchlab.core.runlock)."""
    from searchlab.core.runlock import check_free

    run_dir = Path(str(cfg.resume)).expanduser().resolve()  # a resumed run prints absolute paths, as a fresh one
    check_free(run_dir)
    stored, info = _stored_config(run_dir)
    allowed = ", ".join(f"{name}.*" for name in RESUMABLE)
    for item in overrides:
        key, value = _changes(item), item.partition("=")[2]
        if key.split(".")[0] in (*RESUMABLE, "resume", "resume_changed", "hydra"):
            continue
        if key in ("problem", "searcher"):
            if value != info[key]:
                raise ConfigError(f"resume={run_dir}: {key}={value} differs from the run's {key}={info[key]}")
            continue
        if OmegaConf.select(stored, key) != OmegaConf.select(cfg, key):
            raise ConfigError(f"resume={run_dir}: {key}={value} differs from the run's "
                              f"{OmegaConf.select(stored, key)!r}; only {allowed} may change")
    for key in RESUMABLE:
        changed = any(_changes(o).split(".")[0] == key for o in overrides)
        stored[key] = cfg[key] if changed else stored.get(key)
    stored.resume = str(run_dir)
    return stored, run_dir, info


def seeded_options(node: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The problem options a run of ``seed`` builds the problem with (``Problem.run_options``, e.g. a
    replay's ``noise_seed: null`` becomes the seed): what the stored config says ran."""
    options = {str(k): v for k, v in node.items()}
    cls = registered_class("problem", options.get("_target_"), "problem")
    return dict(cls.run_options(options, int(seed))) if issubclass(cls, Problem) else options


def _seeded(cfg: DictConfig) -> DictConfig:
    """``cfg`` with the problem's options seeded (:func:`seeded_options`)."""
    node = OmegaConf.to_container(cfg.problem, resolve=True)
    assert isinstance(node, dict)
    options = {str(k): v for k, v in node.items()}
    changed = {k: v for k, v in seeded_options(options, int(cfg.seed)).items() if options.get(k) != v}
    if not changed:
        return cfg
    cfg = copy.deepcopy(cfg)
    for key, value in changed.items():
        cfg.problem[key] = value
    return cfg


@dataclass(frozen=True)
class Parts:
    """What a search is made of, built from a run config (:func:`build_parts`): nothing started."""

    budget: Budget
    problem: Problem
    searcher: Searcher
    executor: Executor
    cache: SQLiteCache | None
    names: tuple[str, str]


def build_parts(plain: Mapping[str, Any], *, problem: Problem | None = None,
                names: tuple[str, str] | None = None) -> Parts:
    """The first step of every search (issue 45, item 4): the parts, from a checked, seeded run config.

    The command line's runs (:func:`prepare`, which then opens the run directory), a study's in-process
    replays (searchlab.study) and the settings problem's inner replays (searchlab.tuning) all build here,
    so a searcher is made, given its prior and driven the same way on every path. ``problem``: one built
    already (a replayed table parsed once per process, or one built while noting the files it reads)."""
    if problem is None:
        problem = build_problem(seeded_options(plain["problem"], int(plain["seed"])))
    searcher = make_searcher(plain["searcher"], problem, int(plain["seed"]), names[1] if names else None)
    problem_name, searcher_name = names or (problem.name, searcher.name)
    give_prior(searcher, plain.get("prior"), problem, searcher_name)
    executor: Executor = build_registered("executor", plain["executor"], "executor")
    if isinstance(executor, AutoExecutor):  # executor=auto: serial or Ray, by what the problem needs
        executor = executor.resolve(problem)
    cache = SQLiteCache(str(plain["cache"])) if plain.get("cache") else None
    return Parts(Budget(**plain["budget"]), problem, searcher, executor, cache, (problem_name, searcher_name))


def prepare(cfg: DictConfig | Mapping[str, Any], run_dir: str | Path, *, names: tuple[str, str] | None = None,
            overrides: Sequence[str] = ()) -> Prepared:
    """Every check that can refuse the run, in the order a user would fix them; then the parts
    (:func:`build_parts`) for the run directory ``run_dir`` (the second step: :class:`searchlab.run.lifecycle.Run`
    opens it)."""
    from searchlab.core import files
    from searchlab.run.inputs import check_resume, run_inputs

    cfg = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    resuming, accept = bool(cfg.get("resume")), bool(cfg.get("resume_changed"))
    info: Mapping[str, Any] = {}
    if resuming:
        cfg, run_dir, info = resume_config(cfg, overrides)
    plain = _plain(cfg)
    check_run_config(plain)
    cpu_share()  # a bad SEARCHLAB_THREADS is refused here, before anything is written (docs/threads.md)
    files.max_bytes()  # likewise a bad SEARCHLAB_MAX_READ_MB (docs/security.md)
    Budget(**plain["budget"])  # a bad budget is refused before the problem is built
    confirm = ConfirmConfig(**(plain.get("confirm") or {}))  # runs recorded before confirm= get the defaults
    cfg = _seeded(cfg)
    with files.noting() as read:  # the files the problem reads, by content (a resume checks them)
        problem = build_problem(cfg.problem)
    inputs = run_inputs(read, plain.get("prior"))
    changed = check_resume(Path(run_dir), info, inputs, problem, accept) if resuming else ""
    parts = build_parts(_plain(cfg), problem=problem, names=names)
    progress = ProgressReporter(str(plain.get("progress") or "auto"), problem.objective_name,
                                space_size=_space_size(problem))
    return Prepared(Path(run_dir), parts.budget, problem, parts.searcher, parts.executor, cfg=cfg, resuming=resuming,
                    names=parts.names, progress=progress, cache=parts.cache, confirm=confirm,
                    plot=bool(plain.get("plot", True)), inputs=inputs, changed=changed, accept_changed=accept,
                    stored_fingerprint=info.get("fingerprint"))


def _plain(cfg: DictConfig) -> dict[str, Any]:
    raw = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(raw, dict)
    return {str(k): v for k, v in raw.items()}


def give_prior(searcher: Searcher, paths: Any, problem: Problem, name: str) -> None:
    """``prior=``: loaded, matched to the space and handed to the searcher once (searchlab.run.priors)."""
    from searchlab.run.priors import give_prior, load_prior

    note = give_prior(searcher, load_prior(paths, problem.space, problem.direction), name)
    if note:
        print(f"searchlab: note: {note}", file=sys.stderr, flush=True)


def _space_size(problem: Any) -> int | None:
    """The space's size for the progress ETA (None when a space cannot count itself)."""
    try:
        size = problem.space.size()
    except Exception:
        return None
    return size if isinstance(size, int) else None
