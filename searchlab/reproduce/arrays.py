"""A repeat in compact form, and the package's result arrays made from repeats without its Python loop.

**Compact repeats.** What the methodology reads of a tuning run's T4 results is, per evaluation, the times of the
experiment's time keys, the objective's value and the ``invalidity``. A repeat is stored as exactly that
(:func:`compact`): ``{"keys": [...], "t": [[seconds per key] per evaluation], "v": [value per evaluation],
"i": [invalidity per evaluation]}``, a list of runtimes converted element by element and summed, as
``write_results`` sums it. A hub space's repeat of 2 383 evaluations is 60 kB instead of 900 kB.

**Arrays.** ``runner.write_results`` turns the repeats of a group into the package's seven arrays with a Python
loop over every evaluation (6 s for the mock file's 238 000 evaluations). :func:`write_arrays` makes the same
arrays with NumPy: the same evaluations counted (the outlier cut at twice the mean length, ``constraints`` rows
skipped), the same validity rules (a time that is NaN or negative, a value that is NaN, Kernel Tuner's error
value ``1e20`` or one of its failure names), the times summed over the keys in the keys' order and accumulated
along the run in the same order, so every number is the package's, bit for bit
(tests/reproduce/test_reproduce_arrays.py compares them with ``write_results`` on real runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["Description", "compact", "split_curve", "write_arrays"]

ERROR_VALUE = 1e20  # autotuning_methodology.validators.kernel_tuner_error_value
_PER_MS = {"seconds": 1, "s": 1, "milliseconds": 1000, "miliseconds": 1000, "ms": 1000, "microseconds": 1000000,
           "nanoseconds": 1000000000, "ns": 1000000000}


def _seconds(value: Any, per: int) -> float | None:
    """``convert_from_time_unit`` (value / factor), lists converted element by element then summed."""
    if isinstance(value, list):
        return float(sum(v / per if per != 1 else v for v in value))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / per if per != 1 else value
    return None


def compact(t4: Mapping[str, Any], objective: str, keys: Sequence[str]) -> dict[str, Any]:
    """A repeat's T4 results (Kernel Tuner's ``get_t4_results``) in compact form (module docstring)."""
    unit = str(t4.get("metadata", {}).get("timeunit", "seconds")).lower()
    per = _PER_MS[unit]
    t, v, i = [], [], []
    for result in t4["results"]:
        times = result["times"]
        t.append([_seconds(times[k], per) if k in times else None for k in keys])
        value = next((m["value"] for m in result["measurements"] if m["name"] == objective), None)
        v.append(value if isinstance(value, (int, float, str)) or value is None else str(value))
        i.append(str(result["invalidity"]))
    return {"keys": list(keys), "t": t, "v": v, "i": i}


def _length(repeats: Sequence[Mapping[str, Any]]) -> int:
    counts = [len(r["i"]) for r in repeats]
    longest = max(counts) if counts else 0
    mean = float(np.mean(counts)) if counts else 0.0
    if longest > mean * 2:
        longest = int(mean * 2)
    if longest > 1e8:
        longest = int(mean)
    return longest


def _dtype(entries: float) -> Any:
    return np.float16 if entries > 1e9 else np.float32 if entries > 1e8 else np.float64


def _values(raw: Sequence[Any]) -> np.ndarray:
    out = np.full(len(raw), np.nan)
    for j, value in enumerate(raw):
        if isinstance(value, (int, float)) and value != ERROR_VALUE:  # a bool is a number to the package too
            out[j] = value
    return out


def write_arrays(repeats: Sequence[Mapping[str, Any]], minimization: bool) -> dict[str, np.ndarray]:
    """The arrays ``write_results`` writes for ``repeats`` (compact form, one group), as a dict of its names."""
    n_max, n_rep = _length(repeats), len(repeats)
    keys = len(repeats[0]["keys"]) if repeats else 0
    dtype = _dtype(n_max * n_rep)
    shape = (n_max, n_rep)
    fevals, times, perf, best, stds = (np.full(shape, np.nan, dtype=dtype) for _ in range(5))
    times_key = np.full((keys, n_max, n_rep), np.nan, dtype=dtype)
    perf_key = np.full((keys, n_max, n_rep), np.nan, dtype=dtype)
    for r, rep in enumerate(repeats):
        n = min(len(rep["i"]), n_max)
        if n == 0:
            continue
        fevals[:n, r] = np.arange(1, n + 1)
        kept = np.array([x != "constraints" for x in rep["i"][:n]])
        t = np.array([[np.nan if x is None else x for x in row] for row in rep["t"][:n]], dtype=float).reshape(n, keys)
        valid_t = ~np.isnan(t) & (t >= 0) & kept[:, None]
        times_key[:, :n, r] = np.where(valid_t, t, np.nan).T
        total = np.zeros(n)
        for k in range(keys):  # sum(objective_times_list): the keys in order, from 0
            total = total + np.where(valid_t[:, k], t[:, k], 0.0)
        counted = valid_t.any(axis=1) & ~np.isnan(total) & (total >= 0)
        running = np.cumsum(np.where(counted, total, 0.0))
        times[:n, r] = np.where(counted, running, np.nan)
        v = np.where(kept, _values(rep["v"][:n]), np.nan)
        perf_key[0, :n, r] = v
        perf[:n, r] = v
        so_far = (np.fmin if minimization else np.fmax).accumulate(v)
        best[:n, r] = np.where(kept, so_far, np.nan)
    return {"fevals_results": fevals, "objective_time_results": times, "objective_performance_results": perf,
            "objective_performance_best_results": best, "objective_performance_stds": stds,
            "objective_time_results_per_key": times_key, "objective_performance_results_per_key": perf_key}


class Description:
    """Duck-typed ``caching.ResultsDescription``: the package's arrays, kept in memory."""

    def __init__(self, gpu: str, application: str, name: str, display: str, time_keys: list[str],
                 objective: str, minimization: bool) -> None:
        self.device_name, self.application_name = gpu, application
        self.group_name, self.group_display_name = name, display
        self.stochastic = True
        self.objective_time_keys = time_keys
        self.objective_performance_keys = [objective]
        self.minimization = minimization
        self.arrays: dict[str, np.ndarray] = {}

    def set_results(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays

    def get_results(self) -> Any:
        from autotuning_methodology.caching import Results

        return Results([self.arrays[k] for k in ("fevals_results", "objective_time_results",
                                                 "objective_performance_results", "objective_performance_best_results",
                                                 "objective_performance_stds", "objective_time_results_per_key",
                                                 "objective_performance_results_per_key")])

    def has_results(self) -> bool:
        return bool(self.arrays)


def split_curve(parts: tuple[Any, ...]) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """The package's split curve (real and extrapolated parts) joined: (stop index, curve, lower, upper)."""
    stop, _xr, c, lo, hi, xf, cf, lof, hif = parts
    if xf.ndim > 0:
        c, lo, hi = np.concatenate([c, cf]), np.concatenate([lo, lof]), np.concatenate([hi, hif])
    return int(stop), c, lo, hi
