"""What the threshold tuners of paper 003 share: a model of the tree, caches, a driver.

- :class:`TreeModel`: which version each (dataset, loop iteration) runs under a threshold
  assignment. ``ThresholdDataset.values[name]`` holds one E_par per iteration of the
  construct's loop (one value: the same in every iteration), aligned across the
  thresholds of a tree, so a config's *path* per dataset is known without running it —
  the "certainty about the control flow" that §2.1's caching and complete information
  rest on. A threshold a dataset has no value for is never compared (its guard is false).
- Assignments are plateau indices (§3.5): index k < m is "true from the (k+1)-th smallest
  training E_par up", m is "false everywhere". Probes are written with the *lower* edge of
  a plateau (1 = "T set to 1", v_m + 1 = "T set to ∞"), final answers with the *upper* edge
  (Alg. 2 keeps T_upper: the largest value that still satisfies every dataset; ∞ is
  ``futhark autotune``'s thresholdMax), so a final answer is never a probe already run.
- :class:`Observations`: results by configuration, per-dataset times by path (one
  benchmark per code version, §2.1), per-iteration times from instrumentation (Alg. 8).
- The driver of the algorithms (:class:`~searchlab.searchers._threshold.generator.GeneratorSearcher`)
  is in :mod:`searchlab.searchers._threshold.generator`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searchlab.core.records import Config, Direction, Result, Status
from searchlab.core.spaces import ThresholdDataset, ThresholdTree

THRESHOLD_MIN = 1  # futhark autotune's thresholdMin: "T set to 1"
THRESHOLD_MAX = 2_000_000_000  # futhark autotune's thresholdMax: "T set to ∞"
_COMPARED = re.compile(r"Compared ([^ ]+) <= (-?[0-9]+)")

Leaves = tuple[tuple[str, bool], ...]


class TreeModel:
    """Static facts about a threshold tree and the paths configurations take."""

    def __init__(self, tree: ThresholdTree) -> None:
        self.tree = tree
        self.names = tree.names
        self.train: tuple[ThresholdDataset, ...] = tree.train_datasets()
        self.reps = {n: tree.plateau_values(n) for n in self.names}
        self.m = {n: len(r) - 1 for n, r in self.reps.items()}
        self.kids = {n: tree.children(n) for n in (None, *self.names)}
        self.roots = tuple(t.name for t in self.kids[None])
        self.root_of: dict[str, str] = {}
        self.subtree: dict[str, list[str]] = {}
        for root in self.roots:
            self.subtree[root] = self._preorder(root)
            for n in self.subtree[root]:
                self.root_of[n] = root
        self.loop_based = {n: any(len(set(d.values.get(n, ()))) > 1 for d in self.train) for n in self.names}
        self.iterations = {(d.name, r): max((len(d.values.get(n, ())) for n in self.subtree[r]), default=0)
                           for d in self.train for r in self.roots}

    def _preorder(self, name: str) -> list[str]:
        out = [name]
        for child in self.kids[name]:
            out.extend(self._preorder(child.name))
        return out

    def postorder(self, root: str) -> list[str]:
        """Deepest first (DFS in Algs. 2, 4-8): a node's subtree is tuned before it."""
        out: list[str] = []
        for child in self.kids[root]:
            out.extend(self.postorder(child.name))
        return [*out, root]

    def ancestors(self, name: str) -> list[tuple[str, bool]]:
        """(ancestor, outcome that leads towards ``name``), nearest first."""
        out, node = [], self.tree.threshold(name)
        while node.parent is not None:
            out.append((node.parent, node.branch))
            node = self.tree.threshold(node.parent)
        return out

    def values(self, name: str, train_only: bool = True) -> tuple[int, ...]:
        """The distinct training E_par values v1 < ... < vm (Ē without ∞)."""
        return self.reps[name][:-1] if self.m[name] else ()

    # -- representations of plateau indices --------------------------------------------------
    def probe_value(self, name: str, k: int) -> int:
        vs = self.values(name)
        if k == 0:
            return min(THRESHOLD_MIN, vs[0]) if vs else THRESHOLD_MIN
        return vs[k - 1] + 1

    def final_value(self, name: str, k: int) -> int:
        return self.reps[name][k] if k < self.m[name] else THRESHOLD_MAX

    def index(self, name: str, value: int) -> int:
        return self.tree.plateau_index(name, int(value))

    def probe(self, assign: Mapping[str, int]) -> Config:
        return Config({n: self.probe_value(n, assign[n]) for n in self.names})

    def final(self, assign: Mapping[str, int]) -> Config:
        return Config({n: self.final_value(n, assign[n]) for n in self.names})

    def all_false(self) -> dict[str, int]:
        return {n: self.m[n] for n in self.names}

    # -- paths ----------------------------------------------------------------------------
    @staticmethod
    def value(d: ThresholdDataset, name: str, i: int) -> int | None:
        vs = d.values.get(name, ())
        return vs[min(i, len(vs) - 1)] if vs else None

    def leaves(self, config: Mapping[str, Any], d: ThresholdDataset, root: str, i: int) -> Leaves:
        """The version(s) dataset ``d`` runs in iteration ``i`` of ``root``'s construct."""
        e = self.value(d, root, i)
        outcome = e is not None and int(config[root]) <= e
        below = [t.name for t in self.kids[root] if t.branch == outcome]
        if not below:
            return ((root, outcome),)
        return tuple(leaf for child in below for leaf in self.leaves(config, d, child, i))

    def signature(self, config: Mapping[str, Any], d: ThresholdDataset) -> tuple[tuple[Leaves, ...], ...]:
        return tuple(tuple(self.leaves(config, d, r, i) for i in range(self.iterations[(d.name, r)]))
                     for r in self.roots)


