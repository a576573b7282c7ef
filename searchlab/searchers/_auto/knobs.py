"""Model-based search over a knob space's *valid* configurations (the knob half of ``auto``).

Builds on:

- BaCO (Hellsten et al., *BaCO: A Fast and Portable Bayesian Compiler Optimization
  Framework*, ASPLOS 2023, §4): a GP surrogate on log run time, a feasibility model for hidden
  constraints multiplied into the acquisition, candidates drawn from the set of configurations
  that satisfy the known constraints rather than from a relaxed continuous box;
- expected improvement (Jones, Schonlau & Welch 1998) with a Matérn-5/2 ARD GP (``searchers/_support/gp.py``);
- a space-filling start (greedy maximin design over the valid set) and "kriging believer"
  for evaluations in flight (Ginsbourger et al. 2010, §3.1: a pending point is added to the
  model at its posterior mean, so a batch spreads out instead of repeating one proposal);
- local search around the incumbent (every ``local_every``-th model step maximises EI only
  over the incumbent's one-knob neighbours, Kernel Tuner's Hamming neighbourhood): the
  trust-region finish that makes the last evaluations count on rugged GPU landscapes.

Deviations: the feasibility model is GP regression on 0/1 labels with its own length scales
(BaCO uses a random-forest classifier), and a model step considers only candidates it predicts
to run with probability >= ``min_feasibility`` (0.5) while any does -- BaCO only weights EI by
that probability, which left most model steps failing where hidden constraints dominate;
categorical knobs are one-hot encoded; ordered knobs by their normalised value index (powers
of two are then on a log scale). On spaces with more valid configurations than ``candidates``,
a seeded random subset of that size is the candidate set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces import DerivationGraph, IntKnob, Knob, KnobSpace, view_as


def valid_pool(space: KnobSpace, limit: int, rng: np.random.Generator) -> list[Config]:
    """Every valid configuration when there are at most ``limit``, else ``limit`` distinct random ones.

    The decision-DAG view counts valid configurations exactly and enumerates them with known
    constraints (and recorded-table membership) pruned on prefixes, so a table of 4362 members
    inside a product of millions costs milliseconds. A product with no known constraint and no listed
    members (what Optuna and Ray Tune give) is sampled directly, ``limit`` draws at once: through the
    view each uniform draw walked every value of every knob, 17 s for 2000 draws on 6 knobs of 129 values
    and hours for the default 20000 on 30 (issue 47, item 13).

    The full enumeration draws nothing from ``rng``, so it is kept per space object (the last few):
    a harness that runs many repeats on one space (``searchlab reproduce``, Kernel Tuner's loop with
    :func:`searchlab.integrations.kernel_tuner.knob_space` reusing its space) enumerated the same
    convolution space's valid set for every repeat, 1.0 of a 4.8 s repeat (issue 45, "auto must stay
    quick"). Each caller gets its own copy: a model may append a replayed configuration."""
    if plain_product(space) and space.size() > limit:
        return _product_sample(space, limit, rng)
    view, enumerated = _enumerated(space, limit)
    if enumerated is not None:
        return list(enumerated)
    dag = view.space
    assert isinstance(dag, DerivationGraph)
    pool: dict[Config, None] = {}
    for _ in range(20 * limit):
        pool.setdefault(view.decode(dag.word_config(dag.uniform_word(rng)[1])), None)
        if len(pool) >= limit:
            break
    return list(pool)


_ENUMERATED: dict[int, tuple[KnobSpace, int, Any, tuple[Config, ...] | None]] = {}  # id -> (space, limit, view, pool)
_ENUMERATED_KEPT = 4


def _enumerated(space: KnobSpace, limit: int) -> tuple[Any, tuple[Config, ...] | None]:
    """The space's decision-DAG view, and every valid configuration if there are at most ``limit`` (else None).
    Keyed by identity: ``TableKnobSpace`` compares equal across different member sets (``members`` is not
    compared), so an equality-keyed cache could hand one table's pool to another. The entry holds the space,
    so its id is not reused while it is kept."""
    hit = _ENUMERATED.get(id(space))
    if hit is not None and hit[0] is space and hit[1] == limit:
        return hit[2], hit[3]
    view = view_as(space, (DerivationGraph,))
    assert view is not None
    dag = view.space
    assert isinstance(dag, DerivationGraph)
    pool = tuple(view.decode(dag.word_config(w)) for w in dag.iter_words()) if dag.count_sinks() <= limit else None
    _ENUMERATED[id(space)] = (space, limit, view, pool)
    while len(_ENUMERATED) > _ENUMERATED_KEPT:
        del _ENUMERATED[next(iter(_ENUMERATED))]
    return view, pool


def plain_product(space: KnobSpace) -> bool:
    """Every configuration of the product is valid: no known constraint, and no subclass rule (a recorded table's
    membership, any other ``check``) that could refuse one."""
    cls = type(space)
    return not space.constraints and cls.check is KnobSpace.check and cls._drawable is KnobSpace._drawable


