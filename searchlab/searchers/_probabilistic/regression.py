"""Probabilistic regression of paper 001 §5 (and the Gabriel neighbourhoods of §7.2).

For a candidate ``c`` and one sensor with tested values ``y`` at points ``X``:

- ``interp(p)``: the average of the neighbours' values weighted by inverse distance (§5.1);
  distance is Manhattan (§5.1.1) over knob coordinates scaled to [0, 1] per knob — the
  "distance scaling" of §7, so that no knob dominates by its units; categoricals are one-hot
  at 0.5, so two different choices are one full knob range apart;
- neighbours: the ``k`` nearest tested points, ``k = 2 x #knobs`` (§5.1.2), or the (elliptic)
  Gabriel graph: ``t`` is a neighbour of ``p`` unless a third tested point lies in the region
  of influence between them, a ball (``alpha = 1``) or an ellipsoid of minor/major axis
  ratio ``alpha`` on the segment ``p-t`` (§7.2, [13]);
- derivative projection from each neighbour ``n`` (§5.2): ``d = n + eps/dist(c,n) (n - c)``,
  ``extrap = y_n + dist(c,n) derivative``;
- the prediction (§5.3): weighted mean and variance of ``{(sum w_n, interp(c))} U
  {(w_n, extrap(c, n))}`` with gravitational weights ``w_n = 1 / dist(c, n)^2``.

Deviations from the paper (also in docs/knobs.md):

- *The derivative averages the slopes.* Read literally, ``(y_n - interp(d)) / eps`` with the
  inverse-distance average of §5.1 is, as ``eps -> 0``, the **sum** of the slopes
  ``(y_n - y_j) / dist(d, j)`` to the other neighbours ``j`` of ``d`` (``n`` weighs ``1/eps``
  and swamps the rest): a plane with four neighbours gets three times its slope. We use
  their **mean**, computed exactly from the same interpolation:
  ``derivative = (y_n - interp(d)) (1/h + sum_j 1/dist(d, j)) / J`` (``h`` the step, ``J``
  the number of other neighbours; no other neighbour: slope 0).
- *Boundary conditions* (§7, named only): a projection point ``d`` that would leave the space
  (the unit box of the scaled knobs) is clipped to its edge and the slope is taken over the
  step actually made; a neighbour on the edge facing away from ``c`` gives no slope (its
  value stands), instead of reading values "beyond" the space that do not exist.
- *Distance scaling* (§7, "by their impact on program features"): we scale each knob by its
  rank to [0, 1] (log2 for log knobs), the same for every sensor; the paper scales by
  impact, which [25] details and we do not have.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces import CategoricalKnob, IntKnob, KnobSpace

_CHUNK = 1_000_000  # elements per block in the Gabriel test (memory bound)


class Encoder:
    """Knob settings -> points in [0, 1]^D (ordered knobs by position, categoricals one-hot)."""

    def __init__(self, space: KnobSpace) -> None:
        self.space = space
        self._cache: dict[Config, np.ndarray] = {}
        self._maps: list[tuple[str, dict[object, np.ndarray]]] = []
        dims, upper = 0, []
        for knob in space.knobs:
            values = knob.values
            if isinstance(knob, CategoricalKnob):
                eye = np.eye(len(values)) * 0.5
                self._maps.append((knob.name, {v: eye[i] for i, v in enumerate(values)}))
                dims += len(values)
                upper += [0.5] * len(values)
                continue
            if isinstance(knob, IntKnob) and knob.log:
                pos = np.log2(np.asarray(values, dtype=float))
            else:
                pos = np.arange(len(values), dtype=float)
            span = pos.max() - pos.min()
            scaled = (pos - pos.min()) / span if span > 0 else np.zeros_like(pos)
            self._maps.append((knob.name, {v: np.array([scaled[i]]) for i, v in enumerate(values)}))
            dims += 1
            upper.append(1.0 if span > 0 else 0.0)
        self.dims = dims
        self.upper = np.array(upper)  # the space is the box [0, upper] (boundary handling, §7)
        self.varying = sum(1 for k in space.knobs if len(k.values) > 1)  # "dimensions" for k (§5.1.2)

    def encode(self, configs: Sequence[Config]) -> np.ndarray:
        if not configs:
            return np.zeros((0, self.dims))
        out = np.empty((len(configs), self.dims))
        for i, c in enumerate(configs):
            row = self._cache.get(c)
            if row is None:
                row = self._cache[c] = np.concatenate([table[c[name]] for name, table in self._maps])
            out[i] = row
        return out


def manhattan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.abs(a[:, None, :] - b[None, :, :]).sum(axis=2))


def _gabriel_mask(q: np.ndarray, x: np.ndarray, alpha: float) -> np.ndarray:
    """mask[i, t]: no tested ``u != t`` lies in the region of influence of ``(q_i, x_t)``."""
    qq, xx = (q * q).sum(1), (x * x).sum(1)
    qx, g = q @ x.T, x @ x.T  # inner products: the test needs no loop over dimensions
    n = len(x)
    mask = np.ones((len(q), n), dtype=bool)
    step = max(1, _CHUNK // max(1, n * n))
    for lo in range(0, len(q), step):
        sl = slice(lo, lo + step)
        qxs, qqs = qx[sl], qq[sl]
        if alpha == 1.0:  # Gabriel: u is inside the ball on q-t iff (u - q).(u - t) < 0 (Thales)
            thales = (xx[None, :] - qxs)[:, :, None] + qxs[:, None, :] - g[None, :, :]  # (b, u, t)
            inside = thales < -1e-12
            inside[:, np.arange(n), np.arange(n)] = False
            mask[sl] = ~inside.any(axis=1)
            continue
        seg2 = qqs[:, None] - 2 * qxs + xx[None, :]  # |q - t|^2, (b, t)
        a2 = seg2 / 4.0  # squared half-length
        # along * |q - t| = (u - m).(t - q), with m = (q + t) / 2; index order (b, u, t)
        along = g[None, :, :] - qxs[:, :, None] - ((xx[None, None, :] - qqs[:, None, None]) / 2.0)
        # |u - m|^2 = |u|^2 - u.q - u.t + |q + t|^2 / 4
        um2 = (xx[None, :, None] - qxs[:, :, None] - g[None, :, :]
               + (qqs[:, None, None] + 2 * qxs[:, None, :] + xx[None, None, :]) / 4.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            al2 = np.where(seg2[:, None, :] > 0, along**2 / seg2[:, None, :], 0.0)
            perp2 = np.maximum(um2 - al2, 0.0)
            inside = al2 / a2[:, None, :] + perp2 / (alpha**2 * a2[:, None, :]) < 1.0 - 1e-12
        inside[:, np.arange(n), np.arange(n)] = False  # a point never blocks itself
        mask[sl] = ~inside.any(axis=1)
    return mask


def neighbour_mask(q: np.ndarray, x: np.ndarray, dist: np.ndarray, k: int, method: str, alpha: float) -> np.ndarray:
    """Which tested points are neighbours of each query point (rows of ``q``)."""
    n = len(x)
    if method == "gabriel":
        return _gabriel_mask(q, x, alpha)
    if n <= k:
        return np.ones((len(q), n), dtype=bool)
    idx = np.argpartition(dist, k - 1, axis=1)[:, :k]
    mask = np.zeros((len(q), n), dtype=bool)
    np.put_along_axis(mask, idx, True, axis=1)
    return mask


def interp(dist: np.ndarray, mask: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Inverse-distance weighted average over the neighbours (§5.1); exact at tested points."""
    exact = (dist <= 1e-15) & mask
    with np.errstate(divide="ignore"):
        w = np.where(mask, 1.0 / np.maximum(dist, 1e-300), 0.0)
    w = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), w)
    total = w.sum(axis=1)
    return np.asarray((w @ y) / np.where(total > 0, total, 1.0))


