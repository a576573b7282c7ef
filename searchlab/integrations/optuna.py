"""A searchlab searcher as an Optuna sampler: ``optuna.create_study(sampler=Sampler("auto"))``.

:class:`Sampler` is an ``optuna.samplers.BaseSampler`` (built on first use: ``import searchlab`` never imports Optuna):

- **Relative space.** The parameters every finished trial has (Optuna's ``IntersectionSearchSpace``, as its
  CMA-ES and GP samplers do) become a knob space: ``IntDistribution`` an integer knob (``step``, ``log``);
  a ``FloatDistribution`` with a ``step`` its grid, one without a **fine grid** of ``float_grid`` points
  (default 129, log-spaced for ``log=True``); searchlab's knob searchers are discrete, so a continuous float is
  searched on that grid (not on the continuous support) and the value Optuna records is the grid point;
  ``CategoricalDistribution`` a categorical knob over the choice indices. Until a trial has finished (the
  first) and for parameters outside that space, the independent sampler (``RandomSampler(seed)``) answers.
- **Feedback.** Before each relative sample, every finished trial not yet heard is told: ``COMPLETE`` as its
  value, ``FAIL`` and ``PRUNED`` as failures, a trial that violates its constraints (``constraints_func`` given
  here, or ``trial.set_constraint``) as a failure of mode ``constraint``: ``auto``'s feasibility model learns
  them as it learns failed evaluations. Trials this sampler did not propose (another process's, a resumed
  RDB study's, an enqueued trial's) are replayed into the searcher (``Searcher.replay``).
- **Space changes.** When the intersection changes (define-by-run with conditional parameters), a new
  searcher is built over the new space and every finished trial that fits it is replayed.
- **Closing.** A searcher the sampler replaces (a new space), and every searcher when :meth:`Sampler.close` is
  called or the sampler is garbage-collected, is closed (``Searcher.close``: a Kernel Tuner strategy's thread
  ends); Optuna itself has no end-of-study hook for a sampler.
- **Parallel trials** (``n_jobs>1``, issue 47 item 2): one searcher per study, its pending trials included, behind a
  lock (Optuna's worker threads share the sampler). ``reseed_rng()``, which Optuna calls before every parallel trial,
  reseeds only the independent sampler: it used to drop the searcher with its pending candidates, so parallel
  workers repeated each other's configurations and a trial could be told twice (``DuplicateResultError``).
- **Wide integer ranges** (item 13): a ``log=True`` range of more than ``float_grid`` integers is searched on a grid
  of that many log-spaced integers; a linear one of more than 2**20 values is refused in one line naming the
  alternatives (``log=True``, a ``step``, Optuna's ``TPESampler``), never materialised.

Single-objective studies only (searchlab's searchers optimise one value).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, Direction, FailureMode
from searchlab.core.spaces import MAX_VALUES, CategoricalKnob, IntKnob, Knob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.integrations._driver import Driver, Outcome, nearest
from searchlab.searchers import build_searcher

__all__ = ["knob_of"]  # and Sampler, made on first access (module __getattr__)


def knob_of(name: str, distribution: Any, float_grid: int = 129) -> Knob:
    """The knob that stands for one Optuna distribution (module docstring)."""
    kind = type(distribution).__name__
    if kind == "IntDistribution":
        first, last, step, log = int(distribution.low), int(distribution.high), int(distribution.step or 1), \
            bool(distribution.log)
        count = (last - first) // step + 1
        if log and count > float_grid:  # a grid in log space (Optuna allows log only with step 1)
            grid = np.geomspace(first, last, float_grid)
            return OrdinalKnob(name, tuple(sorted({min(max(round(float(v)), first), last) for v in grid})))
        if count > MAX_VALUES:
            raise ConfigError(f"parameter {name!r}: suggest_int({first}, {last}) has {count} values, more than "
                              f"searchlab's searchers take ({MAX_VALUES}); use log=True, a step of at least "
                              f"{-(-count * step // MAX_VALUES)}, or Optuna's TPESampler")
        return IntKnob(name, first, last, step, log)
    if kind == "FloatDistribution":
        low, high = float(distribution.low), float(distribution.high)
        if distribution.step is not None:
            count = round((high - low) / distribution.step) + 1
            if count > MAX_VALUES:
                raise ConfigError(f"parameter {name!r}: suggest_float step={distribution.step} gives {count} values, "
                                  f"more than searchlab's searchers take ({MAX_VALUES}); use a coarser step, no step "
                                  "(a grid of float_grid points), or Optuna's TPESampler")
            values = [low + i * distribution.step for i in range(count)]
        elif distribution.log:
            values = list(np.geomspace(low, high, float_grid))
        else:
            values = list(np.linspace(low, high, float_grid))
        return OrdinalKnob(name, tuple(dict.fromkeys(float(min(max(v, low), high)) for v in values)))
    if kind == "CategoricalDistribution":
        return CategoricalKnob(name, tuple(range(len(distribution.choices))))
    raise ConfigError(f"parameter {name!r}: Optuna distribution {kind} is not supported")


def _to_knob(knob: Knob, distribution: Any, value: Any) -> Any:
    """An Optuna parameter value as the knob's value (the nearest grid point for a float)."""
    if isinstance(knob, CategoricalKnob):
        return distribution.choices.index(value)
    return nearest(knob, value)


