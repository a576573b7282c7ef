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
- **Closing.** The searchlab searcher is closed (``Searcher.close``: a Kernel Tuner strategy's thread ends) when
  it has nothing more to propose (``FINISHED``), when a restored state replaces it, on :meth:`Searcher.close`, or
  when this object is garbage-collected; Ray Tune has no end-of-experiment hook for a search algorithm.
- ``save``/``restore``: the settings, the space's parameters and every told (configuration, outcome) as versioned
  JSON (``_tune_checkpoint``: never unpickled; anything else is refused in one line). A restored searcher is rebuilt
  with the same seed and replays them (what was pending at save time is forgotten, as Ray re-runs it).
- Spaces it cannot search (nested dicts of domains, ``grid_search``, ``randn``, unbounded floats, ``sample_from``,
  integer ranges wider than 2**20 that are not log-scaled) are refused in one ``ConfigError`` (a ValueError) at
  construction or ``set_search_properties`` (``_tune_space``). Log domains (``loguniform``, ``lograndint``,
  ``qloguniform`` ...) are recognised by their sampler's class (Ray's ``LogUniform``), and searched on a log grid.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from typing import Any, cast

from searchlab.core.records import Candidate, Config, Direction, FailureMode
from searchlab.core.spaces import CategoricalKnob, Knob, KnobSpace
from searchlab.errors import ConfigError
from searchlab.integrations import _tune_checkpoint as checkpoint
from searchlab.integrations._driver import Driver, Outcome, nearest
from searchlab.integrations._tune_space import check_space, describe, knob_of
from searchlab.searchers import build_searcher

__all__ = ["knob_of"]  # and Searcher, made on first access (module __getattr__)


def _value(knob: Knob, domain: Any, value: Any) -> Any:
    if isinstance(knob, CategoricalKnob):
        return domain.categories[int(value)]
    from ray.tune.search import sample

    return int(value) if isinstance(domain, sample.Integer) else float(value)


def _knob_value(knob: Knob, domain: Any, value: Any) -> Any:
    if isinstance(knob, CategoricalKnob):
        return list(domain.categories).index(value)
    return nearest(knob, value)


def _described(space: Mapping[str, Any]) -> dict[str, Any]:
    """The space as a checkpoint holds it (JSON's own types: tuples become lists)."""
    import json

    out: dict[str, Any] = json.loads(json.dumps({k: describe(v) for k, v in space.items()}))
    return out


