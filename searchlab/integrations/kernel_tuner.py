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

import json
import math
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from searchlab.core.records import Candidate, Config, Direction, FailureMode, Measurement
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.integrations._driver import Outcome
from searchlab.searchers import Searcher, build_searcher

__all__ = ["SearcherFailed", "SearchlabOptAlg", "Strategy", "knob_space"]

_MODES = {"CompilationFailedConfig": FailureMode.COMPILE, "RuntimeFailedConfig": FailureMode.RUNTIME,
          "InvalidConfig": FailureMode.INVALID}


class SearcherFailed(RuntimeError):
    """The searchlab searcher raised inside Kernel Tuner's tuning loop."""


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def knob_space(tune_params: Mapping[str, Sequence[Any]], members: Sequence[Sequence[Any]]) -> KnobSpace:
    """The knob space of Kernel Tuner's parameters whose members are ``members`` (its ``searchspace.list``).

    The same parameters and members give the same space object (the last few are kept): the reference runner
    builds a new ``Searchspace`` for every repeat of a group, and one space object lets ``auto`` keep its
    enumeration of the valid set across them (``searchers/_auto/knobs.py`` ``valid_pool``)."""
    try:
        # NumPy scalars hash and compare as the Python values they hold, so the key needs no conversion
        # (converting 4362 x 10 values cost 20 ms per repeat: issue 53's profile)
        key = (tuple((n, tuple(vs)) for n, vs in tune_params.items()), tuple(map(tuple, members)))
        hash(key)
    except TypeError:  # an unhashable value: built afresh
        return _knob_space(tune_params, members)
    if key not in _SPACES:
        _SPACES[key] = _knob_space(tune_params, members)
        while len(_SPACES) > 4:
            del _SPACES[next(iter(_SPACES))]
    return _SPACES[key]


_SPACES: dict[Any, KnobSpace] = {}


def _knob_space(tune_params: Mapping[str, Sequence[Any]], members: Sequence[Sequence[Any]]) -> KnobSpace:
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

        cost = CostFunc(searchspace, tuning_options, runner, snap=False)
        self.search(cost, searchspace)
        results: list[dict[str, Any]] = cost.results
        return results

    def search(self, cost: Any, searchspace: Any) -> None:
        """Drive the searcher over Kernel Tuner's ``CostFunc`` until the budget or the searcher ends: the one loop
        (:func:`searchlab.run.loop.search`) with Kernel Tuner's cost function as its one worker."""
        from kernel_tuner.util import StopCriterionReached

        from searchlab.run.loop import search

        names = list(searchspace.tune_params)
        objective, higher = _objective(cost.tuning_options)
        space = knob_space(searchspace.tune_params, searchspace.list)
        searcher = build_searcher(self.searcher, space, seed=self.seed, options=self.options,
                                  direction=Direction.MAXIMIZE if higher else Direction.MINIMIZE)
        self.last = searcher
        budget = getattr(cost.tuning_options.get("budget"), "max_fevals", None)
        original = {n: {_plain(v): v for v in searchspace.tune_params[n]} for n in names}
        stopped = False

        def evaluate(candidate: Candidate) -> Measurement | None:
            nonlocal stopped
            element = [original[n].get(candidate.config[n], candidate.config[n]) for n in names]
            before = len(cost.results)
            try:
                cost._run_configs([element], check_restrictions=False)
            except StopCriterionReached:  # max_fevals or time_limit, as Kernel Tuner's own strategies stop
                stopped = True  # measured, then the budget ran out: the searcher still hears it
                if len(cost.results) == before:
                    return None
            except Exception as exc:  # Kernel Tuner's own failure: not the searcher's
                raise _KernelTunerRaised(exc) from exc
            return _outcome(cost.results[-1], objective).measurement()

        try:
            search(searcher, evaluate, horizon=budget if isinstance(budget, int) and budget >= 1 else None,
                   until=lambda: stopped)
        except _KernelTunerRaised as raised:
            raise raised.error.with_traceback(raised.error.__traceback__) from None
        except (SearcherFailed, ConfigError):
            raise
        except Exception as exc:
            name = self.searcher if isinstance(self.searcher, str) else getattr(self.searcher, "name", self.searcher)
            raise SearcherFailed(f"searchlab searcher {name!r} raised after {len(cost.results)} evaluations in "
                                 f"Kernel Tuner's loop: {type(exc).__name__}: {exc}") from exc


