"""``searcher=transfer_prune``: search a box the prior's best configurations span, widened on stagnation.

Why: historical tuning data says which *region* of the space is worth searching, not only
which points (Hozzová, Olha, Fousek & Filipovič, KTT's search-space pruning from historical
data; Perrone, Shen, Seeger, Archambeau & Jenatton, *Learning search spaces for Bayesian
optimization: another view of hyperparameter transfer learning*, NeurIPS 2019, the
"bounding box" that syne-tune ships as its ``BoundingBox`` transfer scheduler). As in
syne-tune, the box is spanned by the ``top`` best configurations of *each* prior table: an
ordered knob keeps the values between the smallest and largest index they use, a categorical
one the values they use. The base searcher (``searcher.base``, default ``auto``) searches the
box, knowing every result.

Deviation (ours): syne-tune never widens the box, so a device unlike its priors is stuck in
it. Here, after ``patience`` evaluations without a new best (or when the box is exhausted),
``top`` doubles and the box is rebuilt; once it spans every value the base searches the whole
space. The base searcher is rebuilt on each new box and replays every result so far.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from searchlab.core.records import Config
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob, Space
from searchlab.errors import ConfigError
from searchlab.interchange.table import TableKnobSpace
from searchlab.searchers._base import ProposalLike
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.common import TransferBase


def bounding_box(space: KnobSpace, tops: list[list[Config]]) -> dict[str, tuple[Any, ...]]:
    """Per knob, the values the box allows (syne-tune's ``BoundingBox``; ordered knobs as index ranges)."""
    allowed: dict[str, tuple[Any, ...]] = {}
    chosen = [c for top in tops for c in top]
    for knob in space.knobs:
        used = {c[knob.name] for c in chosen}
        if knob.ordered:
            idx = [knob.values.index(v) for v in used]
            allowed[knob.name] = tuple(knob.values[min(idx): max(idx) + 1])
        else:
            allowed[knob.name] = tuple(v for v in knob.values if v in used)
    return allowed


def restrict(space: KnobSpace, allowed: dict[str, tuple[Any, ...]]) -> KnobSpace:
    """``space`` with each knob limited to ``allowed`` values (known constraints and table members kept)."""
    knobs = tuple((OrdinalKnob if k.ordered else CategoricalKnob)(k.name, allowed[k.name]) for k in space.knobs)
    if isinstance(space, TableKnobSpace):
        inside = frozenset(m for m in space.members if all(m[n] in allowed[n] for n in allowed))
        return dataclasses.replace(space, knobs=knobs, members=inside)
    return dataclasses.replace(space, knobs=knobs)


def _top(speed: dict[Config, float], n: int) -> list[Config]:
    return sorted(speed, key=lambda c: (-speed[c], c.key))[:n]


class TransferPruneSearcher(TransferBase):
    name = "transfer_prune"
    default_base = "auto"

    # top: best configurations of each prior table that span the first box; patience: evaluations
    # without a new best before the box widens (top doubles)
    def __init__(self, space: Space, *, top: int = 5, patience: int = 10, **kwargs: Any) -> None:
        for option, value in (("top", top), ("patience", patience)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"searcher.{option}={value!r}: must be an integer >= 1")
        self.top, self.patience = top, patience
        super().__init__(space, **kwargs)
        self._since_best = 0
        self._best_loss = math.inf

    def _on_prior(self, prior: Any) -> None:
        if isinstance(self.space, KnobSpace):
            self._box(prior)

    def _box(self, prior: Any) -> None:
        assert isinstance(self.space, KnobSpace)
        tops = [_top(t.speed, self.top) for t in prior.tables]
        allowed = bounding_box(self.space, tops)
        whole = all(len(allowed[k.name]) == len(k.values) for k in self.space.knobs)
        box = self.space if whole else restrict(self.space, allowed)
        if whole or not any(True for _ in box.enumerate()):
            self._pruned = False
            self._rebuild(self.problem_space)
        else:
            self._pruned = True
            self._rebuild(box)
        self._since_best = 0

    def _widen(self) -> None:
        self.top *= 2
        self._box(self.prior)

    def _ask(self, n: int) -> list[ProposalLike]:
        if self._pruned and (self._inner.done or self._since_best >= self.patience):
            self._widen()
        return list(super()._ask(n))

    def _learn(self, config: Config, loss: float) -> None:
        if loss < self._best_loss:
            self._best_loss, self._since_best = loss, 0
        else:
            self._since_best += 1


TransferPruneConfig = searcher_config(TransferPruneSearcher)
