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

import functools
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from searchlab.core.records import Config, Direction, Result, Status
from searchlab.core.spaces import DerivationGraph, IntKnob, Knob, KnobSpace, view_as
from searchlab.searchers._support.gp import GaussianProcess, expected_improvement


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


FIT_ROWS = 256
"""Above this many observations the GP's hyperparameters are fitted on a subset of this size (issue 47, the speed
item): each likelihood evaluation builds n x n x dims arrays (240 MB at 1000 trials on 30 parameters). The shared
tables' budgets (220 in bench/peers.py) stay below it, so ``auto`` there is unchanged."""


@functools.cache
def _blas_controller() -> Any:
    """One ``threadpoolctl`` controller per process: building one scans the loaded libraries (2.5 ms, a
    third of a second per 130-proposal run when built per proposal); NumPy's BLAS is loaded before the
    first proposal, so the first controller already sees it."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class KnobModel:
    """The surrogate state of one run: pool, encodings, observations; picks the next row."""

    def __init__(self, space: KnobSpace, direction: Direction, rng: np.random.Generator, *, initial: int,
                 candidates: int, local_every: int, refit_every: int, alignment: bool, prior: float,
                 min_feasibility: float = 0.5) -> None:
        self.direction, self.rng = direction, rng
        self.min_feasibility = min_feasibility
        self.initial, self.local_every, self.refit_every = initial, local_every, refit_every
        self.pool = valid_pool(space, candidates, rng)
        self.notes: list[str] = []  # what stood in for the full model, and why (AutoSearcher.notes, logged)
        if len(self.pool) < space.size() and plain_product(space):
            self._note(f"candidates: {len(self.pool)} uniform draws from a product of {space.size():.3g} "
                       "configurations (no known constraint), not the whole space")
        self.row = {c: i for i, c in enumerate(self.pool)}
        self.x, self.index = encode(space, self.pool, alignment)
        self.used = np.zeros(len(self.pool), dtype=bool)  # proposed (pending or told)
        self.told: dict[int, float | None] = {}  # row -> transformed objective, None when it failed
        self.gp = GaussianProcess(prior=(math.log(prior), 1.0) if prior > 0 else None)
        self.feasible_gp = GaussianProcess(prior=self.gp.prior, signal=0.25, noise=0.05)
        self._fits = 0
        self._model_steps = 0

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            logging.getLogger("searchlab.auto").info("auto: %s", text)

    # -- observations -------------------------------------------------------------------
    def _target(self, result: Result) -> float | None:
        m = result.measurement
        if m.status is not Status.OK or m.objective is None or m.is_subproblem or not math.isfinite(m.objective):
            return None
        value = float(m.objective)
        sign = 1.0 if self.direction is Direction.MINIMIZE else -1.0
        return sign * math.log(value) if value > 0 else sign * value

    def observe(self, config: Config, result: Result) -> None:
        row = self.row.get(config)
        if row is None:  # a replayed configuration outside a sampled pool: add it
            return
        self.used[row] = True
        self.told[row] = self._target(result)

    def mark(self, config: Config) -> None:
        row = self.row.get(config)
        if row is not None:
            self.used[row] = True

    @property
    def exhausted(self) -> bool:
        return bool(self.used.all())

    # -- proposals ----------------------------------------------------------------------
    def next_row(self, pending: Sequence[int]) -> int | None:
        """The next pool row to propose, or None when every row is used.

        BLAS runs on one thread here: the matrices are at most a few hundred rows, where
        threads only add synchronisation, and OpenBLAS's spinning threads slowed a 220 x 220
        Cholesky factorisation from 0.4 ms to 260 ms when other processes shared the cores
        (measured on the 2-core CI machine type; docs/searchers.md, "auto")."""
        with _blas_controller().limit(limits=1, user_api="blas"):
            return self._next_row(pending)

    def _next_row(self, pending: Sequence[int]) -> int | None:
        free = np.flatnonzero(~self.used)
        if len(free) == 0:
            return None
        good = [(r, y) for r, y in self.told.items() if y is not None]
        if len(self.told) + len(pending) < self.initial or len(good) < 2:
            return self._space_filling(free)
        return self._model_step(free, good, pending)

    def _space_filling(self, free: np.ndarray) -> int:
        chosen = np.flatnonzero(self.used)
        sample = free if len(free) <= 2000 else self.rng.choice(free, 2000, replace=False)
        if len(chosen) == 0:
            return int(self.rng.choice(sample))
        d = ((self.x[sample][:, None, :] - self.x[chosen][None, :, :]) ** 2).sum(-1).min(1)
        if any(y is None for y in self.told.values()):  # after a failure: far from the chosen *and* likely to run
            d = d * self._feasibility(sample)
        return int(sample[int(np.argmax(d + 1e-9 * self.rng.random(len(d))))])

    def _model_step(self, free: np.ndarray, good: list[tuple[int, float]], pending: Sequence[int]) -> int:
        rows = np.array([r for r, _ in good])
        y = np.array([v for _, v in good])
        ys = (y - y.mean()) / (y.std() or 1.0)
        # Hyperparameters move a lot while data is scarce, little later: refit every step early on.
        optimise = len(good) < 40 or self._fits % self.refit_every == 0 or self.gp.lengths is None
        self._fits += 1
        if optimise and len(rows) > FIT_ROWS:  # bounded cost: the likelihood's gradient is n x n x dims
            self._note(f"GP hyperparameters fitted on {FIT_ROWS} of the observations (the best quarter and a random "
                       f"rest) once there are more than {FIT_ROWS}; conditioned on all")
            order = np.argsort(ys)
            keep = np.concatenate([order[:FIT_ROWS // 4],
                                   self.rng.choice(order[FIT_ROWS // 4:], FIT_ROWS - FIT_ROWS // 4, replace=False)])
            self.gp.fit(self.x[rows[keep]], ys[keep], optimise=True)
            optimise = False
        self.gp.fit(self.x[rows], ys, optimise=optimise)
        best = float(ys.min())
        if pending:  # kriging believer: pending rows at their posterior mean
            prow = np.array(list(pending))
            believed, _ = self.gp.predict(self.x[prow])
            self.gp.fit(self.x[np.concatenate([rows, prow])], np.concatenate([ys, believed]), optimise=False)
        self._model_steps += 1
        candidates = free
        if self.local_every and self._model_steps % self.local_every == 0:
            incumbent = rows[int(np.argmin(ys))]
            near = free[(self.index[free] != self.index[incumbent]).sum(1) == 1]
            if len(near):
                candidates = near
        candidates, p = self._likely(candidates)
        mean, std = self.gp.predict(self.x[candidates])
        score = expected_improvement(mean, std, best) * p
        top = np.flatnonzero(score >= score.max() - 1e-12)
        return int(candidates[int(self.rng.choice(top))])

    def _likely(self, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray | float]:
        """The candidates predicted to run with probability >= ``min_feasibility`` (all of them when
        none is), and that probability. Weighting EI by it alone was not enough where hidden
        constraints dominate: on the held-out kernels 63 % of model steps failed (docs/baselines.md)."""
        p = self._feasibility(candidates)
        if isinstance(p, np.ndarray) and self.min_feasibility > 0:
            keep = p >= self.min_feasibility
            if keep.any():
                return candidates[keep], p[keep]
        return candidates, p

    def _feasibility(self, candidates: np.ndarray) -> np.ndarray | float:
        """P(no hidden-constraint failure): GP regression on 0/1 outcomes (BaCO §4.3's role) with its
        own length scales (failures follow resource limits, not run time), fitted under the same prior."""
        labels = {r: (0.0 if y is None else 1.0) for r, y in self.told.items()}
        if all(v == 1.0 for v in labels.values()):
            return 1.0
        rows = np.array(list(labels))
        z = np.array(list(labels.values()))
        if self.feasible_gp.lengths is None:
            self.feasible_gp.lengths = self.gp.lengths
        self.feasible_gp.fit(self.x[rows], z - z.mean(), optimise=len(z) >= 5)
        p, _ = self.feasible_gp.predict(self.x[candidates])
        return np.asarray(np.clip(p + z.mean(), 0.02, 1.0))
