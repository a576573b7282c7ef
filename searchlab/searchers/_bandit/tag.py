"""TAG, Threshold Ascent on Graph (de Mesmay et al., ICML 2009 = paper 002, §3, Algorithm 1).

Each descent step is a maximum k-armed bandit solved by Threshold Ascent (Streeter &
Smith 2006, in the anytime form of §3.1): track the ``s`` best rewards among the arms of
the vertex; with s_i of them coming from arm i, n_i the rewards arm i received and n the
total, pull

    argmax_i h(s_i, n_i),  h = (s_i + alpha + sqrt(2·s_i·alpha + alpha²)) / n_i,  h = ∞ if n_i = 0,
    alpha = ln(2·n·k / δ)     (k arms; defaults δ = 0.1, s = 30, §5 "Parameter tuning").

An arm's rewards are those of the vertex it leads to (R(head), §3.1). Only ranks enter
(which rewards are among the s best, counts), so any increasing transform of the
objective gives the same choices; failures are the worst reward and never among the best.
Growth, Monte-Carlo evaluation, backpropagation, the new-arc rule, in-flight evaluations
(counted as plays without a reward yet) and the §3.4 no-repeat variant are in
:mod:`searchlab.searchers._bandit.base`.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from typing import Any

from searchlab.core.spaces import Arc, Node, Space
from searchlab.errors import ConfigError
from searchlab.searchers._bandit.base import GraphBanditSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable


def threshold_ascent(losses: Sequence[Sequence[float]], counts: Sequence[int], s: int, delta: float) -> list[float]:
    """h(s_i, n_i) for each arm, from each arm's sorted finite losses (smaller is better)
    and its number of plays n_i (which may exceed its losses: failures, pending plays)."""
    k, n = len(counts), sum(counts)
    best = sorted(itertools.chain.from_iterable(arm[:s] for arm in losses))[:s]  # the s best, pooled
    alpha = math.log(2 * n * k / delta) if n > 0 else 0.0
    scores = []
    for arm, n_i in zip(losses, counts):
        if n_i == 0:
            scores.append(math.inf)
            continue
        s_i = bisect.bisect_right(arm, best[-1]) if best else 0  # ties at the threshold count
        scores.append((s_i + alpha + math.sqrt(2 * s_i * alpha + alpha**2)) / n_i)
    return scores


class TagSearcher(GraphBanditSearcher):
    """Threshold Ascent on Graph (paper 002 §3)."""

    name = "tag"

    def __init__(self, space: Space, *, delta: Annotated[float, Tunable(0.001, 1.0, log=True)] = 0.1,
                 s: Annotated[int, Tunable(1, 200, log=True)] = 30, no_repeat: bool = True,
                 arcs: str = "all", **kwargs: Any) -> None:
        if not 0 < delta <= 1:
            raise ConfigError(f"searcher.delta={delta}: must be in (0, 1] (a confidence level; alpha = ln(2nk/delta))")
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            raise ConfigError(f"searcher.s={s!r}: must be a positive integer")
        super().__init__(space, no_repeat=no_repeat, arcs=arcs, **kwargs)
        self.delta, self.s = float(delta), s

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        played = self._played[vertex]
        losses: list[list[float]] = []
        counts: list[int] = []
        for _, child in arms:
            n_i, arm_losses = self.stats(child) if child in played else (0, [])
            losses.append(arm_losses)
            counts.append(n_i)
        if 0 in counts:  # an unplayed arm scores +inf and is pulled whatever the others score
            return [math.inf if n_i == 0 else 0.0 for n_i in counts]
        return threshold_ascent(losses, counts, self.s, self.delta)


# delta: δ in alpha = ln(2nk/δ)
# s: number of best rewards tracked per bandit
# arcs: all: every derivation order (paper's DAG); canonical: leftmost derivations only
# no_repeat: §3.4: never evaluate a sink twice, skip exhausted branches
TagConfig = searcher_config(TagSearcher)
