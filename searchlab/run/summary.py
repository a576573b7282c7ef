"""``summary.json``: what a person (or a study) wants to know about a finished run."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.records import Direction, Result, loss
from searchlab.core.speedup import confirmed_choice, show_speedup
from searchlab.core.units import run_time_unit, show
from searchlab.run.confirm_report import default_was_best, noise_report
from searchlab.run.failures import failure_lines, first_failures
from searchlab.run.loop import is_known_infeasible
from searchlab.run.recommend import recommended_entry
from searchlab.run.verdict import build_verdict


def trajectory(results: Sequence[Result], direction: Direction) -> list[list[float]]:
    """[evaluation number, best objective so far] at every improvement."""
    out: list[list[float]] = []
    best = math.inf
    for n, result in enumerate(results, start=1):
        value = loss(result.measurement, direction)
        if value < best:
            best = value
            out.append([n, result.objective or 0.0])  # finite loss: an objective
    return out


def build_summary(run: Mapping[str, Any], results: Sequence[Result], stop_reason: str, wall_time_s: float,
                  problem: Problem, best: Result | None, report: Mapping[str, Any],
                  devices: Sequence[Mapping[str, Any]], *, confirm: Mapping[str, Any] | None = None) -> dict[str, Any]:
    statuses = Counter(r.status.value for r in results)
    modes = Counter(r.measurement.failure_mode.value for r in results if not r.ok)
    summary = {
        "problem": run["problem"], "searcher": run["searcher"], "seed": run["seed"], "name": run.get("name"),
        "fingerprint": run["fingerprint"], "direction": problem.direction.value,
        "objective_name": problem.objective_name, "evaluations": len(results),
        "status_counts": dict(statuses), "failure_modes": dict(modes), "failures": first_failures(results),
        "cache_hits": sum(r.cache_hit for r in results),
        "best": None if best is None else {
            "candidate_id": best.id, "config": dict(best.config), "objective": best.objective,
            "description": problem.describe_config(best.config),
            "evaluation": next(i for i, r in enumerate(results, 1) if r.id == best.id),
        },
        "known_optimum": run.get("known_optimum"), "stop_reason": stop_reason, "wall_time_s": wall_time_s,
        "charged_time_s": sum(r.measurement.charged for r in results),
        "trajectory": trajectory(results, problem.direction), "devices": list(devices),
        "executor": next((d.get("executor") for d in devices if d.get("executor")), None),  # the one that ran
        "versions": run.get("versions"), "report": dict(report),
        **measurement_counts(results), "noise": noise_report(results),
        "confirm": None if confirm is None else dict(confirm),
        "default_config": _default(problem),  # what the user runs untuned (None: the problem has none)
        "load": run.get("load"),  # the machine's load before the workers started (searchlab.run.load)
    }
    summary["best_measured"] = summary["best"]  # what ``best`` is: the search's best single measurement
    summary["recommended"] = recommended_entry(summary)  # what the run hands over (searchlab.run.recommend)
    summary["verdict"] = run_verdict(run, summary, results)
    return summary


def _default(problem: Problem) -> dict[str, Any] | None:
    """The problem's default as a plain mapping: the verdict of a run interrupted before its confirm
    phase still knows there is one (issue 54, item 2)."""
    try:
        default = problem.default_config()
    except Exception:  # a summary is written whatever a problem's hook does
        return None
    return None if default is None else dict(default)


def run_verdict(run: Mapping[str, Any], summary: Mapping[str, Any], results: Sequence[Result]) -> str:
    """``summary.json``'s ``verdict`` (searchlab.run.verdict), printed last."""
    budget = ((run.get("config") or {}).get("budget") or {}).get("evaluations")
    size = (run.get("space") or {}).get("size")
    return build_verdict(summary, budget, size if isinstance(size, int) else None,
                         len({r.config.key for r in results}))


