"""``problem=searcher_settings``: a searcher's settings as a search problem ("tuning the tuner").

Willemsen, van Nieuwpoort and van Werkhoven, "Tuning the Tuner" (arXiv 2509.26300) tune Kernel
Tuner's strategies by replaying recorded tables; here the same is an ordinary searchlab problem,
so any searcher can search it and records, resume, caches, progress and plots come for free
(issue 23, item 2).

- Configurations: the settings of ``problem.searcher``, one knob per option its constructor marks
  :class:`~searchlab.searchers.Tunable` (``problem.options`` picks a subset). Integer ranges are
  integer knobs (log-scale where marked), choices are ordinal (numbers) or categorical knobs, and a
  float range is a grid of values (searchlab.searchers._tunable explains the deviation).
- Objective (maximised): the searcher's score on ``problem.train`` (tables) x ``problem.seeds``
  seeds at ``problem.budget`` evaluations. ``problem.score=fraction`` (default): per table, the mean
  over seeds of the mean fraction of the optimum over the budget's evaluations; then the mean over
  tables. ``problem.score=methodology``: Kernel Tuner's methodology score per table
  (searchlab.study.analysis.methodology), averaged over tables as that package averages search spaces.
- Each evaluation's inner replays (table x seed) are Ray tasks, in chunks of several replays per task
  (``_train.chunks``), when Ray is running in this process
  (the run's executor is ``ray``: evaluations run in Ray actors, which fan their replays out over
  the cluster, a joined one included); otherwise they run one after another in process.
- ``problem.train`` may also name live DFT sizes (``dft:N``, issue 38): plans measured once into a
  shared ``problem.cache`` and scored against DP's best (searchlab.tuning._live); they replay in
  process.
- Settings the searcher's constructor refuses (e.g. ``T_min >= T``) are ``FAILED(invalid)``.

The best configuration is printed as ``searcher=NAME searcher.K=V ...`` overrides
(``describe_config``). ``summary.json`` holds the score of the searcher's defaults on the same
training set, the search's best (``search_best_overrides``) and the recommendation
(``tuned_overrides``): the search's best where it scores above the defaults, else the defaults
(``tuned_is_default``), since tuned settings are worth recommending only where they beat the
defaults, and only on spaces they were not tuned on (docs/tuning.md).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchlab.core.problem import FinalizeContext, Problem
from searchlab.core.records import Config, Direction, FailureMode, Measurement
from searchlab.core.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError, EvaluationError
from searchlab.searchers._schema import option_defaults
from searchlab.searchers._tunable import Tunable, tunable_ranges
from searchlab.tuning._live import LiveCache, LiveTarget, is_live
from searchlab.tuning._train import SCORES, chunks, replay, replay_many, train_table

if TYPE_CHECKING:
    from searchlab.searchers import Searcher


def knob(name: str, t: Tunable) -> IntKnob | OrdinalKnob | CategoricalKnob:
    """The knob that explores one Tunable range."""
    if t.kind == "int":
        assert t.low is not None and t.high is not None
        return IntKnob(name, int(t.low), int(t.high), log=t.log)
    values = t.values()
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return OrdinalKnob(name, values) if numeric else CategoricalKnob(name, values)


def _label(path: str) -> str:
    stem = Path(path).name.removesuffix(".gz").removesuffix(".json")
    return re.sub(r"\W", "_", stem) or "table"


def _ray_running() -> bool:
    import sys

    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


class SearcherSettings(Problem):
    """A searcher's settings, scored by replaying it on training tables (module docstring)."""

    name = "searcher_settings"
    direction = Direction.MAXIMIZE
    objective_name = "score"
    deterministic = True

    def __init__(self, searcher: str = "???", train: Sequence[str] = (), seeds: int = 5, budget: int = 220,
                 score: str = "fraction", options: Sequence[str] = (), cache: str = "") -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            searcher: the registered searcher whose settings are tuned
            train: training tables (KT caches, T4 files, our tables, exhaustive runs) and live specs dft:N
            cache: JSON file where live specs' plans are measured once and kept (empty: in memory only)
            seeds: inner replays per table (seeds 0..N-1)
            budget: evaluations of each inner replay
            score: fraction (mean fraction of the optimum over the budget) | methodology (Kernel Tuner's)
            options: tune only these tunable options (empty: all of them)
        """
        if not searcher or searcher == "???":
            raise ConfigError("problem=searcher_settings needs problem.searcher=NAME (a registered searcher)")
        if searcher in ("exhaustive",):
            raise ConfigError(f"problem.searcher={searcher}: nothing to tune")
        cls = registry_class(searcher)  # ConfigError names the registered ones
        ranges = tunable_ranges(cls)
        if not ranges:
            raise ConfigError(f"problem.searcher={searcher}: it declares no tunable settings (mark options with "
                              "Annotated[..., Tunable(...)] in its constructor; docs/tuning.md)")
        unknown = sorted(set(options) - set(ranges))
        if unknown:
            raise ConfigError(f"problem.options={list(options)}: {unknown} are not tunable settings of {searcher} "
                              f"(tunable: {sorted(ranges)})")
        self.ranges = {k: v for k, v in ranges.items() if not options or k in options}
        _check_counts(seeds, budget, score)
        paths = [str(Path(p).expanduser().resolve()) for p in train if not is_live(str(p))]
        specs = [str(p) for p in train if is_live(str(p))]
        if not paths and not specs:
            raise ConfigError("problem.train=[...]: give at least one training table or live spec (dft:N)")
        if len(set(paths)) != len(paths) or len(set(specs)) != len(specs):
            raise ConfigError(f"problem.train={list(train)}: a table is named twice")
        if specs and score != "fraction":
            raise ConfigError(f"problem.score={score}: live specs ({specs[0]}) are scored by fraction only "
                              "(the methodology score needs every value of the space)")
        self.cache = LiveCache(cache or None)
        self.live = {spec: LiveTarget(spec, self.cache) for spec in specs}
        for spec, target in self.live.items():
            reason = cls.incompatibility(target.space)
            if reason:
                raise ConfigError(f"problem.train: {spec!r}: {reason}")
        self.tables = {p: train_table(p) for p in paths}
        for p, table in self.tables.items():
            reason = cls.incompatibility(table.space)
            if reason:
                raise ConfigError(f"problem.train: {p!r}: {reason}")
            if score == "methodology":  # its range and baseline depend on the table only: refuse before any run
                SCORES[score](table, [[loss_of_best(table)] * int(budget)])
        super().__init__()
        self.searcher, self.seeds, self.budget, self.score = searcher, int(seeds), int(budget), score
        self.objective_name = "score" if score == "fraction" else "kt_score"
        self._space = KnobSpace(tuple(knob(n, t) for n, t in self.ranges.items()))

    @property
    def space(self) -> KnobSpace:
        return self._space

    def describe_config(self, config: Config) -> str:
        return " ".join(overrides(self.searcher, config))

    def fingerprint_params(self) -> Mapping[str, Any]:
        files = [(p, Path(p).stat().st_size if Path(p).is_file() else len(t.rows)) for p, t in self.tables.items()]
        return {"searcher": self.searcher, "train": files, "live": sorted(self.live), "seeds": self.seeds,
                "budget": self.budget, "score": self.score, "options": sorted(self.ranges)}

    def evaluate(self, config: Config) -> Measurement:
        return self.score_settings(dict(config))

    def score_settings(self, settings: Mapping[str, Any]) -> Measurement:
        """The score of ``settings`` (the searcher's defaults for options not given)."""
        started = time.perf_counter()
        jobs = [(p, s) for p in self.tables for s in range(self.seeds)]
        parallel = _ray_running() and len(jobs) > 1
        curves = self._run(settings, jobs, parallel)
        per_table = {}
        for p, table in self.tables.items():
            mine = [c for (q, _), c in zip(jobs, curves) if q == p]
            per_table[_label(p)] = SCORES[self.score](table, mine)
        measured = self.cache.measured
        for spec, target in self.live.items():  # in process, one at a time (module docstring of _live)
            per_table[_label(spec)] = target.score(self._run_live(target, settings))
        self.cache.save()
        value = sum(per_table.values()) / len(per_table)
        wall = time.perf_counter() - started
        extra = {"replays": len(jobs) + len(self.live) * self.seeds, "budget": self.budget,
                 "inner": "ray tasks" if parallel else "in process", "plans_measured": self.cache.measured - measured}
        return Measurement.ok(value, sensors={f"score_{k}": v for k, v in per_table.items()}, run_s=wall,
                              charged_s=wall, extra=extra)

    def _run(self, settings: Mapping[str, Any], jobs: list[tuple[str, int]], parallel: bool) -> list[list[float]]:
        try:
            if parallel:
                return self._run_ray(settings, jobs)
            return [replay(self.searcher, settings, p, s, self.budget) for p, s in jobs]
        except ConfigError as exc:  # the constructor refused these settings
            raise EvaluationError(FailureMode.INVALID, f"{self.searcher} refuses {dict(settings)}: {exc}") from None

    def _run_live(self, target: LiveTarget, settings: Mapping[str, Any]) -> list[list[float]]:
        try:
            return [target.replay(self.searcher, settings, s, self.budget) for s in range(self.seeds)]
        except ConfigError as exc:  # the constructor refused these settings
            raise EvaluationError(FailureMode.INVALID, f"{self.searcher} refuses {dict(settings)}: {exc}") from None

    def _run_ray(self, settings: Mapping[str, Any], jobs: list[tuple[str, int]]) -> list[list[float]]:
        """The replays in chunks, one Ray task per chunk (``_train.chunks``: about two per CPU of
        the cluster), results put back in ``jobs``' order."""
        import ray

        resources: Any = ray.cluster_resources  # untyped in Ray
        parts = chunks(jobs, int(resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_retries=0)(replay_many)
        refs = [remote.remote(self.searcher, dict(settings), part, self.budget) for part in parts]
        try:
            curves = {job: curve for part, got in zip(parts, ray.get(refs)) for job, curve in zip(part, got)}
            return [curves[job] for job in jobs]
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None) or exc
            if isinstance(cause, ConfigError):
                raise cause from None
            raise

    def finalize(self, ctx: FinalizeContext) -> Mapping[str, Any]:
        out: dict[str, Any] = {"tuned_searcher": self.searcher}
        defaults = {k: v for k, v in option_defaults(registry_class(self.searcher)).items() if k in self.ranges}
        out["default_settings"] = defaults
        try:
            out["default_score"] = self.score_settings(defaults).objective
        except EvaluationError as exc:
            out["default_score"] = None
            out["default_score_error"] = exc.message
        if ctx.best is not None:
            out |= recommendation(self.searcher, ctx.best.config, ctx.best.objective, defaults, out["default_score"])
        return out


def recommendation(searcher: str, best: Mapping[str, Any], best_score: float | None, defaults: Mapping[str, Any],
                   default_score: float | None) -> dict[str, Any]:
    """The settings to recommend: the search's best only where it scores above the defaults on
    the training set, else the defaults themselves ("never worse than doing nothing"; a
    meta-search need not visit the defaults, and in the tuned_peers study 6 of 42 folds ended
    at or below them). The search's best is kept either way."""
    out: dict[str, Any] = {"search_best_overrides": overrides(searcher, best), "search_best_score": best_score}
    keep_defaults = default_score is not None and (best_score is None or best_score <= default_score)
    out["tuned_is_default"] = keep_defaults
    out["tuned_overrides"] = overrides(searcher, defaults if keep_defaults else best)
    out["tuned_score"] = default_score if keep_defaults else best_score
    return out


def loss_of_best(table: Any) -> float:
    from searchlab.core.records import loss

    best = table.best()
    return loss(best[1], table.direction)


def registry_class(name: str) -> type[Searcher]:
    from searchlab import registry
    from searchlab.searchers import searcher_class

    if name not in registry.searchers():
        raise ConfigError(f"problem.searcher={name}: no such searcher is registered "
                          f"(available: {', '.join(sorted(registry.searchers()))})")
    return searcher_class(name, f"problem.searcher={name}")


def overrides(searcher: str, settings: Mapping[str, Any]) -> list[str]:
    """``searcher=NAME searcher.K=V ...``: the settings as command-line overrides."""
    return [f"searcher={searcher}", *(f"searcher.{k}={v}" for k, v in settings.items())]


def _check_counts(seeds: Any, budget: Any, score: str) -> None:
    for option, value in (("seeds", seeds), ("budget", budget)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"problem.{option}={value!r}: must be a positive integer")
    if score not in SCORES:
        raise ConfigError(f"problem.score={score!r}: must be one of {sorted(SCORES)}")
