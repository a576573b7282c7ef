"""The knob half of ``auto``: which valid configuration to propose next (GP x feasibility, EI, local finish).

What each proposal costs, and what that trades (issue 53; the model itself is described in ``knobs.py``):

- **Incremental posterior** (``posterior.py``): between hyperparameter refits a new observation is one more row of
  the Cholesky factor, O(n M) instead of a refit and a fresh prediction, O(n^3 + n^2 M). Exact; it trades nothing.
- **Hyperparameters refitted on a schedule, not every step**: while there are fewer than ``DENSE_UNTIL`` (40)
  observations, whenever their number has grown by 1.25 since the last fit (at 10, 13, 17, 22, 28, 35, 44); from
  then on whenever it has grown by ``refit_growth`` (3: at 132; about 8 fits over 250 evaluations, against ~20 with
  1.25 throughout and ~100 before issue 53). Between refits the length scales are the last fit's, as in SMAC's and
  BoTorch's practice of refitting on a schedule (Hutter, Hoos & Leyton-Brown 2011, §4.3; Balandat et al. 2020,
  §5). Early fits are cheap and matter (a schedule of 10, 20, 40 was too rough for the smooth bowl of
  ``tests/searchers/test_auto.py``); late fits are the costly ones (a fresh conditioning is O(n^2 M)) and the
  maximum a-posteriori length scales move little once there are a few tens of points. Trades: from 44 to 132
  observations the length scales are up to 3x the data old. Each fit is L-BFGS-B warm-started from the last one,
  capped at ``FIT_ITERATIONS`` iterations (15 lost 0.010 [0.001, 0.021] of the optimum at 20 evaluations on the
  choosing seeds), on at most ``FIT_ROWS`` observations (the best quarter and a random rest).
- **A bounded candidate block**: the posterior is conditioned at each fit for at most ``BLOCK`` candidates: all
  valid configurations when there are no more (the shared tables: 4362), else a fresh random sample of the unused
  ones, plus the incumbent's one-knob neighbours, predicted afresh on local steps. Cost per proposal no longer
  grows with the space; on spaces larger than ``BLOCK`` a model step between refits sees a sample of it (as BaCO
  and Optuna's GP sampler do: a random candidate set plus local search around the best points).
- **Focus** (``focus``, 1024): right after a fit the posterior is kept only for the ``focus`` candidates with the
  lowest lower confidence bound, mean - 2 sd (Srinivas et al. 2010, §3): those that could still plausibly win.
  Every later result then costs O(n focus) instead of O(n M), and each expected-improvement step scans ``focus``
  candidates. Trades: until the next fit, a candidate outside the kept set is reached only as a neighbour of the
  incumbent (local steps predict those afresh), even if new results make it look better. Chosen on seeds 100-119
  of the four shared tables at 250 evaluations (80 runs each; mean fraction of the optimum minus that of the code
  before, ``refit_growth`` 1.25 and no focus, paired, 95 % bootstrap): 1024 +0.001 / -0.003 / -0.001 / +0.004 /
  -0.003 at 20 / 40 / 60 / 100 / 250, 2048 +0.001 / +0.000 / +0.003 / +0.009 / +0.000, every interval within
  +-0.025 and holding 0. 2048 scored higher but inside the noise; 1024 is the default because it is 7-15 % faster
  per run (the speed goal of issue 53), the fastest of 512 / 1024 / 2048 with no measurable loss.
- **The feasibility model's hyperparameters are refitted only when something new failed** since its last fit:
  its labels' information is where failures sit among successes. Trades: between failures its length scales do
  not follow the successes. On the held-out pocl spaces (failures 20-80 %) the failed share stayed 0.344 against
  0.353 before, the fraction of the optimum +0.009 [-0.007, +0.027] at 20 evaluations.
- **BLAS on one thread, set directly** (``blas.py``): the matrices are small, where threads only add
  synchronisation; the thread count is set through each library's own call (5 us) instead of
  ``threadpoolctl``'s ``limit`` (0.1 ms per call, twice per proposal).
- **Done when exhausted**: a proposal on a space whose every configuration was proposed costs nothing
  (``exhausted`` is a counter), so a budget past the space size ends at once.

The feasibility model (hidden constraints) is a second posterior of the same kind over every told configuration
(0 / 1 labels), built when the first failure is seen.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from searchlab.core.records import Config, Direction, Result, Status
from searchlab.core.spaces import KnobSpace
from searchlab.searchers._auto.blas import one_blas_thread
from searchlab.searchers._auto.knobs import candidate_set, plain_product
from searchlab.searchers._auto.posterior import Posterior
from searchlab.searchers._support.gp import GaussianProcess, expected_improvement

FIT_ROWS = 128
"""Hyperparameters are fitted on at most this many observations (the best quarter and a random rest); the model
is conditioned on all of them. Each likelihood evaluation is O(FIT_ROWS^2 d) memory and O(FIT_ROWS^3) time."""
FIT_ITERATIONS = 30  # L-BFGS-B iterations per refit (warm-started from the previous fit)
DENSE_UNTIL = 40
"""Below this many observations the hyperparameters are refitted whenever the data grew by ``DENSE_GROWTH``; from
here on by ``refit_growth``. Early fits are cheap and the length scales still move a lot; late fits are the costly
ones (conditioning is O(n^2 M)) and move little."""
DENSE_GROWTH = 1.25
BLOCK = 8192  # candidates the posterior is kept for (all valid configurations when there are no more)
FOCUS_KAPPA = 2.0
"""The candidates kept until the next fit (``focus``) are those with the lowest mean - FOCUS_KAPPA sd: the ones
that could still plausibly beat the rest (a lower confidence bound, Srinivas et al. 2010)."""
SPACE_FILL_SAMPLE = 2000  # free configurations considered per space-filling step


class KnobModel:
    """The surrogate state of one run: pool, encodings, observations, posteriors; picks the next row."""

    def __init__(self, space: KnobSpace, direction: Direction, rng: np.random.Generator, *, initial: int,
                 candidates: int, local_every: int, refit_growth: float, alignment: bool, prior: float,
                 min_feasibility: float = 0.5, focus: int = 0) -> None:
        self.direction, self.rng = direction, rng
        self.focus = focus
        self.min_feasibility = min_feasibility
        self.initial, self.local_every, self.refit_growth = initial, local_every, refit_growth
        found = candidate_set(space, candidates, alignment, rng)
        self.pool, self.row, self.x, self.index = found.pool, found.row, found.x, found.index
        self.notes: list[str] = []  # what stood in for the full model, and why (AutoSearcher.notes, logged)
        if len(self.pool) < space.size() and plain_product(space):
            self._note(f"candidates: {len(self.pool)} uniform draws from a product of {space.size():.3g} "
                       "configurations (no known constraint), not the whole space")
        self.used = np.zeros(len(self.pool), dtype=bool)  # proposed (pending or told)
        self._n_used = 0
        self.told: dict[int, float | None] = {}  # row -> objective as measured (sign: smaller is better), None: failed
        self.hyper = GaussianProcess(prior=(math.log(prior), 1.0) if prior > 0 else None)
        self.feasible_hyper = GaussianProcess(prior=self.hyper.prior, signal=0.25, noise=0.05)
        self.post: Posterior | None = None
        self.feasible: Posterior | None = None
        self._log_scale = True  # targets are log(value) while every value is > 0
        self._block = np.zeros(0, dtype=np.int64)  # pool rows of the posterior's block
        self._where = np.full(len(self.pool), -1)  # pool row -> block position, -1 outside the block
        self._fitted_at = 0  # observations at the last hyperparameter fit
        self._feasible_fitted_at = -1  # failures at the feasibility model's last hyperparameter fit
        self._x_used: np.ndarray | None = None  # the inputs the posteriors were built on (transfer_gp appends some)
        self._model_steps = 0

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            logging.getLogger("searchlab.auto").info("auto: %s", text)

    # -- observations -------------------------------------------------------------------
    def _value(self, result: Result) -> float | None:
        m = result.measurement
        if m.status is not Status.OK or m.objective is None or m.is_subproblem or not math.isfinite(m.objective):
            return None
        return float(m.objective) * (1.0 if self.direction is Direction.MINIMIZE else -1.0)

    def _target(self, value: float) -> float:
        """Smaller is better: log of the value (run times span decades) while every value is positive, else the
        value itself (a score that can be negative: a log of |value| would not keep the order)."""
        if not self._log_scale:
            return value
        return math.log(value) if self.direction is Direction.MINIMIZE else -math.log(-value)

    def observe(self, config: Config, result: Result) -> None:
        """Learn one result; the posteriors gain a row (BLAS on one thread, as in :meth:`next_row`)."""
        with one_blas_thread():
            self._observe(config, result)

    def _observe(self, config: Config, result: Result) -> None:
        row = self.row.get(config)
        if row is None:  # a replayed configuration outside a sampled pool
            return
        self.mark(config)
        value = self._value(result)
        self.told[row] = value
        if self.x is not self._x_used:
            self.post = self.feasible = None
        if value is not None and self._log_scale and (value <= 0 if self.direction is Direction.MINIMIZE else value >= 0):
            self._log_scale = False  # the log no longer keeps the order: every target changes, rebuild
            self.post = None
        if self.post is not None and value is not None:
            self.post.add(self.x[row], self._target(value))
        if self.feasible is not None:
            self.feasible.add(self.x[row], 0.0 if value is None else 1.0)
        elif value is None:
            self._fitted_at = 0  # first failure: the feasibility model is built at the next refit

    def mark(self, config: Config) -> None:
        row = self.row.get(config)
        if row is not None:
            self.take(row)

    def take(self, row: int) -> None:
        """Row ``row`` is proposed (pending or told): never proposed again."""
        if not self.used[row]:
            self.used[row] = True
            self._n_used += 1

    @property
    def exhausted(self) -> bool:
        return self._n_used >= len(self.pool)

    # -- proposals ----------------------------------------------------------------------
    def next_row(self, pending: Sequence[int]) -> int | None:
        """The next pool row to propose, or None when every row is used.

        BLAS runs on one thread here: the matrices are at most a few hundred rows, where threads only add
        synchronisation, and OpenBLAS's spinning threads slowed a 220 x 220 Cholesky factorisation from 0.4 ms to
        260 ms when other processes shared the cores (docs/searchers.md, "auto")."""
        if self.exhausted:
            return None
        with one_blas_thread():
            return self._next_row(pending)

    def _next_row(self, pending: Sequence[int]) -> int:
        good = [r for r, v in self.told.items() if v is not None]
        if len(self.told) + len(pending) < self.initial or len(good) < 2:
            return self._space_filling()
        return self._model_step(good, pending)

    def _free(self, limit: int) -> np.ndarray:
        """Up to ``limit`` unused rows, uniformly (all of them when there are no more)."""
        free = np.flatnonzero(~self.used)
        return free if len(free) <= limit else self.rng.choice(free, limit, replace=False)

    def _space_filling(self) -> int:
        """Greedy maximin design over the valid set; after a failure, far from the chosen *and* likely to run."""
        sample = self._free(SPACE_FILL_SAMPLE)
        chosen = np.flatnonzero(self.used)
        if len(chosen) == 0:
            return int(self.rng.choice(sample))
        d = ((self.x[sample][:, None, :] - self.x[chosen][None, :, :]) ** 2).sum(-1).min(1)
        if any(v is None for v in self.told.values()):
            d = d * self._feasibility_fresh(sample)
        return int(sample[int(np.argmax(d + 1e-9 * self.rng.random(len(d))))])

    def _refit(self, good: list[int]) -> None:
        """Hyperparameters (MAP, warm-started), a new candidate block, both posteriors conditioned afresh."""
        rows = np.array(good)
        y = np.array([self._target(v) for v in (self.told[r] for r in good) if v is not None])
        ys = (y - y.mean()) / (y.std() or 1.0)
        fit = np.arange(len(rows))
        if len(rows) > FIT_ROWS:  # bounded cost: the best quarter and a random rest
            self._note(f"GP hyperparameters fitted on {FIT_ROWS} of the observations (the best quarter and a random "
                       f"rest) once there are more than {FIT_ROWS}; conditioned on all")
            order = np.argsort(ys)
            fit = np.concatenate([order[:FIT_ROWS // 4],
                                  self.rng.choice(order[FIT_ROWS // 4:], FIT_ROWS - FIT_ROWS // 4, replace=False)])
        self.hyper.fit(self.x[rows[fit]], ys[fit], optimise=True, max_iter=FIT_ITERATIONS)
        self._fitted_at = len(rows)
        free = np.flatnonzero(~self.used)
        if len(self.pool) > BLOCK:
            self._note(f"candidates: the model keeps its posterior for {BLOCK} of the {len(self.pool)} valid "
                       "configurations, a new random sample of the unused ones at each refit, plus the incumbent's "
                       "neighbours")
        self._block = free if len(free) <= BLOCK else np.sort(self.rng.choice(free, BLOCK, replace=False))
        assert self.hyper.lengths is not None
        self.post = Posterior.conditioned(self.x[self._block], self.hyper.lengths, self.hyper.signal,
                                          self.hyper.noise, self.x[rows], y)
        if 0 < self.focus < len(self._block):  # the most promising candidates, until the next fit
            self._note(f"focus: after each fit the posterior is kept for the {self.focus} candidates with the lowest "
                       "lower confidence bound, not all of them (searcher.focus=0: all)")
            mean, std, _, _ = self.post.mean_std()
            kept = np.sort(np.argpartition(mean - FOCUS_KAPPA * std, self.focus)[:self.focus])
            self.post.keep(kept)
            self._block = self._block[kept]
        self._where = np.full(len(self.pool), -1)
        self._where[self._block] = np.arange(len(self._block))
        block = self.x[self._block]
        self._x_used = self.x
        self.feasible = None
        labels = {r: (0.0 if v is None else 1.0) for r, v in self.told.items()}
        if any(z == 0.0 for z in labels.values()):
            lrows, z = np.array(list(labels)), np.array(list(labels.values()))
            if self.feasible_hyper.lengths is None or len(self.feasible_hyper.lengths) != self.x.shape[1]:
                self.feasible_hyper.lengths = self.hyper.lengths.copy()
            failures = int((z == 0.0).sum())
            if len(z) >= 5 and failures != self._feasible_fitted_at:  # refitted when something new failed
                keep = np.arange(len(z)) if len(z) <= FIT_ROWS else self.rng.choice(len(z), FIT_ROWS, replace=False)
                self.feasible_hyper.fit(self.x[lrows[keep]], z[keep] - z[keep].mean(), optimise=True,
                                        max_iter=FIT_ITERATIONS)
                self._feasible_fitted_at = failures
            assert self.feasible_hyper.lengths is not None
            self.feasible = Posterior.conditioned(block, self.feasible_hyper.lengths, self.feasible_hyper.signal,
                                                  self.feasible_hyper.noise, self.x[lrows], z)

    def _refit_due(self, n: int) -> bool:
        growth = min(self.refit_growth, DENSE_GROWTH) if self._fitted_at < DENSE_UNTIL else self.refit_growth
        return self.post is None or self.x is not self._x_used or n >= self._fitted_at * growth

    def _loss(self, row: int) -> float:
        value = self.told.get(row)
        return math.inf if value is None else value

    def _model_step(self, good: list[int], pending: Sequence[int]) -> int:
        if self._refit_due(len(good)):
            self._refit(good)
        post = self.post
        assert post is not None
        self._model_steps += 1
        rows = self._block[~self.used[self._block]]
        local = self.local_every and self._model_steps % self.local_every == 0
        if local:
            near = self._neighbours(min(good, key=self._loss))
            if len(near):
                rows = near
        if len(rows) == 0:  # the block is used up before the next refit: a fresh block
            self._refit(good)
            rows = self._block[~self.used[self._block]]
        mean, std, p = self._predict(rows, pending)
        centre, spread = post.centre()
        best = (min(post.y) - centre) / spread
        score = expected_improvement(mean, std, best)
        if isinstance(p, np.ndarray):  # EI x P(runs), and skip likely failures while any other is left
            score = score * p
            keep = p >= self.min_feasibility
            if self.min_feasibility > 0 and keep.any():
                score = np.where(keep, score, -np.inf)
        top = np.flatnonzero(score >= score.max() - 1e-12)
        return int(rows[int(self.rng.choice(top))])

    def _predict(self, rows: np.ndarray, pending: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
        """Standardised mean and sd (pending rows conditioned on at their mean) and P(runs) at pool ``rows``."""
        post = self.post
        assert post is not None
        at = self._where[rows]
        inside = bool((at >= 0).all())
        if inside:
            mean, std, _, _ = post.mean_std(at)
            if pending:
                std = np.sqrt(post.fantasy_var([self.x[r] for r in pending])[at])
        else:
            mean, std = post.predict(self.x[rows])
        p: np.ndarray | float = 1.0
        if self.feasible is not None:
            f = self.feasible
            centre = f.centre()[0]
            raw = (f.a[at] - centre * f.b[at]) + centre if inside else f.predict(self.x[rows])[0] * f.centre()[1] + centre
            p = np.clip(raw, 0.02, 1.0)
        return mean, std, p

    def _feasibility_fresh(self, rows: np.ndarray) -> np.ndarray:
        """P(runs) at ``rows`` from a posterior on every told label (the space-filling steps, before any refit)."""
        labels = {r: (0.0 if v is None else 1.0) for r, v in self.told.items()}
        lrows, z = np.array(list(labels)), np.array(list(labels.values()))
        if self.feasible_hyper.lengths is None or len(self.feasible_hyper.lengths) != self.x.shape[1]:
            self.feasible_hyper.lengths = np.full(self.x.shape[1], 0.5)
        h = self.feasible_hyper
        assert h.lengths is not None
        post = Posterior.conditioned(np.zeros((0, self.x.shape[1])), h.lengths, h.signal, h.noise, self.x[lrows], z)
        mean, _ = post.predict(self.x[rows])
        centre, spread = post.centre()
        return np.asarray(np.clip(mean * spread + centre, 0.02, 1.0))

    def _neighbours(self, incumbent: int) -> np.ndarray:
        """The incumbent's unused one-knob neighbours in the pool (Kernel Tuner's Hamming neighbourhood)."""
        diff = (self.index != self.index[incumbent]).sum(1)
        return np.flatnonzero((diff == 1) & ~self.used)
