"""Coordinate descent with random restarts on knob spaces.

From the incumbent of the current climb, try every neighbour that changes one knob by one
step (the next or previous value of an ordered knob, any value of a categorical one);
move to the best improving neighbour once all are measured; when none improves, restart
from a random unseen configuration (at most ``restarts`` times, then stop). A small but
complete searcher: it keeps several candidates in flight and never proposes twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import KnobSpace
from searchlab.searchers import Searcher


class CoordinateDescentSearcher(Searcher):
    """Coordinate descent with random restarts (example plugin)."""

    name = "coordinate_descent"
    space_kinds = (KnobSpace,)

    def __init__(self, space: KnobSpace, *, restarts: int = 10, first_improvement: bool = False,
                 **kwargs: Any) -> None:
        from searchlab.errors import ConfigError

        if restarts < 0:
            raise ConfigError(f"searcher.restarts={restarts}: must be >= 0")
        super().__init__(space, **kwargs)
        self.restarts, self.first_improvement = restarts, first_improvement
        self._centre: Result | None = None  # the incumbent of the current climb
        self._round_best: Result | None = None  # the best neighbour measured in this round
        self._queue: list[Config] = []  # neighbours of the centre not yet proposed
        self._waiting: set[Config] = set()  # proposed neighbours not yet measured
        self._started = 0
        self._exhausted = False

    def _neighbours(self, config: Config) -> list[Config]:
        out = []
        space: KnobSpace = self.space  # type: ignore[assignment]
        for knob in space.knobs:
            values = list(knob.values)
            i = values.index(config[knob.name])
            steps = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)] if knob.ordered else values
            for v in steps:
                c = Config({**config, knob.name: v})
                if v != config[knob.name] and space.check(c) is None and not self.seen(c):
                    out.append(c)
        self.rng.shuffle(out)  # type: ignore[arg-type]
        return out

    def _restart(self) -> Config | None:
        if self._started > self.restarts:
            return None
        for _ in range(100):
            c = self.space.sample(self.rng)
            if not self.seen(c):
                self._started += 1
                return c
        left = [c for c in self.space.enumerate() if not self.seen(c)]
        if not left:
            return None
        self._started += 1
        return left[int(self.rng.integers(len(left)))]

    def _ask(self, n: int) -> Sequence[Config]:
        out: list[Config] = []
        while len(out) < n:
            self._queue = [c for c in self._queue if not self.seen(c)]
            if self._queue:
                c: Config | None = self._queue.pop()
            elif self._waiting:
                break  # the climb waits for its neighbours' results
            else:
                c, self._centre = self._restart(), None
                if c is None:
                    self._exhausted = not self.pending
                    break
            assert c is not None
            self._waiting.add(c)
            self._seen.add(c)  # so the rest of this batch avoids it
            out.append(c)
        return out

    def _improves(self, result: Result | None, than: Result | None) -> bool:
        return result is not None and self.loss(result) < (self.loss(than) if than is not None else float("inf"))

    def _move(self) -> None:
        """The centre moves to the best improving neighbour measured so far."""
        if self._improves(self._round_best, self._centre):
            self._centre, self._round_best = self._round_best, None
            assert self._centre is not None
            self._queue = self._neighbours(self._centre.config)

    def _tell(self, candidate: Candidate, result: Result) -> None:
        self._waiting.discard(candidate.config)
        if self._improves(result, self._round_best):
            self._round_best = result
        if self.first_improvement:
            self._move()
        if not self._waiting and not self._queue:  # the round is complete
            self._move()
            if not self._queue:
                self._centre = None  # a local optimum (or a failed start): the next ask restarts
            self._round_best = None

    def _done(self) -> bool:
        return self._exhausted and not self.pending