def _rebuild(described: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint's space (``_tune_space.describe``) as tune.* domains again."""
    from ray import tune

    out: dict[str, Any] = {}
    for key, d in described.items():
        if not isinstance(d, dict):
            raise ConfigError(f"checkpoint space entry {key!r} is not a described domain or constant")
        if "constant" in d:
            out[key] = d["constant"]
        elif d.get("domain") == "choice" and isinstance(d.get("categories"), list):
            out[key] = tune.choice(d["categories"])
        elif d.get("domain") in ("float", "integer"):
            names = {("float", False, False): "uniform", ("float", True, False): "loguniform",
                     ("float", False, True): "quniform", ("float", True, True): "qloguniform",
                     ("integer", False, False): "randint", ("integer", True, False): "lograndint",
                     ("integer", False, True): "qrandint", ("integer", True, True): "qlograndint"}
            make = getattr(tune, names[d["domain"], bool(d.get("log")), d.get("q") is not None])
            out[key] = make(d["lower"], d["upper"], *(() if d.get("q") is None else (d["q"],)))
        else:
            raise ConfigError(f"checkpoint space entry {key!r} is not a described domain or constant")
        if any(isinstance(c, dict) and "repr" in c for c in d.get("categories", [d.get("constant")])):
            raise ConfigError(f"checkpoint space entry {key!r} holds a value that is not data; give space= again")
    return out


def _close_all(drivers: list[Driver]) -> None:
    for driver in drivers:
        driver.close()
    drivers.clear()


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
            if space is not None:
                self._check(space)
            self._space: dict[str, Any] | None = dict(space) if space is not None else None
            self._driver: Driver | None = None
            self._drivers: list[Driver] = []  # what close() and garbage collection close
            weakref.finalize(self, _close_all, self._drivers)
            self._knobs: dict[str, Knob] = {}
            self._pending: dict[str, Candidate] = {}
            self._told: list[tuple[dict[str, Any], Outcome]] = []  # knob configurations (plain numbers), outcomes

        def _check(self, space: Mapping[str, Any]) -> None:
            """Refuse now, in one line, a space the searcher cannot search (not at the first suggest)."""
            from ray.tune.search.sample import Domain

            check_space(space)
            for k, v in space.items():
                if isinstance(v, Domain):
                    knob_of(k, v, self.float_grid)

        def set_search_properties(self, metric: str | None, mode: str | None, config: dict[str, Any],
                                  **spec: Any) -> bool:
            if self._driver is not None:
                return False
            self._metric = metric or self._metric
            self._mode = mode or self._mode
            if self._space is None:
                self._check(config)
                self._space = dict(config)
            return True

        def set_max_concurrency(self, max_concurrent: int) -> bool:
            self.max_concurrent = max_concurrent
            return True

        @property
        def driver(self) -> Driver:
            if self._driver is None:
                self._driver = self._build()
                self._drivers.append(self._driver)
            return self._driver

        def close(self) -> None:
            """Close the searchlab searcher (module docstring, "Closing"); a later suggest builds it anew."""
            _close_all(self._drivers)
            self._driver = None

        def _replace(self) -> None:
            """A restored state: the searcher is rebuilt from it (what was pending is forgotten)."""
            self.close()
            self._pending = {}

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
            for config, outcome in self._told:
                driver.replay(Config(config), outcome)
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
                if self._pending:
                    return None
                driver.close()  # nothing more to propose, nothing pending: the search is over
                return cast("dict[Any, Any] | None", RaySearcher.FINISHED)  # a str, as Ray's own searchers return it
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
                self._told.append((dict(candidate.config), outcome))
            elif result and isinstance(result.get("config"), Mapping):  # a trial of a restored experiment
                config = self._config_of(dict(result["config"]))
                self.driver.replay(config, outcome)
                self._told.append((dict(config), outcome))

        def get_state(self) -> dict[str, Any]:
            return {"searcher": self.algorithm, "seed": self.seed, "options": self.options, "metric": self._metric,
                    "mode": self._mode, "space": self._space, "max_concurrent": self.max_concurrent,
                    "float_grid": self.float_grid, "told": self._told}

        def set_state(self, state: dict[str, Any]) -> None:
            self.algorithm, self.seed, self.options = state["searcher"], state["seed"], state["options"]
            self._metric, self._mode, self._space = state["metric"], state["mode"], state["space"]
            self.max_concurrent, self.float_grid = state["max_concurrent"], state["float_grid"]
            self._replace()
            self._told = list(state["told"])

        def __getstate__(self) -> dict[str, Any]:  # the searcher itself is rebuilt: pickles anywhere (Ray's tuner.pkl)
            return self.get_state()

        def __setstate__(self, state: dict[str, Any]) -> None:
            RaySearcher.__init__(self, metric=state["metric"], mode=state["mode"])
            self._driver, self._drivers = None, []
            weakref.finalize(self, _close_all, self._drivers)
            self.set_state(state)

        def save(self, checkpoint_path: str) -> None:
            """The state as versioned JSON (``_tune_checkpoint``), written atomically."""
            name = self.algorithm if isinstance(self.algorithm, str) else getattr(self.algorithm, "name", "")
            state = {"searcher": str(name), "seed": self.seed, "options": self.options, "metric": self._metric,
                     "mode": self._mode, "max_concurrent": self.max_concurrent, "float_grid": self.float_grid,
                     "space": None if self._space is None else _described(self._space),
                     "told": [[config, checkpoint.outcome_data(o)] for config, o in self._told]}
            checkpoint.write(checkpoint_path, state)

        def restore(self, checkpoint_path: str) -> None:
            """Read back what :meth:`save` wrote; anything else is refused in one line and changes nothing."""
            from searchlab import registry

            state = checkpoint.read(checkpoint_path)
            own = getattr(self.algorithm, "name", None) if not isinstance(self.algorithm, str) else None
            algorithm: str | type = self.algorithm if own == state["searcher"] else state["searcher"]
            if isinstance(algorithm, str) and algorithm not in registry.searchers():
                raise ConfigError(f"checkpoint {checkpoint_path!r} names searcher {algorithm!r}, which is not registered")
            space = self._space
            if state["space"] is not None and (space is None or _described(space) != state["space"]):
                if space is not None:
                    raise ConfigError(f"checkpoint {checkpoint_path!r} was saved for another param_space")
                space = _rebuild(state["space"])
                self._check(space)
            self.algorithm, self.seed, self.options = algorithm, state["seed"], state["options"]
            self._metric, self._mode, self._space = state["metric"], state["mode"], space
            self.max_concurrent, self.float_grid = state["max_concurrent"], state["float_grid"]
            self._replace()
            self._told = list(state["told"])

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