def _product_sample(space: KnobSpace, limit: int, rng: np.random.Generator) -> list[Config]:
    """``limit`` distinct uniform draws from an unconstrained product larger than ``limit``."""
    sizes = np.array([k.count for k in space.knobs], dtype=np.int64)
    rows: dict[tuple[int, ...], None] = {}
    while len(rows) < limit:
        for row in rng.integers(sizes, size=(limit - len(rows) + 16, len(sizes))).tolist():
            rows.setdefault(tuple(row), None)
    _, plan = space._plan  # (name, knob position, frozen values) in Config's sorted order: no dict per row
    return [Config.from_sorted(tuple((name, values[row[d]]) for name, d, values in plan)) for row in list(rows)[:limit]]


def _two_adic(values: Sequence[object] | IntKnob) -> np.ndarray | None:
    """Per value, how many times 2 divides it (normalised), for knobs of >= 3 positive integers
    that are not all powers of two; else None. GPU run times jump with the alignment of sizes
    to warps, wavefronts and memory transactions (on the shared tables block_size_x = 32, 64,
    128, 256 are the good ones and 48, 80, 96 ... are not), which a smooth kernel over the value
    index cannot express. An integer range is computed in numpy (10^6 values in milliseconds)."""
    if isinstance(values, IntKnob):
        if values.low <= 0 or values.count < 3:
            return None
        every = np.arange(values.low, values.high + 1, values.step, dtype=np.int64)
        shifts = np.minimum(np.log2(every & -every).round(), 10.0)
        if not (every & (every - 1)).any() or shifts.max() == shifts.min():
            return None
        return np.asarray((shifts - shifts.min()) / (shifts.max() - shifts.min()))
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        return None
    ints = [v for v in values if isinstance(v, int)]  # all of them (checked above)
    twos = np.array([min((v & -v).bit_length() - 1, 10) for v in ints], dtype=float)
    if all(v & (v - 1) == 0 for v in ints) or twos.max() == twos.min():
        return None  # all powers of two: the index already orders them by alignment
    return np.asarray((twos - twos.min()) / (twos.max() - twos.min()))


def _indexer(knob: Knob) -> Callable[[Any], int]:
    """Value -> index for one knob, without a scan per value (600,000 look-ups for a 20000-row pool on 30 knobs)."""
    if isinstance(knob, IntKnob):
        low, step = knob.low, knob.step
        return lambda v: (int(v) - low) // step
    table = {v: i for i, v in enumerate(knob.values)}
    return lambda v: table[v] if v in table else knob.values.index(v)


def encode(space: KnobSpace, configs: Sequence[Config], alignment: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Model inputs (ordered knobs: normalised index, plus the 2-adic alignment feature with
    ``alignment``; categorical: one-hot) and value indices."""
    look = [(k.name, _indexer(k)) for k in space.knobs]
    index = np.array([[at(c[name]) for name, at in look] for c in configs], dtype=np.int64).reshape(len(configs), len(look))
    columns: list[np.ndarray] = []
    for j, knob in enumerate(space.knobs):
        size = knob.count
        if knob.ordered:
            columns.append((index[:, j] / max(size - 1, 1))[:, None])
            twos = _two_adic(knob if isinstance(knob, IntKnob) else knob.values) if alignment else None
            if twos is not None:
                columns.append(twos[index[:, j]][:, None])
        else:
            columns.append(np.eye(size)[index[:, j]])
    return np.hstack(columns).astype(float), index


@dataclass(frozen=True)
class Candidates:
    """What the model proposes from: the configurations, their rows, model inputs and value indices (read only)."""

    pool: Sequence[Config]
    row: Mapping[Config, int]
    x: np.ndarray  # model inputs, constant columns dropped (a knob with one value tells the model nothing)
    index: np.ndarray  # value index per knob


_CANDIDATES: dict[tuple[int, int, bool], tuple[KnobSpace, Candidates]] = {}


def candidate_set(space: KnobSpace, limit: int, alignment: bool, rng: np.random.Generator) -> Candidates:
    """:func:`valid_pool` and its encoding; an enumerated valid set is kept per space object with its encoding
    (issue 53: encoding the 4362 rows of a shared table cost 10 ms, a twentieth of Kernel Tuner's own strategies'
    whole run, for every repeat on the same space). A sampled pool draws from ``rng`` and is not kept."""
    key = (id(space), limit, alignment)
    hit = _CANDIDATES.get(key)
    if hit is not None and hit[0] is space:
        return hit[1]
    pool = valid_pool(space, limit, rng)
    x, index = encode(space, pool, alignment)
    varying = np.ptp(x, axis=0) > 0 if len(x) > 1 else np.ones(x.shape[1], dtype=bool)
    found = Candidates(tuple(pool), {c: i for i, c in enumerate(pool)}, x[:, varying] if varying.any() else x, index)
    found.x.setflags(write=False)
    found.index.setflags(write=False)
    if not (plain_product(space) and space.size() > limit) and _enumerated(space, limit)[1] is not None:
        _CANDIDATES[key] = (space, found)
        while len(_CANDIDATES) > _ENUMERATED_KEPT:
            del _CANDIDATES[next(iter(_CANDIDATES))]
    return found
