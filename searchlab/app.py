"""One run from a composed config: validate everything, then start workers, record, search.

Every check that can refuse a run (budget values, unknown options, an incompatible
problem/searcher pair, an executor that cannot place its workers) happens before
``results.db`` is created, so bad input leaves no half-made records behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from searchlab.confirm import ConfirmConfig, confirm_after_search
from searchlab.errors import ConfigError, IncompatibleError, SearchlabError
from searchlab.execution import Executor, SerialExecutor, build_problem
from searchlab.loop import Budget, SearchLoop
from searchlab.problem import FinalizeContext, Problem
from searchlab.progress import ProgressReporter
from searchlab.searchers import Searcher
from searchlab.store import RunStore, package_versions
from searchlab.summary import build_summary, format_summary, write_json

RESUMABLE_PREFIXES = ("budget.", "executor", "progress", "resume", "cache", "hydra.", "confirm.")


def _instantiate(node: DictConfig, what: str, **kwargs: Any) -> Any:
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        # Partial first: runtime objects (a space is a dataclass) must not be merged into the config.
        factory = instantiate(node, _partial_=True, _convert_="all")
        return factory(**kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, SearchlabError):
            raise cause from None
        raise ConfigError(f"{what} {node.get('_target_')!r} could not be built: {cause or exc}") from None
    except TypeError as exc:  # an option the class does not take
        if isinstance(exc, SearchlabError):
            raise
        raise ConfigError(f"{what} {node.get('_target_')!r} could not be built: {exc}") from None


def make_searcher(node: DictConfig, problem: Problem, seed: int, name: str) -> Searcher:
    from hydra.utils import get_class

    try:
        cls = get_class(str(node["_target_"]))
    except Exception as exc:
        raise ConfigError(f"searcher={name}: target {node.get('_target_')!r} cannot be imported ({exc})") from None
    if not (isinstance(cls, type) and issubclass(cls, Searcher)):
        raise ConfigError(f"searcher={name}: {node['_target_']!r} is not a searchlab Searcher")
    reason = cls.incompatibility(problem.space, problem.capabilities)
    if reason:
        raise IncompatibleError(f"problem={problem.name} searcher={name} is not a valid pair: {reason}")
    searcher: Searcher = _instantiate(node, f"searcher={name}", space=problem.space,
                                      direction=problem.direction, seed=seed)
    return searcher


def _resume_config(cfg: DictConfig, overrides: Sequence[str]) -> tuple[DictConfig, Path]:
    """The stored config of ``cfg.resume``, with only budget/executor/progress changes."""
    run_dir = Path(str(cfg.resume))
    from searchlab.store import read_run

    info, _ = read_run(run_dir)
    stored = OmegaConf.create(info["config"])
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
    for key in ("budget", "executor", "progress", "cache", "confirm"):
        stored[key] = cfg[key] if any(o.lstrip("+~").startswith(key) for o in overrides) else stored.get(key)
    stored.resume = str(run_dir)
    return stored, run_dir


def execute(cfg: DictConfig | Mapping[str, Any], run_dir: str | Path, *, names: tuple[str, str] | None = None,
            overrides: Sequence[str] = (), hydra_dir: str = "", quiet: bool = False) -> dict[str, Any]:
    """Run one search as configured; returns the summary also written to summary.json."""
    cfg = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    resuming = bool(cfg.get("resume"))
    if resuming:
        cfg, run_dir = _resume_config(cfg, overrides)
    run_dir = Path(run_dir)
    budget = Budget(**OmegaConf.to_container(cfg.budget, resolve=True))  # type: ignore[arg-type]
    confirm = _confirm_options(cfg)
    _seed_replay_noise(cfg)
    problem = build_problem(cfg.problem)
    problem_name, searcher_name = names or (problem.name, _searcher_name(cfg.searcher))
    searcher = make_searcher(cfg.searcher, problem, int(cfg.seed), searcher_name)
    progress = ProgressReporter(str(cfg.get("progress", "auto")), problem.objective_name)
    executor: Executor = _instantiate(cfg.executor, "executor")
    started = time.time()
    store: RunStore | None = None
    try:
        # In process the problem built above is used as is; workers elsewhere build their own from the config.
        source = problem if isinstance(executor, SerialExecutor) else OmegaConf.to_container(cfg.problem, resolve=True)
        workers = executor.start(source)  # type: ignore[arg-type]
        devices = [dict(w.device.to_dict(), worker=w.name) for w in workers]
        fingerprint = problem.fingerprint([w.device.name for w in workers])
        if resuming:
            store = RunStore.open(run_dir, hydra_dir)
            prior = store.results()
            for result in prior:
                searcher.replay(result)
        else:
            store = RunStore.create(run_dir, {
                "name": cfg.get("name"), "problem": problem_name, "searcher": searcher_name,
                "seed": int(cfg.seed), "fingerprint": fingerprint, "direction": problem.direction.value,
                "objective_name": problem.objective_name, "known_optimum": _optimum(problem),
                "config": OmegaConf.to_container(cfg, resolve=True), "space": problem.space.describe(),
                "versions": package_versions(), "devices": devices,
            }, hydra_dir)
            prior = []
        cache = None
        if cfg.get("cache"):
            from searchlab.cache import SQLiteCache

            cache = SQLiteCache(str(cfg.cache), fingerprint)
        loop = SearchLoop(searcher, executor, budget, space=problem.space, store=store, cache=cache,
                          progress=progress, prior=prior)
        reason = loop.run()
        progress.close()
        results = loop.state.results
        confirmed = _confirm(executor, store, results, problem, confirm, reason.value, resuming)
        report = problem.finalize(FinalizeContext(run_dir, loop.state.best, results, executor.call,
                                                  len(results), time.time() - started))
        summary = build_summary(store.run_info(), results, reason.value, time.time() - started, problem,
                                loop.state.best, dict(report), devices, confirm=confirmed)
        write_json(run_dir / "summary.json", summary)
        if cfg.get("plot", True):
            _plot(run_dir, summary, results)
        store.finish(reason.value, "interrupted" if reason.value == "interrupted" else "finished", devices)
        if not quiet:
            print(format_summary(summary, run_dir), flush=True)
        return summary
    finally:
        progress.close()
        executor.close()
        if store is not None:
            store.close()


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
             options: ConfirmConfig, reason: str, resuming: bool) -> Mapping[str, Any] | None:
    """The run-end confirm phase (searchlab.confirm); skipped when the run was interrupted."""
    if reason == "interrupted":
        return None
    prior = store.confirmations() if resuming else []
    return confirm_after_search(executor, results, prior, problem.direction, options, problem.noisy, store)


def _searcher_name(node: DictConfig) -> str:
    """The searcher's public name (its class's ``name``), for runs started without the CLI."""
    from hydra.utils import get_class

    try:
        cls: Any = get_class(str(node["_target_"]))
        return str(cls.name)
    except Exception:  # make_searcher reports a bad target properly
        return str(node.get("_target_", "searcher")).rsplit(".", 1)[-1]


def _plot(run_dir: Path, summary: Mapping[str, Any], results: Sequence[Any]) -> None:
    """best_so_far.png beside summary.json (searchlab.plot); a plot must never fail a finished run."""
    try:
        from searchlab.plot import plot_run

        plot_run(run_dir, summary, results)
    except Exception as exc:
        print(f"searchlab: warning: no best_so_far.png ({type(exc).__name__}: {exc})", flush=True)


def _optimum(problem: Problem) -> float | None:
    try:
        return problem.known_optimum
    except Exception:
        return None


def dump_config(cfg: DictConfig) -> str:
    return json.dumps(OmegaConf.to_container(cfg, resolve=True), indent=2, default=str)