class _KernelTunerRaised(Exception):
    """An exception of Kernel Tuner's cost function, carried through the loop unchanged."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class SearchlabOptAlg:
    """Kernel Tuner's ``OptAlg`` protocol (``kernel_tuner.strategies.wrapper``), so that an unchanged experiment file
    of the autotuning methodology (Willemsen et al., FGCS 2024) names a searchlab searcher::

        {"name": "auto", "search_method": "SearchlabOptAlg", "custom_search_method_path": ".../kernel_tuner.py",
         "search_method_hyperparameters": [{"name": "searcher", "value": "auto"}], ...}

    Kernel Tuner loads this file by path (``import_class_from_file``) and builds one instance per tuning run with the
    file's ``search_method_hyperparameters`` as keyword arguments: ``searcher`` (a registered knob searcher, default
    ``auto``), ``seed`` and the searcher's own options. The reference runner repeats a group by building a new
    instance with the same options, so without a ``seed`` each instance draws its own (repeats must differ, or the
    methodology's spread across repeats is zero) and writes it to :attr:`record`, beside the run's results.
    The search itself is :class:`Strategy`'s: one driver for both doors.
    """

    def __init__(self, searcher: str = "auto", seed: int | None = None, **options: Any) -> None:
        from searchlab.searchers import searcher_class

        searcher_class(searcher)  # an unknown name is refused here, in one line, before any tuning
        self.costfunc_kwargs = {"scaling": False, "snap": False}  # as OptAlg: configurations as proposed
        self.seed_drawn = seed is None
        self.seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
        self.strategy = Strategy(searcher, seed=self.seed, **options)
        self.record: Path | None = None  # where this run's seed was written (None: not run by tune_kernel_T1)
        _register_as_optalg()

    def __repr__(self) -> str:
        return f"SearchlabOptAlg(searcher={self.strategy.searcher!r}, seed={self.seed}, **{self.strategy.options!r})"

    def __call__(self, func: Any, searchspace: Any) -> tuple[tuple[Any, ...], float]:
        """Search until Kernel Tuner's budget ends; the best configuration and its objective value."""
        try:
            self.strategy.search(func, searchspace)
        finally:
            self.record = _write_record(self, func)
        return _best(func)

    def describe(self, evaluations: int) -> dict[str, Any]:
        searcher = self.strategy.searcher
        return {"searcher": searcher if isinstance(searcher, str) else getattr(searcher, "name", repr(searcher)),
                "seed": self.seed, "seed_drawn": self.seed_drawn, "options": self.strategy.options,
                "evaluations": evaluations}


def _register_as_optalg() -> None:
    """``isinstance(x, OptAlg)`` holds, without importing Kernel Tuner when this module is imported."""
    try:
        from kernel_tuner.strategies.wrapper import OptAlg
    except ImportError:  # pragma: no cover - Kernel Tuner is what calls this class
        return
    OptAlg.register(SearchlabOptAlg)


def _best(func: Any) -> tuple[tuple[Any, ...], float]:
    objective, higher = _objective(func.tuning_options)
    names = list(func.searchspace.tune_params)
    valid = [r for r in func.results if _outcome(r, objective).value is not None]
    if not valid:
        return (), math.inf
    best = max(valid, key=lambda r: float(r[objective])) if higher else min(valid, key=lambda r: float(r[objective]))
    return tuple(best[n] for n in names), float(best[objective])


def _results_stem() -> Path | None:
    """The run's output path as the reference wrote it into the run's T1 input file (``General.OutputFile``:
    ``PARENT/run/GROUP/GPU_APP_GROUP``), found in the frame of Kernel Tuner's ``tune_kernel_T1``, the one function
    that reads that file; None when Kernel Tuner was called some other way."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        inputs = frame.f_locals.get("inputs") if frame.f_code.co_name == "tune_kernel_T1" else None
        if isinstance(inputs, Mapping):
            output = inputs.get("General", {}).get("OutputFile")
            return Path(output) if isinstance(output, str) and output else None
        frame = frame.f_back
    return None


def _write_record(alg: SearchlabOptAlg, func: Any) -> Path | None:
    """Append this run's seed to ``GPU_APP_GROUP.searchlab.jsonl`` beside the reference's results (its ``.npz``
    keeps objective values only): one JSON line per tuning run, retries included, in the order they ran."""
    stem = _results_stem()
    if stem is None or not stem.parent.is_dir():
        return None
    path = stem.with_name(stem.name + ".searchlab.jsonl")
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(alg.describe(len(func.results)), default=repr) + "\n")
    return path


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
