"""The confirm phase's numbers: per-configuration medians, paired speed-ups and the decision.

Split from :mod:`searchlab.run.confirm` (which measures): everything here is a pure function of
recorded results, so the phase's stopping rule, ``summary.json`` and the printed lines all
read the same numbers (issue 35: one story per run).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from searchlab.core.measure import Samples, median_ci, samples_are_objective
from searchlab.core.records import Config, Direction, Result, loss
from searchlab.core.speedup import UNDECIDED, decide, ratio_interval, sequential_interval, speedup

PHASE = "confirm"


def is_confirmation(result: Result) -> bool:
    return result.candidate.meta.get("phase") == PHASE


def top_k(results: Iterable[Result], direction: Direction, k: int, exclude: str | None = None) -> list[Result]:
    """The ``k`` best distinct configurations the search measured (first measurement wins ties),
    leaving out the configuration keyed ``exclude`` (the default, measured on its own)."""
    best: dict[str, Result] = {}
    for r in results:
        if is_confirmation(r) or not math.isfinite(loss(r.measurement, direction)) or r.config.key == exclude:
            continue
        known = best.get(r.config.key)
        if known is None or loss(r.measurement, direction) < loss(known.measurement, direction):
            best[r.config.key] = r
    ranked = sorted(best.values(), key=lambda r: (loss(r.measurement, direction), r.id))
    return ranked[:k]


def search_ranks(results: Sequence[Result], direction: Direction) -> dict[str, int]:
    """Each configuration's rank among the search's distinct configurations by its best single
    measurement (1: the search's best), the default included: "the 2nd-best single measurement"
    must mean that even when the default was the best (issue 54, item 2)."""
    return {r.config.key: n for n, r in enumerate(top_k(results, direction, len(results)), start=1)}


def _values(results: Sequence[Result]) -> list[float]:
    """Pooled samples when they are draws of the objective, else one objective per round."""
    values: list[float] = []
    for r in results:
        m = r.measurement
        if samples_are_objective(m):
            values.extend(m.samples)
        elif m.objective is not None:
            values.append(m.objective)
    return values


def entry(mine: Sequence[Result]) -> dict[str, Any]:
    """Counts, pooled median and its 95 % interval of one configuration's confirmations."""
    ok = [r for r in mine if r.ok]
    values = _values(ok)
    out: dict[str, Any] = {"measurements": len(mine), "failed": len(mine) - len(ok), "samples": len(values),
                           "rounds": len(_by_round(ok))}
    if values:
        lo, hi = median_ci(values)
        out.update(median=float(statistics.median(values)), ci95=[lo, hi], cv=Samples(tuple(values)).cv)
    return out


def _by_round(results: Iterable[Result]) -> dict[int, Result]:
    return {int(r.candidate.meta.get("round", -1)): r for r in results if r.ok and r.objective is not None}


def paired_speedup(candidate: Sequence[Result], default: Sequence[Result], direction: Direction,
                   basis: str = "tuning", comparisons: int = 1, exact: bool = False) -> dict[str, Any] | None:
    """The candidate's speed-up over the default, paired by round (both measured in that round), in
    total (the objective) and per dataset where the measurements name datasets, with the anytime
    interval of :func:`searchlab.core.speedup.sequential_interval` (``comparisons``: candidates
    compared with the default at once; ``exact``: one exact pair, its ratio is the point)."""
    mine, base = _by_round(candidate), _by_round(default)
    rounds = sorted(set(mine) & set(base))
    if not rounds:
        return None
    ratios = [speedup(base[n].objective or 0.0, mine[n].objective or 0.0, direction) for n in rounds]
    def interval(values: Sequence[float]) -> dict[str, Any]:
        return ratio_interval(values) if exact else sequential_interval(values, comparisons)

    out = {"basis": basis, **interval(ratios), "datasets": {}}
    names = [d for d in mine[rounds[0]].measurement.datasets if d in base[rounds[0]].measurement.datasets]
    for d in names:
        per = [speedup(base[n].measurement.datasets[d], mine[n].measurement.datasets[d], Direction.MINIMIZE)
               for n in rounds if d in mine[n].measurement.datasets and d in base[n].measurement.datasets]
        out["datasets"][d] = interval(per)
    return out


def standings(confirmations: Sequence[Result], candidates: Sequence[Config], default: Config,
              direction: Direction) -> list[tuple[Config, dict[str, Any]]]:
    """Each candidate with its paired comparison against the default, best (highest median
    speed-up) first; every interval at ``alpha / len(candidates)`` so the best is covered too."""
    base = [r for r in confirmations if r.config.key == default.key]
    out = []
    for rank, config in enumerate(candidates):
        mine = [r for r in confirmations if r.config.key == config.key]
        c = paired_speedup(mine, base, direction, comparisons=len(candidates))
        if c is not None:
            out.append((rank, config, c))
    out.sort(key=lambda t: (-t[2]["speedup"], t[0]))
    return [(config, c) for _, config, c in out]


def decision(confirmations: Sequence[Result], candidates: Sequence[Config], default: Config,
             direction: Direction, equivalence: float) -> str | None:
    """The sequential rule's decision now (the best candidate's interval), None: measure on."""
    ranked = standings(confirmations, candidates, default, direction)
    return decide(ranked[0][1]["ci95"], equivalence) if ranked else None


def confirm_report(search: Sequence[Result], confirmations: Sequence[Result], direction: Direction,
                   k: int, complete: bool, default: Config | None = None, *,
                   equivalence: float = 0.0, stopped: str = "") -> dict[str, Any]:
    """``summary.json``'s ``confirm`` section: every candidate, the confirmed best, the default, the
    best's paired speed-up over it (``versus_default``) and the ``decision`` with why it stopped."""
    candidates = []
    exclude = default.key if default is not None else None
    ranks = search_ranks(search, direction)
    for found in top_k(search, direction, k, exclude):
        mine = [r for r in confirmations if r.config.key == found.config.key]
        candidates.append({"rank": ranks[found.config.key], "config": dict(found.config),
                           "search_objective": found.objective, **entry(mine)})
    measured = [c for c in candidates if "median" in c]
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    best = min(measured, key=lambda c: (sign * c["median"], c["rank"])) if measured else None
    report: dict[str, Any] = {"k": k, "rounds": max([c["rounds"] for c in candidates] or [0]), "complete": complete,
                              "candidates": candidates, "default": None, "versus_default": None,
                              "decision": None, "stopped": stopped, "equivalence": equivalence}
    if default is not None:
        report["default"] = {"config": dict(default), **entry([r for r in confirmations if r.config.key == default.key]),
                             "search_rank": ranks.get(default.key)}  # 1: the default was the search's best
        ranked = standings(confirmations, [Config(c["config"]) for c in candidates], default, direction)
        if ranked:  # with a default, the best is the one with the highest paired speed-up over it
            key = ranked[0][0].key
            best = next(c for c in candidates if Config(c["config"]).key == key)
            report["versus_default"] = ranked[0][1]
            report["decision"] = decide(ranked[0][1]["ci95"], equivalence) or UNDECIDED
    report["best"] = best
    report["search_best_confirmed"] = bool(best and best["rank"] == 1)
    return report


def default_was_best(confirm: Mapping[str, Any]) -> bool:
    """Whether a ``confirm`` section says the user's default was the search's best single
    measurement (issue 54, item 2: the summary must say so, not name another configuration)."""
    return ((confirm.get("default") or {}).get("search_rank")) == 1


def noise_report(results: Sequence[Result]) -> dict[str, Any] | None:
    """The noise of a run's measurements: median CV of the measurements with >= 2 samples."""
    cvs = [Samples(r.measurement.samples).cv for r in results if r.ok and len(r.measurement.samples) >= 2]
    if not cvs:
        return None
    return {"median_cv": float(statistics.median(cvs)), "max_cv": float(max(cvs)), "measurements": len(cvs),
            "median_samples": float(statistics.median(len(r.measurement.samples) for r in results
                                                      if r.ok and len(r.measurement.samples) >= 2))}



def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"


def progress_text(results: Sequence[Result], configs: Sequence[Config], default: Config | None,
                  direction: Direction, planned: int, max_rounds: int, elapsed: float, max_time_s: float) -> str:
    """The confirm phase's progress line (issue 46 item 2): the round out of the most it may take,
    and the best candidate's current interval against the default, in the verdict's digits."""
    counts = [sum(1 for r in results if r.config.key == c.key) for c in configs]
    current = min(min(counts, default=0) + 1, max(planned, 1))
    cap = "" if not math.isfinite(max_time_s) else f" (cap {_clock(max_time_s)})"
    text = (f"round {current} of at most {max_rounds}, {len(configs)} configurations each; "
            f"{len(results)} measurements, elapsed {_clock(elapsed)}{cap}")
    if default is not None and len(configs) > 1:
        ranked = standings(results, configs[1:], default, direction)
        if ranked:
            from searchlab.core.speedup import show_speedup

            c = ranked[0][1]
            x, interval = show_speedup(c["speedup"], *c["ci95"])
            text += f"; best vs default {x}x {interval} ({decide(c['ci95'], 0.0) or 'measuring on'})"
    return text