# -- caches ------------------------------------------------------------------------------------
@dataclass
class Observations:
    """Everything measured so far, and what can be composed from it."""

    model: TreeModel
    direction: Direction = Direction.MINIMIZE
    results: dict[Config, Result] = field(default_factory=dict)
    per_dataset: dict[tuple[str, Any], float] = field(default_factory=dict)
    totals: dict[Any, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    instr: dict[tuple[str, str, int, Leaves], float] = field(default_factory=dict)
    outside: dict[str, float] = field(default_factory=dict)

    @property
    def sign(self) -> float:
        return 1.0 if self.direction is Direction.MINIMIZE else -1.0

    def _loss(self, result: Result) -> float:
        m = result.measurement
        if m.status is not Status.OK or m.objective is None:
            return math.inf
        return self.sign * m.objective

    def add(self, config: Config, result: Result) -> None:
        self.results[config] = result
        loss = self._loss(result)
        self.totals[tuple(self.model.signature(config, d) for d in self.model.train)] = loss
        m = result.measurement
        names = [d.name for d in self.model.train]
        if not math.isfinite(loss) or not all(n in m.datasets for n in names):
            return
        self.weights.update({k: float(v) for k, v in dict(m.extra.get("weights") or {}).items()})
        for d in self.model.train:
            self.per_dataset[(d.name, self.model.signature(config, d))] = self.sign * float(m.datasets[d.name])
        self._add_instrumentation(config, m.extra.get("instrumentation"), m.datasets)

    def _add_instrumentation(self, config: Config, instr: Any, times: Mapping[str, float]) -> None:
        if not isinstance(instr, Mapping):
            return
        for d in self.model.train:
            records = instr.get(d.name) or []
            inside = 0.0
            for rec in records:
                if not rec.get("comparisons"):
                    continue
                root, i = rec["comparisons"][0][0], int(rec["iteration"])
                if root not in self.model.subtree:
                    continue
                key = (d.name, root, i, self.model.leaves(config, d, root, i))
                self.instr[key] = self.sign * float(rec["time_s"])
                inside += float(rec["time_s"])
            self.outside[d.name] = self.sign * (float(times[d.name]) - inside)

    def weight(self, name: str) -> float:
        return self.weights.get(name, 1.0)

    def dataset_costs(self, config: Config, instrumented: bool = False) -> dict[str, float] | None:
        """Per training dataset time of ``config``: measured, or composed from the paths."""
        out = {}
        for d in self.model.train:
            t = self.per_dataset.get((d.name, self.model.signature(config, d)))
            if t is None and instrumented:
                t = self.composed(config, d)
            if t is None:
                return None
            out[d.name] = t
        return out

    def composed(self, config: Config, d: ThresholdDataset, roots: Sequence[str] | None = None) -> float | None:
        """Dataset time from per-iteration instrumentation (complete information, §3.5)."""
        if d.name not in self.outside:
            return None
        total = self.outside[d.name]
        for r in roots if roots is not None else self.model.roots:
            for i in range(self.model.iterations[(d.name, r)]):
                t = self.instr.get((d.name, r, i, self.model.leaves(config, d, r, i)))
                if t is None:
                    return None
                total += t
        return total

    def cost(self, config: Config, instrumented: bool = False) -> float | None:
        """The objective (smaller is better) of ``config``, if known or composable."""
        if config in self.results:
            return self._loss(self.results[config])
        costs = self.dataset_costs(config, instrumented)
        if costs is not None:
            return sum(self.weight(n) * t for n, t in costs.items())
        return self.totals.get(tuple(self.model.signature(config, d) for d in self.model.train))


# -- tree-aware enumeration (exhaustive search over distinct behaviours) -----------------------
def _cuts(model: TreeModel, name: str, reached: frozenset[tuple[str, int]]) -> list[int]:
    """Plateau indices giving distinct partitions of the reached (dataset, iteration)s."""
    by_name = {d.name: d for d in model.train}
    seen = sorted({e for d, i in reached if (e := model.value(by_name[d], name, i)) is not None})
    return [model.index(name, e) for e in seen] + [model.m[name]]


def _behaviours(model: TreeModel, name: str, reached: frozenset[tuple[str, int]]) -> list[dict[str, int]]:
    """Every distinct behaviour of ``name``'s subtree on the reached comparisons."""
    by_name = {d.name: d for d in model.train}
    out: list[dict[str, int]] = []
    for k in _cuts(model, name, reached) if reached else [model.m[name]]:
        rep = model.reps[name][k]
        true = frozenset((d, i) for d, i in reached
                         if (e := model.value(by_name[d], name, i)) is not None and rep <= e and k < model.m[name])
        parts = [_behaviours(model, c.name, true if c.branch else reached - true) for c in model.kids[name]]
        for combo in itertools.product(*parts):
            merged = {name: k}
            for part in combo:
                merged.update(part)
            out.append(merged)
    return out


def tree_behaviours(model: TreeModel, root: str) -> list[dict[str, int]]:
    reached = frozenset((d.name, i) for d in model.train for i in range(model.iterations[(d.name, root)]))
    return _behaviours(model, root, reached)


class TreeWiseEnumeration:
    """Alg. 1 + 4 as an exhaustive search: every distinct behaviour of one tree at a time
    (thresholds a behaviour never reaches are not varied), the other trees all-false; then
    the per-tree bests combined (run times of separate constructs add up)."""

    def __init__(self, tree: ThresholdTree) -> None:
        self.model = TreeModel(tree)
        self.per_tree = {r: tree_behaviours(self.model, r) for r in self.model.roots}
        self.size = sum(len(b) for b in self.per_tree.values()) + (len(self.per_tree) > 1)
        self.best: dict[str, tuple[float, dict[str, int]]] = {}
        self._tree_of: dict[Config, list[tuple[str, dict[str, int]]]] = {}

    def configs(self) -> list[Config]:
        out: list[Config] = []
        base = self.model.all_false()
        for root, behaviours in self.per_tree.items():
            for b in behaviours:
                config = Config({n: self.model.reps[n][k] for n, k in {**base, **b}.items()})
                self._tree_of.setdefault(config, []).append((root, b))
                if len(self._tree_of[config]) == 1:
                    out.append(config)
        return out

    def observe(self, config: Config, loss: float) -> None:
        for root, b in self._tree_of.get(config, []):
            if root not in self.best or loss < self.best[root][0]:
                self.best[root] = (loss, b)

    def combined(self) -> Config | None:
        """The per-tree bests together (None for a single tree: nothing to combine)."""
        if len(self.per_tree) < 2 or len(self.best) < len(self.per_tree):
            return None
        assign = self.model.all_false()
        for _, b in self.best.values():
            assign.update(b)
        return Config({n: self.model.reps[n][k] for n, k in assign.items()})


def parse_comparisons(log: Sequence[str]) -> dict[str | None, list[tuple[str, int]]]:
    """``Compared NAME <= VALUE`` lines (Futhark's ``-L`` log, the regex of ``futhark
    autotune``), grouped by the ``# dataset NAME`` lines before them."""
    out: dict[str | None, list[tuple[str, int]]] = {}
    current: str | None = None
    for line in log:
        if line.startswith("# dataset "):
            current = line[len("# dataset "):].strip()
            continue
        match = _COMPARED.search(line)
        if match:
            out.setdefault(current, []).append((match.group(1), int(match.group(2))))
    return out