def _from_knob(knob: Knob, distribution: Any, value: Any) -> Any:
    if isinstance(knob, CategoricalKnob):
        return distribution.choices[int(value)]
    return int(value) if type(distribution).__name__ == "IntDistribution" else float(value)


def _outcome(trial: Any, direction: Direction) -> Outcome | None:
    """A finished trial as the searcher hears it (None: not finished)."""
    state = trial.state.name
    if state == "FAIL":
        return Outcome(None, FailureMode.RUNTIME, "the objective raised or returned an invalid value (FAIL)")
    if state == "PRUNED":
        return Outcome(None, FailureMode.RUNTIME, "pruned")
    if state != "COMPLETE":
        return None
    constraints = getattr(trial, "constraints", None) or {}
    values = list(constraints.values()) if isinstance(constraints, Mapping) else list(constraints)
    if any(v > 0 for v in values):
        return Outcome(None, FailureMode.CONSTRAINT, f"constraints violated: {values}")
    value = trial.value
    return Outcome(float(value)) if value is not None and math.isfinite(value) else Outcome(None)


def _fresh_seed() -> int:
    return int(np.random.default_rng().integers(2**31 - 1))


class _Relative:
    """The searcher over one relative search space, and the trials it has heard."""

    def __init__(self, names: Sequence[str], space: Mapping[str, Any], driver: Driver, knobs: Mapping[str, Knob]) -> None:
        self.names, self.space, self.driver, self.knobs = tuple(names), dict(space), driver, dict(knobs)
        self.asked: dict[int, Candidate] = {}  # trial number -> the candidate proposed for it
        self.heard: set[int] = set()

    def fits(self, params: Mapping[str, Any]) -> bool:
        return all(n in params for n in self.names)

    def config_of(self, params: Mapping[str, Any]) -> Config:
        return Config({n: _to_knob(self.knobs[n], self.space[n], params[n]) for n in self.names})

    def hear(self, trial: Any, direction: Direction) -> None:
        outcome = _outcome(trial, direction)
        if outcome is None or trial.number in self.heard:
            return
        self.heard.add(trial.number)
        candidate = self.asked.pop(trial.number, None)
        if candidate is not None and candidate.id in self.driver.searcher.pending:
            self.driver.tell(candidate, outcome)
        elif self.fits(trial.params):
            self.driver.replay(self.config_of(trial.params), outcome)


def _close_all(relatives: dict[str, _Relative]) -> None:
    for relative in list(relatives.values()):
        relative.driver.close()
    relatives.clear()


