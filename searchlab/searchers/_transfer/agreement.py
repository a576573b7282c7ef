"""How well each prior table ranks the configurations measured so far on the new device.

Two pieces of evidence, both computed on the successful evaluations only, each prior table
separately (``searcher=transfer``, docs/transfer.md):

- **Rank agreement with an interval** (:func:`kendall_interval`): Kendall's tau-b between the
  table's normalised speed and the measured speed, with the Fisher-z interval of Fieller,
  Hartley & Pearson (*Tests for rank correlation coefficients. I*, Biometrika 44, 1957):
  ``atanh(tau)`` is close to normal with variance ``0.437 / (n - 4)``; Bonett & Wright
  (*Sample size requirements for estimating Pearson, Kendall and Spearman correlations*,
  Psychometrika 65, 2000, Eq. 3) recommend it for intervals from n >= 5 on. A table is
  *discarded* once the whole interval lies at or below ``min_agreement`` (default 0): the
  measured points are then evidence that it misorders the device, not merely that a handful of
  near-equal top configurations rank weakly among themselves (the false alarms of the old point
  test, issue 38).
- **Weights** (:func:`ranking_weights`): RGPE's ranking-loss weights (Feurer, Letham, Hutter &
  Bakshy, *Scalable meta-learning for Bayesian optimization using ranking-weighted Gaussian
  process ensembles*, 2018, §4.1, Eq. 5-6): the ranking loss of a table is the number of
  misordered pairs among the measured points, and its weight is the probability, over
  bootstrap resamples of those points, that it has the lowest loss (ties shared). Deviations:
  no target model competes (the new device's own model, ``auto``'s GP, takes over after the
  front instead), and a table's weight is zero once discarded (RGPE drops a base model whose
  median loss exceeds the target model's 95th percentile; here the test above decides).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # two-sided 95 %
FHP_VARIANCE = 0.437  # Fieller, Hartley & Pearson (1957): var(atanh(tau)) ~ 0.437 / (n - 4)
MIN_POINTS = 5  # the interval needs n > 4
BOOTSTRAP = 256  # resamples for the ranking-loss weights (RGPE uses 1000; 256 keeps a tell cheap)
CHUNK = 32  # resamples whose pair matrices are held at once


@dataclass(frozen=True)
class Agreement:
    """One prior table against the device's measured points."""

    source: str
    tau: float | None  # None: no order to compare yet (fewer than 5 points, or one side constant)
    lo: float | None
    hi: float | None
    points: int


def kendall_interval(prior: Sequence[float], measured: Sequence[float]) -> tuple[float, float, float] | None:
    """Kendall's tau-b with its 95 % Fieller-Hartley-Pearson interval, or None without evidence."""
    n = len(prior)
    if n < MIN_POINTS or len(set(prior)) < 2 or len(set(measured)) < 2:
        return None
    from scipy.stats import kendalltau  # lazily: scipy.stats costs ~0.5 s to import

    tau = float(kendalltau(prior, measured).statistic)
    if not math.isfinite(tau):
        return None
    z = math.atanh(min(max(tau, -1 + 1e-9), 1 - 1e-9))
    half = Z95 * math.sqrt(FHP_VARIANCE / (n - 4))
    return tau, math.tanh(z - half), math.tanh(z + half)


def ranking_weights(prior: np.ndarray, measured: np.ndarray, keep: Sequence[bool], seed: int,
                    draws: int = BOOTSTRAP) -> np.ndarray:
    """RGPE weights of the tables (rows of ``prior``, columns: measured points); 0 where not kept.

    ``measured``: speed on the device (higher is better). Equal weights over the kept tables
    while fewer than two points are measured."""
    m, n = prior.shape
    kept = np.array(keep, dtype=bool)
    weights = np.zeros(m)
    if not kept.any():
        return weights
    if n < 2:
        weights[kept] = 1.0 / kept.sum()
        return weights
    rows = np.flatnonzero(kept)
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    losses = np.empty((draws, len(rows)))
    for start in range(0, draws, CHUNK):  # CHUNK x n x n at a time: bounded memory
        part = idx[start:start + CHUNK]
        y = measured[part]
        dy = np.sign(y[:, :, None] - y[:, None, :])
        for j, row in enumerate(rows):
            p = prior[row][part]
            dp = np.sign(p[:, :, None] - p[:, None, :])
            losses[start:start + CHUNK, j] = (dp * dy < 0).sum(axis=(1, 2)) / 2  # misordered pairs (RGPE Eq. 5)
    lowest = losses == losses.min(axis=1, keepdims=True)
    counts = (lowest / lowest.sum(axis=1, keepdims=True)).sum(axis=0)
    weights[rows] = counts / draws
    return weights
