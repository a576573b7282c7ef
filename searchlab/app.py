"""One run from a composed config: validate everything, then start workers, record, search.

Every check that can refuse a run (seed, budget and option values, unknown options, an
incompatible problem/searcher pair, an executor that cannot place its workers, a bad
``cache=``) happens in :func:`prepare`, before ``results.db`` is created, so bad input
leaves no half-made records behind; the CLI runs it before Hydra makes an output
directory. Classes are built only from registered schemas (:mod:`searchlab.recompose`),
and a resumed run's stored config is re-composed through them: records are data.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from searchlab.cache import SQLiteCache
from searchlab.checks import check_run_config
from searchlab.confirm import ConfirmConfig, confirm_after_search
from searchlab.core.problem import FinalizeContext, Problem
from searchlab.errors import ConfigError, IncompatibleError, SearchlabError, WriteError
from searchlab.execution import Executor, SerialExecutor, build_problem
from searchlab.loop import Budget, SearchLoop, StopReason
from searchlab.progress import ProgressReporter
from searchlab.recompose import GROUPS, recompose, registered_class
from searchlab.searchers import Searcher
from searchlab.signals import interruptible
from searchlab.store import RunStore, is_disk_full, package_versions
from searchlab.summary import build_summary, format_summary, write_json
from searchlab.threads import cpu_share

RESUMABLE_PREFIXES = ("budget.", "executor", "progress", "resume", "cache", "confirm", "plot", "hydra.")


def _build(group: str, node: Mapping[str, Any], where: str, **kwargs: Any) -> Any:
    """An object of a registered class from the plain values of its config (no nested instantiation)."""
    cls = registered_class(group, node.get("_target_"), where)
    options = {str(k): v for k, v in node.items() if not str(k).startswith("_")}
    try:
        return cls(**options, **kwargs)
    except SearchlabError:
        raise
    except TypeError as exc:  # an option the class does not take
        raise ConfigError(f"{where} {node.get('_target_')!r} could not be built: {exc}") from None


def make_searcher(node: Mapping[str, Any], problem: Problem, seed: int, name: str) -> Searcher:
    raw = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
    assert isinstance(raw, dict)
    plain = {str(k): v for k, v in raw.items()}
    cls = registered_class("searcher", plain.get("_target_"), f"searcher={name}")
    if not (isinstance(cls, type) and issubclass(cls, Searcher)):
        raise ConfigError(f"searcher={name}: {plain['_target_']!r} is not a searchlab Searcher")
    reason = cls.incompatibility(problem.space, problem.capabilities)
    if reason:
        raise IncompatibleError(f"problem={problem.name} searcher={name} is not a valid pair: {reason}")
    searcher: Searcher = _build("searcher", plain, f"searcher={name}", space=problem.space,
                                direction=problem.direction, seed=seed)
    return searcher


def _resume_config(cfg: DictConfig, overrides: Sequence[str]) -> tuple[DictConfig, Path]:
    """The stored config of ``cfg.resume``, re-composed through the registered schemas, with
    only budget/executor/progress/cache changes."""
    run_dir = Path(str(cfg.resume))
    from searchlab.store import read_run

    info, _ = read_run(run_dir)
    where = f"resume={run_dir}: {run_dir / 'results.db'}"
    stored_plain = info.get("config")
    if not isinstance(stored_plain, dict):
        raise ConfigError(f"{where} stores no run config")
    for group in GROUPS:
        stored_plain[group] = recompose(group, stored_plain.get(group), where)
    stored = OmegaConf.create(stored_plain)
    for item in overrides:
        key, _, value = item.lstrip("+~").partition("=")
        if key.startswith(RESUMABLE_PREFIXES):
            continue
        if key in ("problem", "searcher"):
            if value != info[key]:
                raise ConfigError(f"resume={run_dir}: {key}={value} differs from the run's {key}={info[key]}")
            continue
        if OmegaConf.select(stored, key) != OmegaConf.select(cfg, key):
            raise ConfigError(f"resume={run_dir}: {key}={value} differs from the run's "
                              f"{OmegaConf.select(stored, key)!r}; only budget.*, executor.*, progress may change")
    for key in ("budget", "executor", "progress", "cache", "confirm", "plot"):
        stored[key] = cfg[key] if any(o.lstrip("+~").startswith(key) for o in overrides) else stored.get(key)
    stored.resume = str(run_dir)
    return stored, run_dir


@dataclass
class Prepared:
    """A run that passed every check; nothing has been started or written yet."""

    cfg: DictConfig
    run_dir: Path
    resuming: bool
    names: tuple[str, str]
    budget: Budget
    problem: Problem
    searcher: Searcher
    progress: ProgressReporter
    executor: Executor
    cache: SQLiteCache | None
    confirm: ConfirmConfig
    store: RunStore | None = None  # set once results.db is created or opened

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def prepare(cfg: DictConfig | Mapping[str, Any], run_dir: str | Path, *, names: tuple[str, str] | None = None,
            overrides: Sequence[str] = ()) -> Prepared:
    """Every check that can refuse the run, in the order a user would fix them."""
    cfg = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    resuming = bool(cfg.get("resume"))
    if resuming:
        cfg, run_dir = _resume_config(cfg, overrides)
    raw = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(raw, dict)
    plain = {str(k): v for k, v in raw.items()}
    check_run_config(plain)
    cpu_share()  # a bad SEARCHLAB_THREADS is refused here, before anything is written (docs/threads.md)
    budget = Budget(**plain["budget"])
    confirm = _confirm_options(cfg)
    _seed_replay_noise(cfg)
    problem = build_problem(cfg.problem)
    problem_name, searcher_name = names or (problem.name, _searcher_name(plain["searcher"]))
    searcher = make_searcher(plain["searcher"], problem, int(plain["seed"]), searcher_name)
    _give_prior(searcher, plain.get("prior"), problem, searcher_name)
    progress = ProgressReporter(str(plain.get("progress") or "auto"), problem.objective_name)
    executor: Executor = _build("executor", plain["executor"], "executor")
    cache = SQLiteCache(str(plain["cache"])) if plain.get("cache") else None
    return Prepared(cfg, Path(run_dir), resuming, (problem_name, searcher_name), budget, problem, searcher,
                    progress, executor, cache, confirm)


def execute(cfg: DictConfig | Mapping[str, Any], run_dir: str | Path, *, names: tuple[str, str] | None = None,
            overrides: Sequence[str] = (), hydra_dir: str = "", quiet: bool = False,
            prepared: Prepared | None = None) -> dict[str, Any]:
    """Run one search as configured; returns the summary also written to summary.json.

    SIGINT/SIGTERM stop it cleanly (in-flight work abandoned, status 'interrupted', summary
    written) and are then re-raised as :class:`searchlab.signals.Interrupted` /
    ``KeyboardInterrupt``, so callers (the CLI: exit 130/143) and scripts see them.
    """
    p = prepared or prepare(cfg, run_dir, names=names, overrides=overrides)
    started = time.time()
    try:
        with interruptible() as guard:
            summary, interrupt = _run(p, hydra_dir, started, guard)
        if not quiet:
            print(format_summary(summary, p.run_dir), flush=True)
            for note in summary.get("notes", []):
                print(f"searchlab: note: {note}", flush=True)
            print("searchlab: verdict: " + summary["verdict"].replace("\n", "\n  "), flush=True)
        if interrupt is not None:
            raise interrupt
        return summary
    except WriteError:
        if p.store is not None:
            try:
                p.store.finish("write_failed", "failed")
            except Exception:  # the disk may still be full: the message says what was kept
                pass
        raise
    finally:
        p.progress.close()
        p.executor.close()
        p.close()
        if p.store is not None:
            p.store.close()


def _run(p: Prepared, hydra_dir: str, started: float, guard: Any) -> tuple[dict[str, Any], Any]:
    cfg, problem, executor = p.cfg, p.problem, p.executor
    # In process the problem built above is used as is; workers elsewhere build their own from the config.
    source = problem if isinstance(executor, SerialExecutor) else OmegaConf.to_container(cfg.problem, resolve=True)
    workers = executor.start(source)  # type: ignore[arg-type]
    guard.install()  # after ray.init, whose handlers would print a stack and abort on SIGTERM
    devices = [dict(w.device.to_dict(), worker=w.name) for w in workers]
    fingerprint = problem.fingerprint([w.device.name for w in workers])
    if p.resuming:
        store = p.store = RunStore.open(p.run_dir, hydra_dir)
        prior = store.results()
        for result in prior:
            p.searcher.replay(result)
    else:
        store = p.store = RunStore.create(p.run_dir, {
            "name": cfg.get("name"), "problem": p.names[0], "searcher": p.names[1],
            "seed": int(cfg.seed), "fingerprint": fingerprint, "direction": problem.direction.value,
            "objective_name": problem.objective_name, "known_optimum": _optimum(problem),
            "config": OmegaConf.to_container(cfg, resolve=True), "space": problem.space.describe(),
            "versions": package_versions(), "devices": devices,
        }, hydra_dir)
        prior = []
    store.node_of = executor.node_of  # evaluations.node: where each ran (issue 24)
    if p.cache is not None:
        p.cache.fingerprint = fingerprint
    loop = SearchLoop(p.searcher, executor, p.budget, space=problem.space, store=store, cache=p.cache,
                      progress=p.progress, prior=prior)
    reason = loop.run()
    interrupt = loop.interrupt
    report: Mapping[str, Any] = {}
    confirmed = None
    if interrupt is None and reason is not StopReason.INTERRUPTED:  # first: finalize writes what it recommends
        confirmed = _confirm(executor, store, loop.state.results, problem, p.confirm, p.resuming)
    if interrupt is None:
        try:
            report = problem.finalize(FinalizeContext(p.run_dir, loop.state.best, loop.state.results, executor.call,
                                                      len(loop.state.results), time.time() - started,
                                                      confirm=confirmed, rounds=p.confirm.rounds or 5))
        except KeyboardInterrupt as exc:
            interrupt, reason = exc, StopReason.INTERRUPTED
    guard.hold()
    p.progress.close()
    results = loop.state.results
    summary = build_summary(store.run_info(), results, reason.value, time.time() - started, problem,
                            loop.state.best, dict(report), devices, confirm=confirmed)
    note = _shortfall(p.searcher, reason)
    if note:
        summary["notes"] = [note]
    _write_summary(store, summary)
    if cfg.get("plot", True):
        _plot(p.run_dir, summary, results)
    store.finish(reason.value, "interrupted" if reason is StopReason.INTERRUPTED else "finished", devices)
    return summary, interrupt


def _give_prior(searcher: Searcher, paths: Any, problem: Problem, name: str) -> None:
    """``prior=``: loaded, matched to the space and handed to the searcher once (searchlab.priors)."""
    from searchlab.priors import give_prior, load_prior

    note = give_prior(searcher, load_prior(paths, problem.space, problem.direction), name)
    if note:
        print(f"searchlab: note: {note}", file=sys.stderr, flush=True)


def _confirm_options(cfg: DictConfig) -> ConfirmConfig:
    """``confirm.*`` (runs recorded before the option existed get the defaults)."""
    node = cfg.get("confirm")
    return ConfirmConfig(**(OmegaConf.to_container(node, resolve=True) if node is not None else {}))  # type: ignore[arg-type]


def _seed_replay_noise(cfg: DictConfig) -> None:
    """A replay's ``problem.noise_seed: null`` becomes the run's seed (stored with the config),
    so each seed of a study draws its own replay noise (searchlab.tables)."""
    if "noise_seed" in cfg.problem and cfg.problem.noise_seed is None:
        cfg.problem.noise_seed = int(cfg.seed)


def _confirm(executor: Executor, store: RunStore, results: Sequence[Any], problem: Problem,
             options: ConfirmConfig, resuming: bool) -> Mapping[str, Any] | None:
    """The run-end confirm phase (searchlab.confirm); the caller skips it for interrupted runs."""
    prior = store.confirmations() if resuming else []
    return confirm_after_search(executor, results, prior, problem.direction, options, problem.noisy, store,
                                problem.default_config())


def _plot(run_dir: Path, summary: Mapping[str, Any], results: Sequence[Any]) -> None:
    """best_so_far.png beside summary.json (searchlab.plot); a plot must never fail a finished run."""
    try:
        from searchlab.plot import plot_run

        plot_run(run_dir, summary, results)
    except Exception as exc:
        print(f"searchlab: warning: no best_so_far.png ({type(exc).__name__}: {exc})", flush=True)


def _write_summary(store: RunStore, summary: Mapping[str, Any]) -> None:
    path = store.path.parent / "summary.json"
    try:
        write_json(path, summary)
    except OSError as exc:
        path.with_suffix(".json.tmp").unlink(missing_ok=True)
        raise WriteError(store.write_failure(exc) if is_disk_full(exc) else f"{path} could not be written ({exc}); "
                         f"results.db keeps every evaluation") from None


def _shortfall(searcher: Searcher, reason: StopReason) -> str | None:
    """Why a searcher that is not anytime ended without a result (e.g. DP short of budget)."""
    explain = getattr(searcher, "shortfall", None)
    if reason in (StopReason.EXHAUSTED, StopReason.INTERRUPTED) or not callable(explain):
        return None
    text = explain()
    return str(text) if text else None


def _searcher_name(node: Mapping[str, Any]) -> str:
    """The searcher's public name (its class's ``name``), for runs started without the CLI."""
    try:
        cls: Any = registered_class("searcher", node.get("_target_"), "searcher")
        return str(cls.name)
    except Exception:  # make_searcher reports a bad target properly
        return str(node.get("_target_", "searcher")).rsplit(".", 1)[-1]


def _optimum(problem: Problem) -> float | None:
    try:
        return problem.known_optimum
    except Exception:
        return None


def dump_config(cfg: DictConfig) -> str:
    return json.dumps(OmegaConf.to_container(cfg, resolve=True), indent=2, default=str)
