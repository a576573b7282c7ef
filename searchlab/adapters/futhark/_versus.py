"""Tuned against untuned on the validation datasets, interleaved, and what a run recommends.

Never worse than doing nothing (issue 22): the untuned program (no ``.tuning``: Futhark's
default thresholds) and the tuned configuration are measured in alternating rounds on the
validation datasets (each round also times all-false and a reference, in a rotated order), so a
slow minute of a shared machine hits every configuration alike. The speed-up is paired by
round (untuned time / tuned time of the same round), per dataset and on the summed time, with
the anytime-valid 95 % interval of its median (``searchlab.core.speedup.sequential_interval``),
measured until that interval decides or a cap is reached, as in the confirm phase. A ``.tuning``
file is written only when the summed speed-up's lower end is above 1; without validation
datasets the confirm phase's paired comparison on the training datasets decides.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from searchlab.core.heartbeat import heartbeat
from searchlab.core.measure import median_ci
from searchlab.core.problem import FinalizeContext
from searchlab.core.records import Config
from searchlab.core.speedup import UNDECIDED, confirmed_choice, decide, recommended, sequential_interval, show_speedup

Rounds = dict[str, list[dict[str, float]]]  # label -> per round, dataset -> median seconds


def validation_rounds(problem: Any, ctx: FinalizeContext, configs: Mapping[str, Mapping[str, int]],
                      names: list[str], runs: int) -> Rounds:
    """Every configuration on the validation datasets in interleaved rounds of ``runs`` timed runs
    each (order rotated per round): ``ctx.rounds`` rounds, then one more at a time until the
    sequential rule decides tuned against untuned or a cap (``ctx.max_rounds``,
    ``ctx.max_time_s``) is reached (searchlab.core.speedup; the confirm phase's rule)."""
    labels = list(configs)
    out: Rounds = {label: [] for label in labels}
    started, n, last = time.time(), 0, 0.0
    # the cap holds from the second round on: a round is started only when the last one's length says it
    # ends before the cap (issue 54, item 1); the first always runs (nothing is compared without it)
    while n == 0 or (time.time() - started + last <= ctx.max_time_s
                     and (n < max(ctx.rounds, 1) or not _settled(out, ctx, started, n, configs))):
        shift, begun = n % len(labels), time.time()
        for label in [*labels[shift:], *labels[:shift]]:
            _show(ctx, out, n, started, label)
            beat = heartbeat("validation", f"round {n + 1}, measuring {label}") if ctx.progress else nullcontext()
            with beat:  # one call may outlast the display's pace (issue 54: never silent > 10 s)
                times = ctx.call("validation_times", dict(configs[label]), names, runs)
            out[label].append({d: float(v["median"] if isinstance(v, Mapping) else v) for d, v in times.items()})
        n, last = n + 1, time.time() - begun
    return out


def _show(ctx: FinalizeContext, rounds: Rounds, n: int, started: float, label: str) -> None:
    """Progress of the validation rounds (issue 46 item 2): the round out of the most it may take,
    and tuned against untuned so far, in the verdict's digits."""
    if ctx.progress is None:
        return

    def text() -> str:
        line = (f"round {n + 1} of at most {max(ctx.max_rounds, ctx.rounds)} ({len(rounds)} configurations), "
                f"measuring {label}; elapsed {int(time.time() - started)} s (cap {ctx.max_time_s:.0f} s)")
        pairs = min(len(rounds.get("untuned", [])), len(rounds.get("tuned", [])))
        if pairs:
            c = paired(rounds["untuned"][:pairs], rounds["tuned"][:pairs], "validation")
            x, interval = show_speedup(c["speedup"], *c["ci95"])
            line += f"; tuned vs untuned {x}x {interval}"
        return line

    ctx.progress("validation", text)


def _settled(rounds: Rounds, ctx: FinalizeContext, started: float, n: int,
             configs: Mapping[str, Mapping[str, int]]) -> bool:
    """Whether no further round is needed: decided, capped, or nothing to compare."""
    if configs.get("tuned") == configs.get("untuned") or n >= max(ctx.max_rounds, ctx.rounds):
        return True
    if time.time() - started >= ctx.max_time_s:
        return True
    c = paired(rounds["untuned"], rounds["tuned"], "validation")
    return decide(c["ci95"], ctx.equivalence) is not None


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
    out = {"basis": basis, **sequential_interval(totals), "datasets": {}}
    for d in untuned[0]:
        out["datasets"][d] = sequential_interval([u[d] / max(t[d], 1e-300) for u, t in zip(untuned, tuned)])
    return out


def chosen(ctx: FinalizeContext, fallback: Any) -> tuple[Config, str]:
    """The configuration to compare with untuned: the confirm phase's best, else the tuner's answer."""
    confirm = ctx.confirm or {}
    best = confirm.get("best")
    if best is not None:
        k = len(confirm["candidates"])
        return Config(best["config"]), confirmed_choice(int(best["rank"]), k)
    return fallback.config, "the search's best (no confirm phase)"


def decision(comparison: Mapping[str, Any] | None, same: bool, equivalence: float = 0.0) -> tuple[bool, str]:
    """(recommend, why) for a comparison with untuned, in the sequential rule's words."""
    if same:
        return False, "the best configuration found is the untuned one"
    if comparison is None:
        return False, "not compared with untuned (no validation datasets and no confirm phase)"
    if recommended(comparison):
        return True, "measurably faster than untuned"
    verdict = decide(comparison["ci95"], equivalence) or UNDECIDED
    return False, {"slower": "the best found is measurably slower than untuned",
                   "equivalent": f"no difference from untuned (within ±{equivalence:.0%})",
                   UNDECIDED: "undecided: the interval still holds 1 at the cap"}[verdict]


def write_or_remove(path: Path, assignment: Mapping[str, int] | None, write: Any) -> str | None:
    """Write the recommended ``.tuning``; otherwise remove one an earlier finish of this run directory
    left (a resumed run), so the directory never holds a file its summary does not recommend."""
    if assignment is None:
        path.unlink(missing_ok=True)
        return None
    write(path, assignment)
    return str(path)