def _make_class() -> type:
    import optuna
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.search_space import IntersectionSearchSpace
    from optuna.trial import TrialState

    class Sampler(BaseSampler):
        """``Sampler(searcher="auto", seed=0, *, constraints_func=None, float_grid=129, **options)``: any registered
        knob searcher (its options as keyword arguments) as an Optuna sampler (module docstring)."""

        def __init__(self, searcher: str | type = "auto", seed: int | None = 0, *,
                     constraints_func: Callable[[Any], Sequence[float]] | None = None, float_grid: int = 129,
                     **options: Any) -> None:
            if float_grid < 2:
                raise ConfigError(f"float_grid={float_grid!r}: must be an integer >= 2")
            self.searcher, self.options, self.float_grid = searcher, dict(options), int(float_grid)
            self.seed = int(seed) if seed is not None else _fresh_seed()
            self.constraints_func = constraints_func
            self._independent = RandomSampler(seed=seed)
            self._intersection = IntersectionSearchSpace()
            self._relatives: dict[str, _Relative] = {}  # study name -> its searcher: one per study, kept
            self._lock = threading.RLock()  # Optuna's n_jobs threads share this sampler
            weakref.finalize(self, _close_all, self._relatives)  # garbage-collected: the searchers end too

        def close(self) -> None:
            """Close every searcher this sampler holds (module docstring, "Closing"); a later trial builds anew."""
            with self._lock:
                _close_all(self._relatives)

        def infer_relative_search_space(self, study: optuna.Study, trial: Any) -> dict[str, Any]:
            if study._is_multi_objective():
                raise ConfigError("searchlab's Sampler optimises one objective; this study has several")
            with self._lock:
                return dict(self._intersection.calculate(study))

        def sample_relative(self, study: optuna.Study, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
            if not search_space:
                return {}
            with self._lock:
                return self._sample_relative(study, trial, search_space)

        def _sample_relative(self, study: optuna.Study, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
            relative = self._searcher_for(study, search_space)
            direction = self._direction(study)
            states = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)
            for finished in study._get_trials(deepcopy=False, states=states, use_cache=True):
                relative.hear(finished, direction)
            candidate = relative.driver.ask()
            if candidate is None:
                return {}  # the searcher has nothing more to propose: the independent sampler answers
            relative.asked[trial.number] = candidate
            return {n: _from_knob(relative.knobs[n], search_space[n], candidate.config[n]) for n in relative.names}

        def sample_independent(self, study: optuna.Study, trial: Any, param_name: str, param_distribution: Any) -> Any:
            return self._independent.sample_independent(study, trial, param_name, param_distribution)

        def before_trial(self, study: optuna.Study, trial: Any) -> None:
            self._independent.before_trial(study, trial)

        def after_trial(self, study: optuna.Study, trial: Any, state: Any, values: Sequence[float] | None) -> None:
            if self.constraints_func is not None:
                from optuna.samplers._base import _process_constraints_after_trial

                _process_constraints_after_trial(self.constraints_func, study, trial, state)
            self._independent.after_trial(study, trial, state, values)

        def reseed_rng(self) -> None:
            """The independent sampler only: the searcher, its pending trials and its seed are kept (module
            docstring, "Parallel trials")."""
            with self._lock:
                self._independent.reseed_rng()

        @property
        def _relative(self) -> _Relative | None:
            """The searcher of the study used last (tests and docs: one study per sampler is the common case)."""
            return next(reversed(self._relatives.values()), None)

        @staticmethod
        def _direction(study: optuna.Study) -> Direction:
            return Direction.MAXIMIZE if study.direction == optuna.study.StudyDirection.MAXIMIZE else Direction.MINIMIZE

        def _searcher_for(self, study: optuna.Study, search_space: Mapping[str, Any]) -> _Relative:
            names = sorted(search_space)
            known = self._relatives.get(study.study_name)
            if known is not None and known.space == dict(search_space):
                return known
            knobs = {n: knob_of(n, search_space[n], self.float_grid) for n in names}
            space = KnobSpace(tuple(knobs[n] for n in names))
            built = build_searcher(self.searcher, space, seed=self.seed, direction=self._direction(study),
                                   options=self.options)
            old = self._relatives.pop(study.study_name, None)
            if old is not None:
                old.driver.close()
            self._relatives[study.study_name] = _Relative(names, search_space, Driver(built), knobs)
            return self._relatives[study.study_name]

    Sampler.__module__, Sampler.__qualname__ = __name__, "Sampler"  # pickled by reference
    return Sampler


_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """``Sampler`` is made on first access, so that importing this module does not import Optuna."""
    if name == "Sampler":
        if name not in _CLASSES:
            _CLASSES[name] = _make_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
