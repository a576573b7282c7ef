"""``summary.json``: what a person (or a study) wants to know about a finished run."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.problem import Problem
from searchlab.records import Direction, Result, loss


def trajectory(results: Sequence[Result], direction: Direction) -> list[list[float]]:
    """[evaluation number, best objective so far] at every improvement."""
    out: list[list[float]] = []
    best = math.inf
    for n, result in enumerate(results, start=1):
        value = loss(result.measurement, direction)
        if value < best:
            best = value
            out.append([n, float(result.objective)])  # type: ignore[arg-type]
    return out


def build_summary(run: Mapping[str, Any], results: Sequence[Result], stop_reason: str, wall_time_s: float,
                  problem: Problem, best: Result | None, report: Mapping[str, Any],
                  devices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    statuses = Counter(r.status.value for r in results)
    modes = Counter(r.measurement.failure_mode.value for r in results if not r.ok)
    return {
        "problem": run["problem"], "searcher": run["searcher"], "seed": run["seed"], "name": run.get("name"),
        "fingerprint": run["fingerprint"], "direction": problem.direction.value,
        "objective_name": problem.objective_name, "evaluations": len(results),
        "status_counts": dict(statuses), "failure_modes": dict(modes),
        "cache_hits": sum(r.cache_hit for r in results),
        "best": None if best is None else {
            "candidate_id": best.id, "config": dict(best.config), "objective": best.objective,
            "description": problem.describe_config(best.config),
            "evaluation": next(i for i, r in enumerate(results, 1) if r.id == best.id),
        },
        "known_optimum": run.get("known_optimum"), "stop_reason": stop_reason, "wall_time_s": wall_time_s,
        "charged_time_s": sum(r.measurement.charged for r in results),
        "trajectory": trajectory(results, problem.direction), "devices": list(devices),
        "versions": run.get("versions"), "report": dict(report),
    }


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """Write atomically (temp file + rename): a killed run never leaves half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    os.replace(tmp, path)


def format_summary(s: Mapping[str, Any], run_dir: Path) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in sorted(s["status_counts"].items()))
    lines = [f"searchlab: {s['problem']} / {s['searcher']} (seed {s['seed']}): {s['evaluations']} evaluations "
             f"({counts}) in {s['wall_time_s']:.1f} s, stopped on {s['stop_reason']}"]
    if s["failure_modes"]:
        lines.append("  failures by mode: " + ", ".join(f"{k} {n}" for k, n in sorted(s["failure_modes"].items())))
    best = s["best"]
    if best is None:
        lines.append("  no successful evaluation")
    else:
        optimum = s.get("known_optimum")
        gap = f" (known optimum {optimum:.6g})" if isinstance(optimum, (int, float)) else ""
        lines.append(f"  best {s['objective_name']} = {best['objective']:.6g}{gap} at evaluation {best['evaluation']}")
        lines.append(f"  best configuration: {best['description']}")
    text = s.get("report", {}).get("report_text")
    if text:
        lines.append(str(text))
    lines.append(f"  records: {run_dir / 'results.db'}  summary: {run_dir / 'summary.json'}")
    return "\n".join(lines)
