"""A small Gaussian-process surrogate in numpy, for model-based search over a finite set.

Why our own and not torch/BoTorch: ``auto`` must propose in well under 0.5 s at a few hundred
observations on one core, and must not start a thread pool that oversubscribes the cores
when a study runs many replays in parallel. At n ≤ a few hundred points, an exact GP with a
Cholesky factor costs milliseconds in numpy.

Model (Rasmussen & Williams, *Gaussian Processes for Machine Learning*, 2006, §2.2, §4.2, §5.4):
a Matérn-5/2 kernel with one length scale per input dimension (ARD), a signal variance and a
noise variance, fitted by maximising the log marginal likelihood (L-BFGS-B over log
parameters, warm-started from the previous fit). Targets are standardised by the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_SQRT5 = math.sqrt(5.0)
_BOUNDS_LOG = {"length": (math.log(0.03), math.log(30.0)), "signal": (math.log(0.05), math.log(20.0)),
               "noise": (math.log(1e-6), math.log(0.5))}


def matern52(a: np.ndarray, b: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """k(a, b) / signal for every pair of rows (Matern nu = 5/2, ARD length scales)."""
    sa, sb = a / lengths, b / lengths
    sq = (sa * sa).sum(1)[:, None] + (sb * sb).sum(1)[None, :] - 2.0 * sa @ sb.T
    r = np.sqrt(np.maximum(sq, 0.0))
    return np.asarray((1.0 + _SQRT5 * r + (5.0 / 3.0) * r * r) * np.exp(-_SQRT5 * r))


@dataclass
class GaussianProcess:
    """Exact GP regression with fitted hyperparameters; ``fit`` then ``predict``."""

    lengths: np.ndarray | None = None
    signal: float = 1.0
    noise: float = 1e-3
    prior: tuple[float, float] | None = None  # (mean, sd) of a normal prior on each log length scale

    def _unpack(self, theta: np.ndarray, dims: int) -> tuple[np.ndarray, float, float]:
        return np.exp(theta[:dims]), float(np.exp(theta[dims])), float(np.exp(theta[dims + 1]))

    def _neg_log_likelihood(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray,
                            gaps: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """NLL and its gradient in the log parameters (R&W eq. 5.8-5.9; Matérn derivative by hand).

        ``gaps``: the squared input differences as an (n*n) x d matrix (:func:`squared_gaps`), computed once per
        fit: the scaled distances are then one matrix-vector product per evaluation, and the length scales'
        gradient another (issue 53: 3 ms -> well under 1 ms per evaluation at n = 128, d = 10)."""
        from scipy.linalg import lapack  # lazily: scipy costs ~0.5 s to import

        n, dims = x.shape
        lengths, signal, noise = self._unpack(theta, dims)
        gaps = squared_gaps(x) if gaps is None else gaps
        inv_l2 = 1.0 / lengths**2
        r = np.sqrt((gaps @ inv_l2).reshape(n, n))
        e = np.exp(-_SQRT5 * r)
        base = (1.0 + _SQRT5 * r + (5.0 / 3.0) * r * r) * e
        k = signal * base
        k[np.diag_indices(n)] += noise + 1e-9
        chol, info = lapack.dpotrf(k, lower=1, clean=1)
        if info != 0:
            return 1e10, np.zeros_like(theta)
        alpha, _ = lapack.dpotrs(chol, y, lower=1)
        nll = float(0.5 * y @ alpha + np.log(np.diag(chol)).sum() + 0.5 * n * math.log(2 * math.pi))
        inv, _ = lapack.dpotri(chol, lower=1)  # K^-1 from the factor (lower triangle)
        inv = np.tril(inv) + np.tril(inv, -1).T
        w = np.outer(alpha, alpha) - inv  # dNLL/dθ = -½ tr(w dK/dθ)
        radial = signal * (5.0 / 3.0) * (1.0 + _SQRT5 * r) * e  # dk/dlog(l_d) = radial * diff2_d
        grad = np.empty_like(theta)
        grad[:dims] = -0.5 * ((w * radial).ravel() @ gaps) * inv_l2
        grad[dims] = -0.5 * (float((w * k).sum()) - (noise + 1e-9) * float(np.trace(w)))  # k holds the noise too
        grad[dims + 1] = -0.5 * float(np.trace(w)) * noise
        if self.prior is not None:  # MAP: the negative log prior of the log length scales
            mean, sd = self.prior
            z = (theta[:dims] - mean) / sd
            nll += 0.5 * float(z @ z)
            grad[:dims] += z / sd
        return nll, grad

    def fit(self, x: np.ndarray, y: np.ndarray, *, optimise: bool = True, max_iter: int = 60) -> GaussianProcess:
        """Condition on (x, y); with ``optimise``, refit the hyperparameters first."""
        from scipy.linalg import cho_solve
        from scipy.optimize import minimize
        dims = x.shape[1]
        if self.lengths is None or len(self.lengths) != dims:
            self.lengths = np.full(dims, 0.5)
        if optimise and len(y) >= 3:
            theta0 = np.concatenate([np.log(self.lengths), [math.log(self.signal), math.log(self.noise)]])
            bounds = [_BOUNDS_LOG["length"]] * dims + [_BOUNDS_LOG["signal"], _BOUNDS_LOG["noise"]]
            theta0 = np.clip(theta0, [b[0] for b in bounds], [b[1] for b in bounds])
            res = minimize(self._neg_log_likelihood, theta0, args=(x, y, squared_gaps(x)), method="L-BFGS-B", jac=True,
                           bounds=bounds,
                           options={"maxiter": max_iter})
            if np.isfinite(res.fun):
                self.lengths, self.signal, self.noise = self._unpack(res.x, dims)
        self._x, self._y = x, y
        k = self.signal * matern52(x, x, self.lengths) + (self.noise + 1e-8) * np.eye(len(x))
        self._chol = np.linalg.cholesky(k)
        self._alpha = cho_solve((self._chol, True), y)
        return self

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation at the rows of ``x``."""
        from scipy.linalg import solve_triangular
        assert self.lengths is not None
        ks = self.signal * matern52(x, self._x, self.lengths)
        mean = ks @ self._alpha
        v = solve_triangular(self._chol, ks.T, lower=True)
        var = np.maximum(self.signal - np.einsum("ij,ij->j", v, v), 1e-12)
        return mean, np.sqrt(var)


def squared_gaps(x: np.ndarray) -> np.ndarray:
    """Every pair's squared difference per input, as an (n*n) x d matrix (row i*n + j: x_i - x_j)."""
    return np.asarray(((x[:, None, :] - x[None, :, :]) ** 2).reshape(-1, x.shape[1]))


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """EI for minimisation (Jones, Schonlau & Welch 1998, eq. 15)."""
    from scipy.special import ndtr

    z = (best - mean) / std
    return np.asarray((best - mean) * ndtr(z) + std * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))
