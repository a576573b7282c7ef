"""A searchlab searcher as a Kernel Tuner strategy: ``tune_kernel(..., strategy=Strategy("auto"))``.

Kernel Tuner 1.5 accepts any object with a ``tune(searchspace, runner, tuning_options)`` method as a
user-defined strategy (``kernel_tuner/interface.py``). :class:`Strategy` is one:

- the space: Kernel Tuner's ``Searchspace`` (its ``tune_params``, and the members its restrictions and
  the device's thread limit admit, ``searchspace.list``) becomes a knob space whose members are
  exactly those (:func:`knob_space`): numeric parameters are ordinal knobs in Kernel Tuner's value
  order, others categorical; the searcher never proposes a configuration the restrictions exclude;
- each evaluation goes through Kernel Tuner's own ``CostFunc`` and runner (``snap=False``: the
  configuration as proposed), so the cache, ``max_fevals``, ``time_limit``, simulation mode and
  failures count exactly as Kernel Tuner counts them for its own strategies, and the results list
  returned is Kernel Tuner's;
- a failed configuration (``__error__``: compile, runtime, invalid) reaches the searcher as a failure
  of that mode; ``max_fevals`` is told to the searcher as its budget (``Searcher.set_budget``);
- a searcher that raises ends the tuning with :class:`SearcherFailed` (naming the searcher, the
  evaluation and the cause), never a hang: the searcher runs in Kernel Tuner's thread, no thread of ours.

Only the first objective is searched when Kernel Tuner is given several (searchlab's searchers are single-objective).
Kernel Tuner is imported inside :meth:`Strategy.tune`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from searchlab.core.records import Config, Direction, FailureMode
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.integrations._driver import Driver, Outcome, build_searcher
from searchlab.searchers import Searcher

__all__ = ["SearcherFailed", "Strategy", "knob_space"]

_MODES = {"CompilationFailedConfig": FailureMode.COMPILE, "RuntimeFailedConfig": FailureMode.RUNTIME,
          "InvalidConfig": FailureMode.INVALID}


class SearcherFailed(RuntimeError):
    """The searchlab searcher raised inside Kernel Tuner's tuning loop."""


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def knob_space(tune_params: Mapping[str, Sequence[Any]], members: Sequence[Sequence[Any]]) -> KnobSpace:
    """The knob space of Kernel Tuner's parameters whose members are ``members`` (its ``searchspace.list``)."""
    from searchlab.interchange.table import TableKnobSpace

    names = list(tune_params)
    knobs = tuple(OrdinalKnob(n, tuple(_plain(v) for v in tune_params[n])) if _numeric(list(tune_params[n]))
                  else CategoricalKnob(n, tuple(_plain(v) for v in tune_params[n])) for n in names)
    configs = frozenset(Config({n: _plain(v) for n, v in zip(names, m)}) for m in members)
    if not configs:
        raise ConfigError("Kernel Tuner's search space is empty: its restrictions admit no configuration")
    return TableKnobSpace(knobs, members=configs)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


class Strategy:
    """``tune_kernel(strategy=Strategy(searcher="auto", seed=0, **options))``: any registered knob searcher
    (its options as keyword arguments, as ``searcher.X=`` on the command line)."""

    def __init__(self, searcher: str | type[Searcher] = "auto", seed: int = 0, **options: Any) -> None:
        self.searcher = searcher
        self.seed = int(seed)
        self.options = dict(options)
        self.last: Searcher | None = None  # the searcher of the last tune(), for inspection

    def __repr__(self) -> str:
        return f"Strategy(searcher={self.searcher!r}, seed={self.seed}, **{self.options!r})"

    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict[str, Any]]:
        """Kernel Tuner's user-defined strategy protocol: Kernel Tuner's results list."""
        from kernel_tuner.strategies.common import CostFunc
        from kernel_tuner.util import StopCriterionReached

        names = list(searchspace.tune_params)
        objective, higher = _objective(tuning_options)
        space = knob_space(searchspace.tune_params, searchspace.list)
        searcher = build_searcher(self.searcher, space, seed=self.seed, options=self.options,
                                  direction=Direction.MAXIMIZE if higher else Direction.MINIMIZE)
        self.last = searcher
        budget = getattr(tuning_options.get("budget"), "max_fevals", None)
        driver = Driver(searcher, budget=budget if isinstance(budget, int) else None)
        original = {n: {_plain(v): v for v in searchspace.tune_params[n]} for n in names}
        cost = CostFunc(searchspace, tuning_options, runner, snap=False)
        try:
            while (candidate := self._step(driver.ask, len(cost.results))) is not None:  # None: nothing more to propose
                element = [original[n].get(candidate.config[n], candidate.config[n]) for n in names]
                before = len(cost.results)
                try:
                    cost._run_configs([element], check_restrictions=False)
                except StopCriterionReached:  # max_fevals or time_limit, as Kernel Tuner's own strategies stop
                    if len(cost.results) > before:  # measured, then the budget ran out: the searcher still hears it
                        driver.tell(candidate, _outcome(cost.results[-1], objective))
                    break
                self._step(partial(driver.tell, candidate, _outcome(cost.results[-1], objective)), len(cost.results))
        finally:
            searcher.close()
        results: list[dict[str, Any]] = cost.results
        return results

    def _step(self, step: Any, done: int) -> Any:
        try:
            return step()
        except (SearcherFailed, ConfigError):
            raise
        except Exception as exc:
            if type(exc).__name__ == "StopCriterionReached":
                raise
            name = self.searcher if isinstance(self.searcher, str) else getattr(self.searcher, "name", self.searcher)
            raise SearcherFailed(f"searchlab searcher {name!r} raised after {done} evaluations in "
                                 f"Kernel Tuner's loop: {type(exc).__name__}: {exc}") from exc


def _objective(tuning_options: Any) -> tuple[str, bool]:
    objective = tuning_options.objective
    higher = tuning_options.objective_higher_is_better
    if isinstance(objective, (list, tuple)):
        objective, higher = objective[0], higher[0]
    return str(objective), bool(higher)


def _outcome(result: Mapping[str, Any], objective: str) -> Outcome:
    """Kernel Tuner's result of one configuration as searchlab sees it."""
    error = result.get("__error__")
    if error is not None:
        mode = next((m for cls, m in _MODES.items() if any(c.__name__ == cls for c in type(error).__mro__)),
                    FailureMode.RUNTIME)
        return Outcome(None, mode, f"Kernel Tuner: {type(error).__name__} {str(error)[:200]}")
    value = result.get(objective)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return Outcome(None, FailureMode.RUNTIME, f"Kernel Tuner: {objective}={value!r}")
    return Outcome(float(value))