class Geometry:
    """Everything §5 needs that depends only on where the tested and query points are —
    neighbourhoods, projection points and their neighbourhoods — shared by every sensor
    measured at the same tested points. ``upper``: the space's box is ``[0, upper]`` per
    coordinate (boundary handling); None: unbounded."""

    def __init__(self, x: np.ndarray, c: np.ndarray, *, k: int, method: str = "knn", alpha: float = 1.0,
                 eps: float = 1e-4, upper: np.ndarray | None = None) -> None:
        self.x, self.c, self.eps, self.m = np.asarray(x, dtype=float), np.asarray(c, dtype=float), eps, len(c)
        k = max(1, k)
        self.dist = manhattan(self.c, self.x)
        self.mask = neighbour_mask(self.c, self.x, self.dist, k, method, alpha)
        self.ci, self.ni = np.nonzero(self.mask & (self.dist > 1e-15))
        self.r = self.dist[self.ci, self.ni]
        start = self.x[self.ni]
        d = start + (eps / self.r)[:, None] * (start - self.c[self.ci])  # §5.2: away from c
        if upper is not None:
            d = np.clip(d, 0.0, upper)  # boundary: never step outside the space
        self.h = np.abs(d - start).sum(axis=1)  # the step made: eps, less at an edge
        self.d_dist = manhattan(d, self.x)
        self.d_mask = neighbour_mask(d, self.x, self.d_dist, k, method, alpha)
        rows = np.arange(len(d))
        others = self.d_mask.copy()
        others[rows, self.ni] = False
        count = others.sum(axis=1)
        with np.errstate(divide="ignore"):
            inv = np.where(others, 1.0 / np.maximum(self.d_dist, 1e-300), 0.0).sum(axis=1)
            # mean slope = (y_n - interp(d)) (1/h + sum 1/dist) / J, 0 without a step or another neighbour
            self.slope_scale = np.where((self.h > 0) & (count > 0),
                                        (1.0 / np.maximum(self.h, 1e-300) + inv) / np.maximum(count, 1), 0.0)
        self.w = 1.0 / self.r**2  # gravitational weights (§5.3)
        self.w_avg = np.bincount(self.ci, weights=self.w, minlength=self.m)  # the average weighs as all projections

    def predict(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation at the query points for tested values ``y`` (§5.3)."""
        y = np.asarray(y, dtype=float)
        ci, w, w_avg, m = self.ci, self.w, self.w_avg, self.m
        averaged = interp(self.dist, self.mask, y)
        derivative = (y[self.ni] - interp(self.d_dist, self.d_mask, y)) * self.slope_scale
        extrap = y[self.ni] + self.r * derivative
        total = 2.0 * w_avg
        safe = np.where(total > 0, total, 1.0)
        mean = np.where(total > 0, (w_avg * averaged + np.bincount(ci, weights=w * extrap, minlength=m)) / safe, averaged)
        spread = w_avg * (averaged - mean) ** 2 + np.bincount(ci, weights=w * (extrap - mean[ci]) ** 2, minlength=m)
        var = np.where(total > 0, spread / safe, 0.0)
        return mean, np.sqrt(np.maximum(var, 0.0))


def regress(x: np.ndarray, y: np.ndarray, c: np.ndarray, *, k: int, method: str = "knn", alpha: float = 1.0,
            eps: float = 1e-4, upper: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """§5 prediction (mean, std) at ``c`` of the sensor measured as ``y`` at ``x``."""
    return Geometry(x, c, k=k, method=method, alpha=alpha, eps=eps, upper=upper).predict(y)
