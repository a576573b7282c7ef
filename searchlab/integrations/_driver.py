"""One registered searchlab searcher driven by another tool's loop (Kernel Tuner, Optuna, Ray Tune).

Each tool owns its loop (when to evaluate, what a trial is, when to stop); all three need the same things
from us, and get them from the product's own parts (issue 52): a searcher built by name over a knob space
(:func:`searchlab.searchers.build_searcher`, the one builder), and the steps of the one ask/tell loop
(:class:`searchlab.run.loop.SearchLoop`): the next configuration, a finished evaluation told back (value, or
failure with its mode), a result the tool measured without asking us (a resumed study, a trial enqueued by
hand: :meth:`SearchLoop.observe`), a trial the tool dropped, and the end (:meth:`Driver.close`: the searcher
releases what it holds). Failures reach the searcher as ``FAILED`` measurements, so ``auto``'s feasibility
model learns them as it does in searchlab's own runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result
from searchlab.core.spaces import IntKnob, Knob, KnobSpace
from searchlab.searchers import Searcher


@dataclass(frozen=True)
class Outcome:
    """What the tool reports for one configuration: a finite value, or a failure and why."""

    value: float | None
    failure: FailureMode = FailureMode.NONE
    message: str = ""

    def measurement(self) -> Measurement:
        if self.value is not None and math.isfinite(self.value) and self.failure is FailureMode.NONE:
            return Measurement.ok(self.value, samples=(self.value,))
        # FAILED whatever the mode: the tool found out by evaluating (a hidden constraint, paper 001 §3), so the
        # searcher learns it as a failure; INFEASIBLE is for known constraints, never sent
        mode = self.failure if self.failure is not FailureMode.NONE else FailureMode.RUNTIME
        return Measurement.failed(mode, self.message or f"value {self.value!r}")


def nearest(knob: Knob, value: Any) -> Any:
    """The value of an ordered knob nearest ``value``: arithmetic on an integer range, a binary search on a grid
    (both ascending), not a scan of up to 10^6 values per trial."""
    if isinstance(knob, IntKnob):
        at = min(max(round((float(value) - knob.low) / knob.step), 0), knob.count - 1)
        return knob.low + at * knob.step
    values: tuple[Any, ...] = knob.values
    at = int(np.searchsorted(np.asarray(values, dtype=float), float(value)))
    near = [values[i] for i in (at - 1, at) if 0 <= i < len(values)]
    return min(near, key=lambda v: abs(float(v) - float(value)))


class Driver:
    """The one loop's steps by configuration (the tools speak in parameter dicts); ``budget``: the evaluation
    count the tool will allow, told to the searcher (:meth:`Searcher.set_budget`); the tool decides when to stop."""

    def __init__(self, searcher: Searcher, budget: int | None = None) -> None:
        from searchlab.run.loop import SearchLoop

        self.searcher = searcher
        self.loop = SearchLoop(searcher, horizon=int(budget) if budget is not None and budget >= 1 else None)

    @property
    def space(self) -> KnobSpace:
        space = self.searcher.problem_space
        assert isinstance(space, KnobSpace)
        return space

    def ask(self) -> Candidate | None:
        """The next configuration, or None when the searcher has nothing more to propose."""
        out = self.loop.propose(1)
        return out[0] if out else None

    def tell(self, candidate: Candidate, outcome: Outcome) -> None:
        self.loop.finish(Result(candidate, outcome.measurement()))

    def replay(self, config: Mapping[str, Any], outcome: Outcome) -> None:
        """A result the tool measured without asking this searcher (a resumed study, an enqueued trial)."""
        self.loop.observe(Config(dict(config)), outcome.measurement())

    def forget(self, candidate: Candidate) -> None:
        """A candidate the tool will never evaluate (a pruned or abandoned trial): told as a failure."""
        self.loop.abandon(candidate, "abandoned by the tool")

    def close(self) -> None:
        """The tool is done with this searcher: it releases what it holds (a strategy's thread); once."""
        self.loop.close()
