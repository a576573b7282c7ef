"""The statistics of ``bench/auto_kt.py`` and ``bench/auto_heldout.py``: bootstrap intervals, the issue-53 criteria.

Intervals are 95 % percentile bootstrap intervals (5,000 resamples, seeded): of a mean over runs, of a median
over runs, of a ratio of medians (each side resampled over its own runs; for "the median strategy", each
strategy's runs resampled, then the median over strategies of their medians), and of a p50 / p90 of per-proposal
times (runs resampled whole, since proposals within a run are not independent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

RESAMPLES = 5000


def _rng() -> np.random.Generator:
    return np.random.default_rng(20260)


def interval(values: Sequence[float], stat: Callable[[np.ndarray], float] = np.mean) -> dict[str, Any]:
    """``stat`` of ``values`` and its bootstrap interval over the values."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return {"value": None, "ci": [None, None], "n": 0}
    picks = _rng().integers(len(x), size=(RESAMPLES, len(x)))
    boot = np.array([stat(x[p]) for p in picks]) if stat is not np.mean else x[picks].mean(axis=1)
    return {"value": float(stat(x)), "ci": [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))],
            "n": len(x)}


def quantile_of_runs(runs: Sequence[Sequence[float]], q: float) -> dict[str, Any]:
    """The q-quantile of every proposal time of ``runs``, with an interval from resampling whole runs."""
    arrays = [np.asarray(r, dtype=float) for r in runs if len(r)]
    if not arrays:
        return {"value": None, "ci": [None, None], "n": 0}
    rng = _rng()
    boot = [float(np.quantile(np.concatenate([arrays[i] for i in rng.integers(len(arrays), size=len(arrays))]), q))
            for _ in range(1000)]
    return {"value": float(np.quantile(np.concatenate(arrays), q)),
            "ci": [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))], "n": int(sum(map(len, arrays)))}


def wall_ratio(auto: Sequence[float], strategies: dict[str, Sequence[float]]) -> dict[str, Any]:
    """auto's median wall time over the median (over strategies) of each strategy's median, with an interval."""
    rng = _rng()
    a = np.asarray(auto, dtype=float)
    s = {k: np.asarray(v, dtype=float) for k, v in strategies.items()}
    point = float(np.median(a) / np.median([np.median(v) for v in s.values()]))
    boot = []
    for _ in range(2000):
        mid = np.median([np.median(v[rng.integers(len(v), size=len(v))]) for v in s.values()])
        boot.append(float(np.median(a[rng.integers(len(a), size=len(a))]) / mid))
    return {"value": point, "ci": [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))],
            "auto_median_s": float(np.median(a)),
            "median_strategy_s": float(np.median([np.median(v) for v in s.values()]))}


def summary(main: list[dict[str, Any]], trap: list[dict[str, Any]], over: list[dict[str, Any]],
            budget: int) -> dict[str, Any]:
    rows = sorted({r["row"] for r in main}, key=lambda r: (r != "auto", r))
    checkpoints = sorted({int(n) for r in main for n in r["at"]})
    table: dict[str, Any] = {}
    for row in rows:
        mine = [r for r in main if r["row"] == row]
        table[row] = {"wall_s_median": interval([r["wall_s"] for r in mine], np.median),
                      "fraction": {str(n): interval([r["at"][str(n)] for r in mine]) for n in checkpoints},
                      "lowest_at_100": min(r["at"]["100"] for r in mine) if "100" in mine[0]["at"] else None}
    walls = {row: [r["wall_s"] for r in main if r["row"] == row] for row in rows}
    ratio = wall_ratio(walls["auto"], {k: v for k, v in walls.items() if k != "auto"}) if len(rows) > 1 else None
    by_table = {t: [r["at"] for r in trap if r["table"] == t] for t in sorted({r["table"] for r in trap})}
    trap_out = {t: {"mean": float(np.mean(v)), "lowest": float(np.min(v)), "below_0.90": int(sum(x < 0.90 for x in v)),
                    "seeds": len(v)} for t, v in by_table.items()}
    trap_all = [r["at"] for r in trap]
    proposals = {"tables_250": [r["proposal_s"] for r in main if r["row"] == "auto"],
                 "trap_100": [r["proposal_s"] for r in trap], "past_the_space": [r["proposal_s"] for r in over]}
    times: dict[str, dict[str, Any]] = {
        k: {"p50": quantile_of_runs(v, 0.5), "p90": quantile_of_runs(v, 0.9),
            "max": max((max(x) for x in v if x), default=None)} for k, v in proposals.items()}
    p90s = [t["p90"]["value"] for t in times.values()]
    worst_p90 = max((float(v) for v in p90s if v is not None), default=None)
    return {
        "rows": table, "wall_ratio": ratio, "trap": trap_out, "proposal_time_s": times,
        "past_the_space": [{k: r[k] for k in ("table", "seed", "members", "max_fevals", "wall_s", "distinct",
                                              "proposals")} for r in over],
        "criteria": {
            "wall_ratio_at_most_3": _ratio_met(ratio),
            "p90_proposal_at_most_50ms": {"worst_p90_s": worst_p90, "met": worst_p90 is not None and worst_p90 <= 0.05},
            "trap_mean_at_least_0.97": {"value": float(np.mean(trap_all)) if trap_all else None,
                                        "met": bool(trap_all) and float(np.mean(trap_all)) >= 0.97},
            "trap_no_seed_below_0.90": {"lowest": float(np.min(trap_all)) if trap_all else None,
                                        "met": bool(trap_all) and float(np.min(trap_all)) >= 0.90},
        },
        "budget": budget,
    }


def minus_before(main: list[dict[str, Any]], trap: list[dict[str, Any]], before: dict[str, Any]) -> dict[str, Any]:
    """This run's ``auto`` minus an earlier run's, paired on (table, seed): per checkpoint of the side-by-side runs,
    and at the trap budget; a mean difference with its bootstrap interval (an interval holding 0: no difference)."""
    def paired(now: dict[tuple[str, int], Any], then: dict[tuple[str, int], Any]) -> dict[str, Any]:
        keys = sorted(set(now) & set(then))
        if not keys:
            return {"pairs": 0}
        if isinstance(now[keys[0]], dict):
            marks = sorted(set(now[keys[0]]) & set(then[keys[0]]), key=int)
            return {"pairs": len(keys), **{n: interval([now[k][n] - then[k][n] for k in keys]) for n in marks}}
        return {"pairs": len(keys), "at": interval([now[k] - then[k] for k in keys])}

    def auto_runs(runs: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
        return {(r["table"], r["seed"]): r["at"] for r in runs if r.get("row", "auto") == "auto"}

    return {"side_by_side": paired(auto_runs(main), auto_runs(before.get("runs", []))),
            "trap": paired(auto_runs(trap), auto_runs(before.get("trap_runs", [])))}


def _ratio_met(ratio: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if ratio is None else {"value": ratio["value"], "ci": ratio["ci"], "met": ratio["value"] <= 3}
