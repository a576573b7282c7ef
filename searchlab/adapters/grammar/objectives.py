"""Example objectives for ``problem=grammar`` (a user's own is any importable callable).

Each takes a :class:`searchlab.adapters.grammar.problem.Word` (plus keyword options) and returns a
float, or a :class:`searchlab.core.records.Measurement` to report failures.
"""

from __future__ import annotations

import hashlib
import math
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchlab.adapters.grammar._tree import Tree
    from searchlab.adapters.grammar.problem import Word

_NORMAL = NormalDist()


def _gauss(seed: int, item: str) -> float:
    digest = hashlib.sha256(f"{seed}|{item}".encode()).digest()
    u = (int.from_bytes(digest[:8], "little") + 0.5) / 2.0**64
    return _NORMAL.inv_cdf(u)


def _rule_uses(tree: Tree, depth: int = 0) -> list[str]:
    if isinstance(tree, str):
        return []
    symbol, kids = tree
    rhs = " ".join(k if isinstance(k, str) else k[0] for k in kids)
    return [f"{depth}:{symbol}->{rhs}", *(u for k in kids for u in _rule_uses(k, depth + 1))]


def hashed(word: Word, seed: int = 0, tail: float = 1.5) -> float:
    """A deterministic, heavy-tailed pseudo-performance with structure: every rule used (at
    its depth; in string mode every terminal at its position) adds a seeded N(0, 1) effect,
    and ``100·exp(tail·z)`` makes few words very good, like the DFT spaces of paper 002."""
    items = _rule_uses(word.tree) if word.tree is not None else [f"{i}:{t}" for i, t in enumerate(word.terminals)]
    if not items:
        return 100.0
    z = sum(_gauss(seed, item) for item in items) / math.sqrt(len(items))
    return 100.0 * math.exp(tail * z)


def length(word: Word) -> float:
    """The number of terminals in the word (e.g. minimise it)."""
    return float(len(word.terminals))
