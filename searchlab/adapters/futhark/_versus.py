"""Tuned against untuned on the validation datasets, interleaved, and what a run recommends.

Never worse than doing nothing (issue 22): the untuned program (no ``.tuning``: Futhark's
default thresholds) and the tuned configuration are measured in alternating rounds on the
validation datasets (each round also times all-false and a reference, in a rotated order), so a
slow minute of a shared machine hits every configuration alike. The speed-up is paired by
round (untuned time / tuned time of the same round), per dataset and on the summed time, with
the distribution-free 95 % interval of its median (``searchlab.confirm.ratio_interval``). A
``.tuning`` file is written only when the summed speed-up's lower end is above 1; without
validation datasets the confirm phase's paired comparison on the training datasets decides.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.confirm import ratio_interval, recommended
from searchlab.core.measure import median_ci
from searchlab.core.problem import FinalizeContext
from searchlab.records import Config

Rounds = dict[str, list[dict[str, float]]]  # label -> per round, dataset -> median seconds


def validation_rounds(problem: Any, ctx: FinalizeContext, configs: Mapping[str, Mapping[str, int]],
                      names: list[str], runs: int) -> Rounds:
    """Every configuration on the validation datasets, ``ctx.rounds`` interleaved rounds of
    ``runs`` timed runs each (order rotated per round)."""
    labels = list(configs)
    out: Rounds = {label: [] for label in labels}
    for n in range(max(ctx.rounds, 1)):
        shift = n % len(labels)
        for label in [*labels[shift:], *labels[:shift]]:
            times = ctx.call("validation_times", dict(configs[label]), names, runs)
            out[label].append({d: float(v["median"] if isinstance(v, Mapping) else v) for d, v in times.items()})
    return out


def round_runs(total: int, rounds: int) -> int:
    """Timed runs per round: the configured validation runs spread over the rounds (at least 2)."""
    return max(2, math.ceil(total / max(rounds, 1)))


def summarise(rounds: Rounds) -> dict[str, dict[str, dict[str, Any]]]:
    """label -> dataset -> median over rounds of the round medians, its 95 % interval, CV."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, per_round in rounds.items():
        out[label] = {}
        for d in per_round[0] if per_round else {}:
            xs = [r[d] for r in per_round]
            mean = statistics.fmean(xs)
            cv = statistics.stdev(xs) / mean if len(xs) > 1 and mean > 0 else 0.0
            out[label][d] = {"median": statistics.median(xs), "ci95": list(median_ci(xs)), "cv": cv}
    return out


def paired(untuned: list[dict[str, float]], tuned: list[dict[str, float]], basis: str) -> dict[str, Any]:
    """Speed-up of tuned over untuned paired by round: summed over datasets, and per dataset."""
    totals = [sum(u.values()) / max(sum(t.values()), 1e-300) for u, t in zip(untuned, tuned)]
    out = {"basis": basis, **ratio_interval(totals), "datasets": {}}
    for d in untuned[0]:
        out["datasets"][d] = ratio_interval([u[d] / max(t[d], 1e-300) for u, t in zip(untuned, tuned)])
    return out


def chosen(ctx: FinalizeContext, fallback: Any) -> tuple[Config, str]:
    """The configuration to compare with untuned: the confirm phase's best, else the tuner's answer."""
    best = (ctx.confirm or {}).get("best")
    if best is not None:
        k = len(ctx.confirm["candidates"])  # type: ignore[index]
        return Config(best["config"]), f"confirmed best of {k}" + ("" if best["rank"] == 1
                                                                  else f", the search's #{best['rank']}")
    return fallback.config, "the search's best (no confirm phase)"


def decision(comparison: Mapping[str, Any] | None, same: bool) -> tuple[bool, str]:
    """(recommend, why) for a comparison with untuned."""
    if same:
        return False, "the best configuration found is the untuned one"
    if comparison is None:
        return False, "not compared with untuned (no validation datasets and no confirm phase)"
    if recommended(comparison):
        return True, "measurably faster than untuned"
    return False, "nothing measurably faster than untuned was found"


def write_or_remove(path: Path, assignment: Mapping[str, int] | None, write: Any) -> str | None:
    """Write the recommended ``.tuning``; otherwise remove one an earlier finish of this run directory
    left (a resumed run), so the directory never holds a file its summary does not recommend."""
    if assignment is None:
        path.unlink(missing_ok=True)
        return None
    write(path, assignment)
    return str(path)