def measurement_counts(results: Sequence[Result]) -> dict[str, int]:
    """What ``budget.evaluations`` counted (measurements and cache hits) and what it did not
    (known-infeasible proposals, never measured: searchlab.run.loop)."""
    infeasible = sum(is_known_infeasible(r) for r in results)
    return {"measurements": len(results) - infeasible, "infeasible_proposals": infeasible}


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """Write atomically (temp file + rename): a killed run never leaves half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    os.replace(tmp, path)


def format_summary(s: Mapping[str, Any], run_dir: Path) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in sorted(s["status_counts"].items()))
    lines = [f"searchlab: {s['problem']} / {s['searcher']} (seed {s['seed']}): {s['evaluations']} evaluations "
             f"({counts}) in {s['wall_time_s']:.1f} s, stopped on {s['stop_reason']}"]
    lines += failure_lines(s)  # each failure mode with its count and first message (searchlab.run.failures)
    best = s["best"]
    if best is None:
        lines.append("  no successful evaluation")
    else:
        optimum = s.get("known_optimum")
        unit = run_time_unit(s["objective_name"], best["objective"])
        gap = f" (known optimum {show(s['objective_name'], optimum, unit)})" if isinstance(optimum, (int, float)) else ""
        lines.append(f"  search's best {s['objective_name']} = {show(s['objective_name'], best['objective'], unit)}{gap} "
                     f"at evaluation {best['evaluation']} (one measurement)")
        lines.append(f"  search's best configuration: {best['description']}")
    lines += _noise_lines(s)
    text = s.get("report", {}).get("report_text")
    if text:
        lines.append(str(text))
    lines.append(f"  records: {run_dir / 'results.db'}  summary: {run_dir / 'summary.json'}")
    return "\n".join(lines)


def _noise_lines(s: Mapping[str, Any]) -> list[str]:
    """The measurements' noise and the confirm phase's best with its interval."""
    lines = []
    if s.get("infeasible_proposals"):
        lines.append(f"  {s['measurements']} measurements counted by the budget; "
                     f"{s['infeasible_proposals']} known-infeasible proposals recorded, not counted")
    noise = s.get("noise")
    if noise:
        lines.append(f"  noise: median CV {noise['median_cv']:.2%} over {noise['measurements']} measurements "
                     f"(median {noise['median_samples']:.0f} samples each, max CV {noise['max_cv']:.2%})")
    confirm = s.get("confirm")
    if confirm:
        best = confirm.get("best")
        state = "" if confirm.get("complete") else " (interrupted: partial)"
        if best is None:
            lines.append(f"  confirm phase{state}: no candidate measured successfully")
        else:
            lines.append(_confirm_line(s, confirm, best, state))
    return lines


def _confirm_line(s: Mapping[str, Any], confirm: Mapping[str, Any], best: Mapping[str, Any], state: str) -> str:
    """The confirmed best (and the default measured beside it) in the run's time unit."""
    name = s["objective_name"]
    unit = run_time_unit(name, (s.get("best") or {}).get("objective", best["median"]))

    def cell(entry: Mapping[str, Any]) -> str:
        lo, hi = entry["ci95"]
        return f"{show(name, entry['median'], unit)} [95% CI {show(name, lo, unit)}, {show(name, hi, unit)}]"

    which = confirmed_choice(int(best["rank"]), len(confirm["candidates"]))
    default = confirm.get("default")
    if confirm.get("exact"):
        return f"  default {name} = {show(name, confirm['default']['median'], unit)} (exact, measured once)" \
            if (confirm.get("default") or {}).get("median") is not None else "  default: not measured"
    plus = " and the default" if default else ""
    text = ""
    if default_was_best(confirm):
        text = (f"  your default was the search's best single measurement; re-measured beside it: the next "
                f"{len(confirm['candidates'])} best\n")
    text += (f"  re-measured best {name} = {cell(best)} ({which}; {best['samples']} samples, "
             f"{len(confirm['candidates'])} candidates{plus} x {confirm['rounds']} rounds interleaved){state}")
    if best["rank"] != 1:
        text += "\n  re-measured best configuration: " + ", ".join(f"{k}={v}" for k, v in best["config"].items())
    if default and default.get("median") is not None:
        text += f"\n  default {name} = {cell(default)} (measured in the same rounds)"
    c = confirm.get("versus_default")
    if c:
        x, interval = show_speedup(c["speedup"], *c["ci95"])
        text += (f"\n  paired speed-up over the default: {x}x {interval} (anytime 95 %, "
                 f"{c['pairs']} rounds; {confirm.get('decision')}, stopped: {confirm.get('stopped')})")
    return text
