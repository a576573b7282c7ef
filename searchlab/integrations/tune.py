"""A searchlab searcher as a Ray Tune searcher: ``tune.TuneConfig(search_alg=Searcher("auto", metric=..., mode=...))``.

:class:`Searcher` is a ``ray.tune.search.Searcher`` (built on first use: ``import searchlab`` never imports Ray):

- **Space.** The ``param_space`` Ray Tune gives (``set_search_properties``) or ``space=`` here, flat: ``tune.randint``/
  ``lograndint``/``qrandint`` an integer knob; ``tune.choice`` a categorical knob over the choice indices;
  ``tune.uniform``/``loguniform``/``quniform`` a fine grid of ``float_grid`` points (or the ``q`` grid): the knob
  searchers are discrete, so a continuous float is searched on that grid; other values are passed as constants.
- ``suggest`` asks the searcher; ``on_trial_complete`` tells it the trial's ``metric`` (``error=True`` or a missing
  or non-finite metric: a failure). A completed trial this instance did not suggest (a restored experiment's)
  is replayed from its ``config``.
- ``max_concurrent``: at most that many suggestions pending (``suggest`` returns None until one completes); the
  searcher sees the pending ones (``auto``'s kriging believer), so concurrency costs it little.
- ``save``/``restore``: the settings and every told (configuration, outcome) pickled; a restored searcher is
  rebuilt with the same seed and replays them (what was pending at save time is forgotten, as Ray re-runs it).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, Direction, FailureMode
from searchlab.core.spaces import CategoricalKnob, IntKnob, Knob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.integrations._driver import Driver, Outcome, build_searcher

__all__ = ["knob_of"]  # and Searcher, made on first access (module __getattr__)


def knob_of(name: str, domain: Any, float_grid: int = 129) -> Knob:
    """The knob of one Ray Tune domain (module docstring)."""
    kind = type(domain).__name__
    sampler = domain.get_sampler()
    q = getattr(sampler, "q", None)
    log = type(getattr(sampler, "sampler", sampler)).__name__ == "LogUniform"
    if kind == "Categorical":
        return CategoricalKnob(name, tuple(range(len(domain.categories))))
    if kind == "Integer":
        if q is not None:  # qrandint: multiples of q, both bounds included
            return OrdinalKnob(name, tuple(range(int(math.ceil(domain.lower / q) * q), int(domain.upper) + 1, int(q))))
        return IntKnob(name, int(domain.lower), int(domain.upper) - 1, 1, log)
    if kind == "Float":
        low, high = float(domain.lower), float(domain.upper)
        if q is not None:
            values = np.arange(math.ceil(low / q) * q, high + q / 2, q)
        else:
            values = np.geomspace(low, high, float_grid) if log else np.linspace(low, high, float_grid)
        return OrdinalKnob(name, tuple(dict.fromkeys(float(v) for v in values)))
    raise ConfigError(f"parameter {name!r}: Ray Tune domain {kind} is not supported")


def _value(knob: Knob, domain: Any, value: Any) -> Any:
    if isinstance(knob, CategoricalKnob):
        return domain.categories[int(value)]
    return int(value) if type(domain).__name__ == "Integer" else float(value)


def _knob_value(knob: Knob, domain: Any, value: Any) -> Any:
    if isinstance(knob, CategoricalKnob):
        return list(domain.categories).index(value)
    values: tuple[Any, ...] = knob.values
    return min(values, key=lambda v: abs(float(v) - float(value)))


def _make_class() -> type:
    from ray.tune.search import Searcher as RaySearcher
    from ray.tune.search.sample import Domain

    class Searcher(RaySearcher):
        """``Searcher(searcher="auto", metric=None, mode=None, seed=0, *, space=None, max_concurrent=None,
        float_grid=129, **options)`` (module docstring)."""

        def __init__(self, searcher: str | type = "auto", metric: str | None = None, mode: str | None = None,
                     seed: int = 0, *, space: Mapping[str, Any] | None = None, max_concurrent: int | None = None,
                     float_grid: int = 129, **options: Any) -> None:
            if mode not in (None, "min", "max"):
                raise ConfigError(f"mode={mode!r}: must be 'min' or 'max'")
            if max_concurrent is not None and max_concurrent < 1:
                raise ConfigError(f"max_concurrent={max_concurrent!r}: must be >= 1 or None")
            super().__init__(metric=metric, mode=mode)
            self.algorithm, self.seed, self.options = searcher, int(seed), dict(options)  # not .searcher: Ray unwraps that
            self.max_concurrent, self.float_grid = max_concurrent, int(float_grid)
            self._space: dict[str, Any] | None = dict(space) if space is not None else None
            self._driver: Driver | None = None
            self._knobs: dict[str, Knob] = {}
            self._pending: dict[str, Candidate] = {}
            self._told: list[tuple[dict[str, Any], Outcome]] = []

        def set_search_properties(self, metric: str | None, mode: str | None, config: dict[str, Any],
                                  **spec: Any) -> bool:
            if self._driver is not None:
                return False
            self._metric = metric or self._metric
            self._mode = mode or self._mode
            if self._space is None:
                self._space = dict(config)
            return True

        def set_max_concurrency(self, max_concurrent: int) -> bool:
            self.max_concurrent = max_concurrent
            return True

        @property
        def driver(self) -> Driver:
            if self._driver is None:
                self._driver = self._build()
            return self._driver

        def _build(self) -> Driver:
            if not self._space or self._metric is None or self._mode is None:
                raise ConfigError("searchlab's Searcher needs metric=, mode= and a param_space of tune.* domains")
            domains = {k: v for k, v in self._space.items() if isinstance(v, Domain)}
            if not domains:
                raise ConfigError("param_space holds no tune.* domain to search")
            self._knobs = {k: knob_of(k, d, self.float_grid) for k, d in sorted(domains.items())}
            space = KnobSpace(tuple(self._knobs.values()))
            direction = Direction.MAXIMIZE if self._mode == "max" else Direction.MINIMIZE
            driver = Driver(build_searcher(self.algorithm, space, seed=self.seed, direction=direction, options=self.options))
            for params, outcome in self._told:
                driver.replay(self._config_of(params), outcome)
            return driver

        def _config_of(self, params: Mapping[str, Any]) -> Config:
            assert self._space is not None
            return Config({k: _knob_value(knob, self._space[k], params[k]) for k, knob in self._knobs.items()})

        def suggest(self, trial_id: str) -> dict[Any, Any] | None:  # or Searcher.FINISHED, as Ray's own searchers
            driver = self.driver
            if self.max_concurrent is not None and len(self._pending) >= self.max_concurrent:
                return None
            candidate = driver.ask()
            if candidate is None:
                finished: Any = RaySearcher.FINISHED  # a str, as Ray's own searchers return it
                return None if self._pending else finished
            self._pending[trial_id] = candidate
            assert self._space is not None
            out = {k: v for k, v in self._space.items() if not isinstance(v, Domain)}
            out.update({k: _value(knob, self._space[k], candidate.config[k]) for k, knob in self._knobs.items()})
            return out

        def on_trial_complete(self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False) -> None:
            value = (result or {}).get(str(self._metric))
            if error or not isinstance(value, (int, float)) or not math.isfinite(value):
                outcome = Outcome(None, FailureMode.RUNTIME, "the trial errored" if error else f"{self._metric}={value!r}")
            else:
                outcome = Outcome(float(value))
            candidate = self._pending.pop(trial_id, None)
            if candidate is not None:
                self.driver.tell(candidate, outcome)
                space = self._space or {}
                self._told.append(({k: _value(knob, space[k], candidate.config[k]) for k, knob in self._knobs.items()},
                                   outcome))
            elif result and isinstance(result.get("config"), Mapping):  # a trial of a restored experiment
                params = dict(result["config"])
                self.driver.replay(self._config_of(params), outcome)
                self._told.append((params, outcome))

        def get_state(self) -> dict[str, Any]:
            return {"searcher": self.algorithm, "seed": self.seed, "options": self.options, "metric": self._metric,
                    "mode": self._mode, "space": self._space, "max_concurrent": self.max_concurrent,
                    "float_grid": self.float_grid, "told": self._told}

        def set_state(self, state: dict[str, Any]) -> None:
            self.algorithm, self.seed, self.options = state["searcher"], state["seed"], state["options"]
            self._metric, self._mode, self._space = state["metric"], state["mode"], state["space"]
            self.max_concurrent, self.float_grid = state["max_concurrent"], state["float_grid"]
            self._told, self._pending, self._driver = list(state["told"]), {}, None

        def __getstate__(self) -> dict[str, Any]:  # the searcher itself is rebuilt: pickles anywhere (Ray's tuner.pkl)
            return self.get_state()

        def __setstate__(self, state: dict[str, Any]) -> None:
            RaySearcher.__init__(self, metric=state["metric"], mode=state["mode"])
            self.set_state(state)

        def save(self, checkpoint_path: str) -> None:
            with open(checkpoint_path, "wb") as fh:
                pickle.dump(self.get_state(), fh)

        def restore(self, checkpoint_path: str) -> None:
            with open(checkpoint_path, "rb") as fh:
                self.set_state(pickle.load(fh))  # our own checkpoint, as Ray's searchers pickle theirs

    Searcher.__module__, Searcher.__qualname__ = __name__, "Searcher"  # pickled by reference
    return Searcher


_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """``Searcher`` is made on first access, so that importing this module does not import Ray."""
    if name == "Searcher":
        if name not in _CLASSES:
            _CLASSES[name] = _make_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
