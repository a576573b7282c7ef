"""One kept time-axis curve as a self-contained task: arrays in, the package's standardised curve out.

A task holds only arrays and numbers (the strategy's result arrays, the space's sorted objective values, the time
range, the random-search baseline's curve over it and the optimum, the confidence level, the NumPy generator state
at the curve's place in the package's draw order), so it is written to an ``.npz`` (data: ``allow_pickle=False``)
and computed by whichever worker is free (:mod:`searchlab.reproduce.execute`), in any order. The baseline curve is
computed once per space by the driver with the package's own ``RandomSearchCalculatedBaseline.get_curve`` (a
Python loop over every point of the range: 3 s at 10^6 points, which ``get_strategy_scores`` pays for every
group) and the standardisation is the package's arithmetic, ``(curve - random) / (optimum - random)``, refusing a
zero division as it does.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ARRAYS", "load_task", "run_task", "save_task", "standardise"]

ARRAYS = ("fevals_results", "objective_time_results", "objective_performance_results",
          "objective_performance_best_results", "objective_performance_stds", "objective_time_results_per_key",
          "objective_performance_results_per_key")


def standardise(random: np.ndarray, optimum: float, curves: list[np.ndarray]) -> list[np.ndarray]:
    """``Baseline.get_standardised_curves``' arithmetic on a baseline curve computed once."""
    division = optimum - random
    if 0.0 in division:
        raise ValueError(f"Division by zero encountered, first at index {np.argmax(division == 0.0)}.")
    return [(c - random) / division for c in curves]


def save_task(path: Path, task: dict[str, Any]) -> None:
    state = task["state"]
    np.savez(path, **{f"a_{k}": task["arrays"][k] for k in ARRAYS}, dist=task["dist"], time_range=task["time_range"],
             random=task["random"], optimum=np.float64(task["optimum"]), level=np.float64(task["level"]),
             minimization=np.bool_(task["minimization"]), state_keys=state[1], state_pos=np.int64(state[2]),
             state_gauss=np.int64(state[3]), state_cached=np.float64(state[4]))


def load_task(path: Path) -> dict[str, Any]:
    with np.load(path, allow_pickle=False) as data:
        return {"arrays": {k: data[f"a_{k}"] for k in ARRAYS}, "dist": data["dist"], "time_range": data["time_range"],
                "random": data["random"], "optimum": float(data["optimum"]), "level": float(data["level"]),
                "minimization": bool(data["minimization"]),
                "state": ("MT19937", data["state_keys"], int(data["state_pos"]), int(data["state_gauss"]),
                          float(data["state_cached"]))}


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """``{"curve": standardised P, "lo", "hi", "raw", "raw_lo", "raw_hi", "stop"}`` or ``{"error": reason}``."""
    from searchlab.reproduce.arrays import Description, split_curve
    from searchlab.reproduce.fastcurve import SeededCurve

    desc = Description("", "", "", "", [], "", task["minimization"])
    desc.set_results(task["arrays"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = SeededCurve(desc, task["state"]).get_curve_over_time(task["time_range"], dist=task["dist"],
                                                                          confidence_level=task["level"])
            stop, raw, raw_lo, raw_hi = split_curve(parts)
            c, lo, hi = standardise(task["random"], task["optimum"], [raw, raw_lo, raw_hi])
    except (ValueError, AssertionError) as exc:
        return {"error": f"{type(exc).__name__}: {str(exc.args[0] if exc.args else exc)[:200]}"}
    return {"curve": c, "lo": lo, "hi": hi, "raw": raw, "raw_lo": raw_lo, "raw_hi": raw_hi,
            "stop": stop / len(task["time_range"])}
