"""The evidence and the score of the tuning-knob search (paper 001 §4, §4.1, §6, §7.1).

:class:`Evidence` holds the tested points as one series per predicted quantity: every raw
sensor the sensor model's formulas read, the measured objective (successful tests only), the
indicator of failures no declared constraint explains, and — for the "trivial failures"
ablation (§8) — the quality, failures given the lowest quality seen so far. In-flight
configurations join the series as *believers*: their predicted means (see the searcher).

:meth:`Evidence.log_scores` is Fig. 8 lines 9-14 for a batch of candidates: regression at
each candidate for all series (§5), derived features and formulas on the normals (§6),
P(quality > q_t) with the §7.1 target, P(success) the minimum over constraints (§4), with
the cutoff region of §4.1 for proxy constraints, each constraint's P(ok) calibrated against
its observed failure rate (§7 constraint scaling, :class:`Calibration`). Scores are kept in
log space, so that candidates far in the tails still rank by how far they are.

Quality transform (``Options.quality``): ``raw`` is the paper's (the optimisation formula
itself, high is good: ``-time`` for a run time), predicted from the sensors' predictions by
§6's arithmetic; ``log`` (``-log time``) and ``inverse`` (``1/time``) regress the
transformed quality of the tested points directly (§6 allows regressing a derived feature
directly; a log or reciprocal of a normal is no normal) — a deviation from the paper, which
ranks on raw quality; with run times spanning orders of magnitude, the raw scale lets the
slowest configurations dominate slopes and spreads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.core.records import Config, Direction, Measurement, Status
from searchlab.core.sensors import OBJECTIVE, ConstraintSpec, Normal, SensorModel, prob_less
from searchlab.searchers._probabilistic.calibration import Calibration, cutoff_region, scale_log_p, transform
from searchlab.searchers._probabilistic.regression import Encoder, Geometry, manhattan

UNEXPLAINED = "_unexplained"  # 1: failed in a way no declared constraint explains, 0: success
QUALITY = "_quality"  # the trivial ablation's single series


@dataclass(frozen=True)
class Options:
    k_factor: float = 2.0
    neighbors: str = "gabriel"
    alpha: float = 1.0
    eps: float = 1e-4
    adjust_target: bool = True
    evenness_target: float = 0.75
    target_gain: float = 1.0
    combine: str = "min"
    trivial: bool = False
    quality: str = "raw"  # raw (paper) | log | inverse
    boundary: bool = True  # §7 boundary handling (searchlab.searchers._probabilistic.regression)


QUALITIES = ("raw", "log", "inverse")
__all__ = ["QUALITIES", "Calibration", "Evidence", "Options", "cutoff_region", "mean_nn_distance", "scale_log_p",
           "transform"]
TQUALITY = "_tquality"  # the transformed quality (quality != raw)


@dataclass
class _Row:
    config: Config
    x: np.ndarray
    values: dict[str, float]
    measurement: Measurement | None  # None: a believer (in flight)


class Evidence:
    """Tested points (and believers) of one ask, as series for the regressions."""

    def __init__(self, model: SensorModel, encoder: Encoder, direction: Direction, options: Options) -> None:
        self.model, self.encoder, self.options = model, encoder, options
        self.direction = model.direction or direction
        self.knobs = encoder.space.names
        self.k = max(1, round(options.k_factor * max(1, encoder.varying)))
        names = set(model.raw_names(model.objective, self.knobs))
        for c in model.constraints:
            for expr in (c.lhs, c.rhs, c.proxy):
                if expr is not None:
                    names |= model.raw_names(expr, self.knobs)
        self.raw = tuple(sorted(names))
        self.rows: list[_Row] = []
        self._series: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        self._geometry: dict[tuple[int, bytes], Geometry] = {}
        self._query = 0  # identifies the current query set in the geometry cache

    # -- building ---------------------------------------------------------------------------
    def _env(self, config: Config, values: Mapping[str, float]) -> dict[str, Any]:
        return {**{k: config[k] for k in self.knobs}, **values}

    def quality_of(self, config: Config, values: Mapping[str, float]) -> float | None:
        """Measured quality (high is good, §4 footnote 2) from the objective formula, transformed."""
        if any(n not in values for n in self.model.raw_names(self.model.objective, self.knobs)):
            return None
        try:
            value = float(self.model.evaluate(self.model.objective, self._env(config, values)))
        except (ArithmeticError, ValueError):
            return None
        return transform(value, self.direction, self.options.quality)

    def quality_problem(self, config: Config, m: Measurement) -> str | None:
        """Why a successful measurement gives no quality (None: it gives one)."""
        if m.status is not Status.OK or m.is_subproblem:
            return None
        values = self._values(m)
        missing = sorted(n for n in self.model.raw_names(self.model.objective, self.knobs) if n not in values)
        if missing:
            return (f"the sensor model's objective {self.model.objective.text!r} reads {missing}, which the problem's "
                    f"results do not report (they report {sorted(values)})")
        if self.quality_of(config, values) is None:
            return (f"searcher.quality={self.options.quality}: the objective {self.model.objective.text!r} at "
                    f"{dict(config)} gives no quality (log and inverse need a positive objective)")
        return None

    @staticmethod
    def _values(m: Measurement) -> dict[str, float]:
        values = {k: float(v) for k, v in m.sensors.items() if isinstance(v, (int, float))}
        if m.status is Status.OK and m.objective is not None:
            values[OBJECTIVE] = float(m.objective)
        return values

    def add(self, config: Config, x: np.ndarray, m: Measurement) -> None:
        if m.status is Status.INFEASIBLE or m.is_subproblem:
            return  # never tested: known constraints are not evidence about the device
        self.rows.append(_Row(config, x, self._values(m), m))
        self._changed()

    def _changed(self) -> None:
        self._series.clear()
        self._geometry.clear()

    def add_believer(self, config: Config, x: np.ndarray) -> None:
        """An in-flight point: every series gets its predicted mean there (kriging believer)."""
        values = {}
        point = self.query(x[None, :])
        for name in self.series_names():
            pred = self.predict(name, point)
            if pred is not None:
                values[name] = float(pred.mean[0])
        self.rows.append(_Row(config, x, values, None))
        self._changed()

    def series_names(self) -> tuple[str, ...]:
        if self.options.trivial:
            return (QUALITY,)
        return (*self.raw, UNEXPLAINED) + ((TQUALITY,) if self.options.quality != "raw" else ())

    def _value(self, row: _Row, name: str, low: float | None) -> float | None:
        m = row.measurement
        if m is None:
            return row.values.get(name)
        if name == UNEXPLAINED:
            return 0.0 if m.status is Status.OK else None if self.model.attributed(m) else 1.0
        if name == QUALITY:
            return self.quality_of(row.config, row.values) if m.status is Status.OK else low
        if name == TQUALITY:
            return self.quality_of(row.config, row.values) if m.status is Status.OK else None
        return row.values.get(name)

    def has_unexplained(self) -> bool:
        return any(r.measurement is not None and self._value(r, UNEXPLAINED, None) == 1.0 for r in self.rows)

    def lowest_quality(self) -> float | None:
        qs = self.qualities()
        return min(qs) if qs else None

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(indices of the rows that have a value, the values) for one predicted quantity."""
        if name not in self._series:
            low = self.lowest_quality() if name == QUALITY else None
            pairs = [(i, v) for i, r in enumerate(self.rows) if (v := self._value(r, name, low)) is not None and np.isfinite(v)]
            self._series[name] = None if not pairs else (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
        return self._series[name]

    # -- §7.1 target quality ---------------------------------------------------------------
    def qualities(self) -> list[float]:
        out = [self.quality_of(r.config, r.values) for r in self.rows
               if r.measurement is not None and r.measurement.status is Status.OK]
        return [q for q in out if q is not None]

    def target(self, reference_nn: float | None) -> float | None:
        """High-water mark, moved up when the tested points are too clustered and down when
        they are too even (§7.1; see the searcher's docstring for the reconstruction)."""
        qs = self.qualities()
        if not qs:
            return None
        best = max(qs)
        if not self.options.adjust_target or reference_nn is None or len(qs) < 2 or len(self.rows) < 3:
            return best
        evenness = mean_nn_distance(np.array([r.x for r in self.rows])) / reference_nn
        return best + self.options.target_gain * (self.options.evenness_target - evenness) * float(np.std(qs))

    # -- the score ----------------------------------------------------------------------------
    def query(self, x: np.ndarray) -> tuple[int, np.ndarray]:
        """Register a set of query points; geometry is shared by series with the same points."""
        self._query += 1
        return self._query, x

    def predict(self, name: str, query: tuple[int, np.ndarray]) -> Normal | None:
        series = self.series(name)
        if series is None:
            return None
        idx, y = series
        key = (query[0], idx.tobytes())
        if key not in self._geometry:
            o = self.options
            self._geometry[key] = Geometry(np.array([self.rows[i].x for i in idx]), query[1], k=self.k,
                                           method=o.neighbors, alpha=o.alpha, eps=o.eps,
                                           upper=self.encoder.upper if o.boundary else None)
        mean, std = self._geometry[key].predict(y)
        return Normal(mean, std)

    def _formula(self, expr: Any, configs: Sequence[Config], preds: Mapping[str, Normal | None]) -> Normal | None:
        needed = self.model.raw_names(expr, self.knobs)
        if any(preds.get(n) is None for n in needed):
            return None
        env: dict[str, Any] = {k: np.array([c[k] for c in configs]) for k in self.knobs}
        env.update({n: preds[n] for n in needed})
        return Normal.of(self.model.evaluate(expr, env))

    def _log_p_constraint(self, c: ConstraintSpec, configs: Sequence[Config], preds: Mapping[str, Normal | None]) -> Any:
        if c.proxy is None:
            assert c.lhs is not None and c.rhs is not None
            lhs, rhs = self._formula(c.lhs, configs, preds), self._formula(c.rhs, configs, preds)
            if lhs is None or rhs is None:
                return 0.0  # nothing measured yet: no evidence against it
            return prob_less(lhs, rhs) if c.op in ("<", "<=") else prob_less(rhs, lhs)
        cutoff = self.cutoff(c)
        metric = self._formula(c.proxy, configs, preds)
        if cutoff is None or metric is None:
            return 0.0
        return prob_less(metric, cutoff)

    def cutoff(self, c: ConstraintSpec) -> Normal | None:
        """§4.1: the cutoff region runs from the lowest failed value of the proxy metric to the
        lowest failed value above the highest successful one; its mean and spread."""
        assert c.proxy is not None
        failed: list[float] = []
        passed: list[float] = []
        for r in self.rows:
            if r.measurement is None:
                continue
            verdict = self.model.passed(c, r.measurement)
            if verdict is None:
                continue
            try:
                v = float(self.model.evaluate(c.proxy, self._env(r.config, r.values)))
            except (ArithmeticError, ValueError, TypeError):  # the metric was not measured
                continue
            (passed if verdict else failed).append(v)
        return cutoff_region(failed, passed)

    def quality(self, configs: Sequence[Config], query: tuple[int, np.ndarray],
                preds: Mapping[str, Normal | None] | None = None) -> Normal | None:
        """Predicted quality (high is good) at the query points; None: nothing to predict from."""
        if self.options.trivial:
            return self.predict(QUALITY, query)
        if self.options.quality != "raw":
            return self.predict(TQUALITY, query)
        if preds is None:
            preds = {n: self.predict(n, query) for n in self.model.raw_names(self.model.objective, self.knobs)}
        value = self._formula(self.model.objective, configs, preds)
        return None if value is None else (value if self.direction is Direction.MAXIMIZE else -value)

    def constraint_terms(self, configs: Sequence[Config], query: tuple[int, np.ndarray],
                         preds: Mapping[str, Normal | None]) -> dict[str, np.ndarray]:
        """log P(constraint holds) per constraint (and the catch-all), before scaling."""
        m = len(configs)
        terms = {c.name: np.broadcast_to(np.asarray(self._log_p_constraint(c, configs, preds), dtype=float), (m,))
                 for c in self.model.constraints}
        unexplained = self.predict(UNEXPLAINED, query) if self.has_unexplained() else None
        if unexplained is not None:  # the catch-all: failures no declared constraint explains
            terms[UNEXPLAINED] = np.asarray(prob_less(unexplained, Normal(0.5, 0.0)), dtype=float)
        return terms

    def log_scores(self, configs: Sequence[Config], x: np.ndarray, reference_nn: float | None,
                   scaling: Mapping[str, float] | None = None) -> np.ndarray:
        """log P(quality > q_t) + log P(success) for each candidate (Fig. 8 lines 9-14);
        ``scaling``: §7's factor on each constraint's failure odds. Leaves the unscaled
        per-constraint terms in ``self.last_terms``."""
        m, query = len(configs), self.query(x)
        self.last_terms: dict[str, np.ndarray] = {}
        preds = {} if self.options.trivial else {n: self.predict(n, query) for n in self.raw}
        quality = self.quality(configs, query, preds)
        if self.options.trivial:
            log_success: Any = np.zeros(m)
        else:
            self.last_terms = self.constraint_terms(configs, query, preds)
            terms = [scale_log_p(t, (scaling or {}).get(name, 1.0)) for name, t in self.last_terms.items()]
            combine = np.min if self.options.combine == "min" else np.sum
            log_success = combine(np.array(terms), axis=0) if terms else np.zeros(m)
        target = self.target(reference_nn)
        if quality is None or target is None:
            return np.asarray(log_success, dtype=float)
        return np.asarray(prob_less(Normal(np.full(m, target), 0.0), quality) + log_success)

    def verdicts(self, m: Measurement) -> dict[str, bool]:
        """Per constraint (and the catch-all): held (True) or failed (False); absent: unknown."""
        out = {}
        for c in self.model.constraints:
            verdict = self.model.passed(c, m)
            if verdict is not None:
                out[c.name] = verdict
        if m.status is Status.OK:
            out[UNEXPLAINED] = True
        elif not self.model.attributed(m):
            out[UNEXPLAINED] = False
        return out


def mean_nn_distance(x: np.ndarray) -> float:
    if len(x) < 2:
        return 0.0
    d = manhattan(x, x)
    np.fill_diagonal(d, np.inf)
    return float(d.min(axis=1).mean())
