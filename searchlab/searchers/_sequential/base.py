"""Run a sequential optimisation algorithm, written as a coroutine, behind ask/tell.

The classic strategies (Kernel Tuner's ``kernel_tuner/strategies``) are loops that call a
cost function and wait for each answer. Here such a loop is a generator: it *yields* a batch
of configurations whose losses it needs and is *sent* their losses once all are known. The
driver turns batches into proposals, answers what it already knows without proposing it
again (Kernel Tuner serves repeats from its cache too; here also results replayed on
resume, and known-infeasible configurations, which get ``+inf``), and waits while the
batch is in flight.

Never stalling: when the algorithm ends it is restarted (a new random start, unseen when
random draws find one). When it asks only for known configurations the driver checks whether
every feasible member has been proposed (then the searcher is done); after ``idle_limit``
such requests in a row it restarts the algorithm.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Generator, Sequence
from typing import Any

from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import KnobSpace, Space
from searchlab.searchers._base import ProposalLike, Searcher
from searchlab.searchers._support.neighbours import Grid

Algorithm = Generator[list[Config], list[float], None]


class SequentialSearcher(Searcher):
    """Base of the coroutine-driven classic strategies (knob spaces; thresholds via plateaus)."""

    space_kinds = (KnobSpace,)
    idle_limit = 2000  # consecutive already-known requests before checking for exhaustion

    def __init__(self, space: Space, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        assert isinstance(self.space, KnobSpace)
        self.grid = Grid(self.space)
        self._losses: dict[Config, float] = {}
        self._algorithm: Algorithm | None = None
        self._request: list[Config] = []
        self._width = 1  # free slots at the latest ask: algorithms size their batches by it
        self._idle = 0
        self._exhausted = False
        self.starts = 0

    @abstractmethod
    def _run(self) -> Algorithm:
        """The algorithm: ``losses = yield [configs]`` until it ends."""

    # -- helpers for algorithms -------------------------------------------------------
    def known(self, config: Config) -> float | None:
        return self._losses.get(config)

    def start_point(self) -> Config:
        """A random feasible configuration, unseen if random draws find one."""
        return self.grid.random_unseen(self.rng, self.seen)

    # -- the driver ---------------------------------------------------------------------
    def _ask(self, n: int) -> Sequence[ProposalLike]:
        self._width = n
        out: list[Config] = []
        while len(out) < n and not self._exhausted:
            missing = [c for c in dict.fromkeys(self._request) if c not in self._losses]
            fresh = [c for c in missing if not self.seen(c)]
            if fresh:
                for config in fresh[: n - len(out)]:
                    self._seen.add(config)  # proposed now; the base records it again
                    out.append(config)
                self._idle = 0
                continue
            if missing:  # the rest of the batch is in flight: wait for it
                break
            self._advance()
        return out

    def _advance(self) -> None:
        """Send the resolved batch to the algorithm and take its next request."""
        self._idle += 1
        if self._idle > 1 and self._all_seen():
            self._exhausted = True
            return
        if self._idle > self.idle_limit:
            self._idle, self._algorithm = 0, None
        losses = [self._losses[c] for c in self._request]
        try:
            if self._algorithm is None:
                self._algorithm = self._run()
                self.starts += 1
                request = next(self._algorithm)
            else:
                request = self._algorithm.send(losses)
        except StopIteration:
            self._algorithm, request = None, []
        for config in request:
            if config not in self._losses and not self.grid.feasible(config):
                self._losses[config] = math.inf
        self._request = list(request)

    def _all_seen(self) -> bool:
        """Every feasible member proposed? Counted once for small spaces; for large ones a
        scan for an unseen member, only once the algorithm has idled ``idle_limit`` times."""
        total = self.grid.n_feasible(limit=100_000)
        if total is not None:
            return self.n_seen >= total
        if self._idle > self.idle_limit:
            return next((c for c in self.space.enumerate() if not self.seen(c)), None) is None
        return False

    def _tell(self, candidate: Candidate, result: Result) -> None:
        self._losses[candidate.proposal] = self.loss(result)

    def _done(self) -> bool:
        return self._exhausted
