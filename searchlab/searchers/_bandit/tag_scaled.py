"""TAG with exploration scaled to the arms and the plays (``searcher=tag_scaled``; issue 38).

Paper 002's TAG (§3.1, :mod:`searchlab.searchers._bandit.tag`) solves each descent step with
Streeter & Smith's *Threshold Ascent* ("A simple distribution-free approach to the max k-armed
bandit problem", CP 2006): count, per arm, how many of the ``s`` best rewards it produced (s_i of
its n_i plays) and pull ``argmax (s_i + alpha + sqrt(2 s_i alpha + alpha²)) / n_i`` with alpha = ln(2nk/δ),
every unplayed arm first. The constants come from a union bound over the n pulls and k arms:
they make the choice right with probability 1 - δ *asymptotically*, with no regard for a budget.
On our DFT grammars, with tens of arms per vertex and 150 evaluations, bench/tag_study.py
measured what that does (docs/grammar.md, "Why TAG plays uniformly"):

1. every vertex below the root holds fewer than ``s = 30`` rewards, so *all* its rewards are
   "good" (s_i = n_i) and the index ranks arms by 1/n_i only: round robin;
2. where the threshold does bind (the root), alpha ≈ 10 dwarfs s_i: the chosen arm's exploration
   part of h is 7.5-10x its exploitation part s_i / n_i, so counts barely follow rewards (root
   counts: max / mean 1.3-1.4, normalised entropy 0.99);
3. an unplayed arm scores +∞, so a vertex with k arms is played k times before its own rewards
   count; with k ≈ 7-14 (4096, 32768) 59-91 % of the decisions at depths 1-2 are forced, and the
   descent never goes deeper than about three levels.

This variant changes exactly these three, keeping the index's form (a deviation from the paper,
which fixes s, δ and alpha; the paper's TAG stays ``searcher=tag``):

1. **threshold as a quantile**: s_v = max(1, ceil(``quantile`` · L_v)), L_v the finite rewards
   pooled over the vertex's arms (capped at ``s``), so "good" means the best ``quantile`` of what
   this vertex saw, at every depth and every point of the run;
2. **exploration scaled to arms and plays**: alpha_v = min(ln(2 n k / δ), ``exploration`` · n / k),
   n the vertex's plays, k its arms. An arm that produced nothing good keeps h ≈ 2alpha/n_i and is
   replayed until that falls below the best arm's rate p*, about 2alpha/p* plays each, so the k arms
   claim ≈ 2·k·alpha/p* plays: the paper's alpha makes that hundreds to thousands (more than the whole
   budget), the cap makes it a fixed share (∝ ``exploration``) of the plays the vertex has had.
   Once n/k is large the paper's alpha returns (the same asymptotic guarantee);
3. **unplayed arms get a prior** instead of +∞: one pseudo-play at the vertex's good rate
   p_v = s_v / L_v, i.e. h = p_v + alpha + sqrt(2 p_v alpha + alpha²). With the paper's alpha this is still above
   every played arm (unplayed first); with a small alpha an arm whose plays were mostly good is
   followed deeper before its siblings are all tried (progressive widening, as in MCTS for many
   arms, but by the index itself).

Everything else (growth, Monte-Carlo completion, backpropagation, the new-arc rule, in-flight
plays, no-repeat, resume) is :class:`~searchlab.searchers._bandit.base.GraphBanditSearcher`'s.
The defaults of ``exploration`` and ``quantile`` were chosen with ``problem=searcher_settings`` on
the DFT training sizes 4096, 32768, 6000, 50000 and 2^18 only (docs/grammar.md, docs/tuning.md).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from searchlab.core.provenance import DFT_TRAINING_SIZES
from searchlab.core.spaces import Arc, Node, Space
from searchlab.errors import ConfigError
from searchlab.searchers._bandit.base import GraphBanditSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable


@dataclass(frozen=True)
class ArmTerms:
    """One vertex's bandit at one descent: per arm (n_i, s_i, exploitation s_i/n_i, exploration
    (alpha + sqrt(2 s_i alpha + alpha²))/n_i), with alpha and the threshold count s_v (bench/tag_study.py logs these)."""

    alpha: float
    threshold: int
    counts: tuple[int, ...]
    good: tuple[int, ...]
    exploit: tuple[float, ...]
    explore: tuple[float, ...]

    @property
    def scores(self) -> list[float]:
        return [a + b for a, b in zip(self.exploit, self.explore)]


def ascent_terms(losses: Sequence[Sequence[float]], counts: Sequence[int], s: int, alpha: float,
                 prior: bool = False) -> ArmTerms:
    """Threshold Ascent's index split into its two terms (paper 002 §3.1), from each arm's sorted
    finite losses (smaller is better) and plays. ``s`` best pooled rewards are "good"; an unplayed
    arm is +∞ (the paper) or, with ``prior``, one pseudo-play at the pooled good rate."""
    best = sorted(itertools.chain.from_iterable(arm[:s] for arm in losses))[:s]
    good = [bisect.bisect_right(arm, best[-1]) if best else 0 for arm in losses]  # ties at the threshold count
    pooled = sum(len(arm) for arm in losses)
    rate = len(best) / pooled if pooled else 1.0
    exploit, explore = [], []
    for s_i, n_i in zip(good, counts):
        if n_i == 0:
            exploit.append(rate if prior else math.inf)
            explore.append(alpha + math.sqrt(2 * rate * alpha + alpha**2) if prior else 0.0)
            continue
        exploit.append(s_i / n_i)
        explore.append((alpha + math.sqrt(2 * s_i * alpha + alpha**2)) / n_i)
    return ArmTerms(alpha, len(best), tuple(counts), tuple(good), tuple(exploit), tuple(explore))


def _fraction(name: str, value: Any, low_open: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low_open < value <= high:
        raise ConfigError(f"searcher.{name}={value!r}: must be a number in ({low_open}, {high}]")
    return float(value)


class TagScaledSearcher(GraphBanditSearcher):
    """Threshold Ascent on Graph with a quantile threshold, exploration capped by plays per arm,
    and a prior for unplayed arms (module docstring)."""

    name = "tag_scaled"
    defaults_chosen_on = (DFT_TRAINING_SIZES,)  # exploration, quantile (module docstring)

    def __init__(self, space: Space, *, exploration: Annotated[float, Tunable(0.01, 10.0, log=True)] = 0.01,
                 quantile: Annotated[float, Tunable(0.02, 0.5, log=True)] = 0.5, delta: float = 0.1, s: int = 30,
                 no_repeat: bool = True, arcs: str = "all", **kwargs: Any) -> None:
        self.exploration = _fraction("exploration", exploration, 0.0, 1e6)
        self.quantile = _fraction("quantile", quantile, 0.0, 1.0)
        self.delta = _fraction("delta", delta, 0.0, 1.0)
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            raise ConfigError(f"searcher.s={s!r}: must be a positive integer")
        super().__init__(space, no_repeat=no_repeat, arcs=arcs, **kwargs)
        self.s = s

    def terms(self, vertex: Node, arms: Sequence[Arc]) -> ArmTerms:
        played = self._played[vertex]
        losses: list[list[float]] = []
        counts: list[int] = []
        for _, child in arms:
            n_i, arm_losses = self.stats(child) if child in played else (0, [])
            losses.append(arm_losses)
            counts.append(n_i)
        k, n = len(counts), max(1, sum(counts))
        pooled = sum(len(a) for a in losses)
        s_v = min(self.s, max(1, math.ceil(self.quantile * pooled)))
        alpha = min(math.log(2 * n * k / self.delta), self.exploration * n / k)
        return ascent_terms(losses, counts, s_v, alpha, prior=True)

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        return self.terms(vertex, arms).scores


# exploration: alpha = min(ln(2nk/delta), exploration * n / k) at a vertex with n plays and k arms
# quantile: a reward is good if among the best quantile of the vertex's rewards (at most s of them)
# delta: the paper's confidence in alpha's bound; s: at most this many good rewards
# arcs: all: every derivation order (paper's DAG); canonical: leftmost derivations only
# no_repeat: §3.4: never evaluate a sink twice, skip exhausted branches
TagScaledConfig = searcher_config(TagScaledSearcher)
