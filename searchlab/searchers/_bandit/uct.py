"""UCT on the derivation DAG, for contrast with TAG (paper 002 §3.5; Kocsis & Szepesvári 2006).

Same growth, Monte-Carlo evaluation and backpropagation as TAG
(:mod:`searchlab.searchers._bandit.base`), but each vertex keeps the *mean* of its rewards
and arms are chosen by UCB1 (Auer et al. 2002):

    argmax_i  mean_i + c·sqrt(2·ln(n) / n_i),   ∞ for an unplayed arm,

which favours branches that are good on average rather than branches likely to hold the
maximum, the difference §3.5 points out. Rewards are the objective mapped linearly onto
[0, 1] by the best and worst values seen so far (failures 0; in-flight plays count as 0
until their value arrives), so unlike TAG, UCT is invariant only to affine transforms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from searchlab.core.spaces import Arc, Node, Space
from searchlab.errors import ConfigError
from searchlab.searchers._bandit.base import GraphBanditSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable


class UctSearcher(GraphBanditSearcher):
    """UCB1 with mean backup on the grown subgraph."""

    name = "uct"

    def __init__(self, space: Space, *, c: Annotated[float, Tunable(0.05, 4.0, log=True)] = 1.0,
                 no_repeat: bool = True, arcs: str = "all",
                 **kwargs: Any) -> None:
        if not c >= 0:
            raise ConfigError(f"searcher.c={c}: must be >= 0")
        super().__init__(space, no_repeat=no_repeat, arcs=arcs, **kwargs)
        self.c = float(c)
        self._lo, self._hi = math.inf, -math.inf  # best and worst finite loss seen

    def _observed(self, value: float) -> None:
        if math.isfinite(value):
            self._lo, self._hi = min(self._lo, value), max(self._hi, value)

    def _mean(self, vertex: Node) -> float:
        """Mean reward of R(vertex): (worst - loss) / (worst - best), 0 for failures and
        in-flight plays; linear, so the mean follows from the count and sum of losses."""
        n, losses = self.stats(vertex)
        if not losses:
            return 0.0
        span = self._hi - self._lo
        if span <= 0:
            return len(losses) / n
        return (len(losses) * self._hi - self._sums[vertex]) / span / n

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        played = self._played[vertex]
        counts = [self.stats(child)[0] if child in played else 0 for _, child in arms]
        total = sum(counts)
        return [math.inf if n == 0 else self._mean(child) + self.c * math.sqrt(2 * math.log(total) / n)
                for n, (_, child) in zip(counts, arms)]


# c: exploration weight on sqrt(2 ln n / n_i)
# arcs: all: every derivation order (paper's DAG); canonical: leftmost derivations only
# no_repeat: never evaluate a sink twice, skip exhausted branches
UctConfig = searcher_config(UctSearcher)
