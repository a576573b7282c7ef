"""A finished repeat as a study cell: what ``python -m searchlab.study DIR`` reads of a reproduce directory.

Each of Kernel Tuner's results becomes one evaluation, in the order Kernel Tuner made them: its configuration, its
objective (a number when ``invalidity`` is ``correct``), its status and failure mode (``compile``, ``runtime``,
``correctness`` -> ``wrong_output``, ``timeout``, ``constraints``), and as charged time the sum of the time keys
the experiment counts (seconds: what the methodology's time axis adds up). The cell's problem is the space
(``<gpu>/<application>``), its searcher the strategy's name, its seed the repeat's index (so the study pairs
repeats by index, as reproduce's own paired tests do; the seed that was used is in the cell's config), its
known optimum the space's best valid value, and its fingerprint the space file's digest.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["cell", "space_facts"]

_MODES = {"compile": "compile", "runtime": "runtime", "correctness": "wrong_output", "timeout": "timeout",
          "constraints": "constraint"}


def space_facts(space: Any) -> tuple[str, float]:
    """The space's fingerprint (its T4 file's digest) and its optimum (best valid objective)."""
    values = []
    for row in space.doc["results"]:
        if row.get("invalidity") != "correct":
            continue
        for m in row.get("measurements") or ():
            if m.get("name") == space.objective and isinstance(m.get("value"), (int, float)):
                values.append(float(m["value"]))
    return (space.digest or hashlib.sha256(space.key.encode()).hexdigest())[:16], \
        (min(values) if space.minimization else max(values))


def _charged(row: Sequence[Any]) -> float:
    return float(sum(v for v in row if v is not None and math.isfinite(v) and v >= 0))


def cell(plan: Any, index: int, outcome: Mapping[str, Any], wall: float, node: str, facts: tuple[str, float],
         versions: Mapping[str, str]) -> Any:
    """The study's ``CellRun`` of repeat ``index`` of ``plan``'s group."""
    from searchlab.study.execution.batch import CellRun, Evaluation

    group, spec = plan.group, plan.spec
    run = outcome["run"]
    evaluations = []
    for key, times, value, invalidity in zip(run["configs"], run["t"], run["v"], run["i"]):
        ok = invalidity == "correct" and isinstance(value, (int, float)) and math.isfinite(value)
        mode = "none" if ok else _MODES.get(str(invalidity), "invalid")
        status = "ok" if ok else ("timeout" if mode == "timeout" else "failed")
        evaluations.append(Evaluation(key, float(value) if ok else None, None, status, mode, _charged(times)))
    fingerprint, optimum = facts
    config = {"experiment_strategy": group.name, "search_method": group.search_method,
              "hyperparameters": dict(group.hyperparameters), "budget": dict(spec.budget), "repeat": index,
              "seed": outcome["seed"], "seed_fixed": bool(outcome.get("seed_fixed")),
              "attempts": outcome["attempts"], "samples": group.samples}
    return CellRun(key=f"{group.key}/seed_{index}", problem=f"{group.space.gpu}/{group.space.application}",
                   searcher=group.name, seed=index, fingerprint=fingerprint,
                   direction="minimize" if group.space.minimization else "maximize",
                   objective_name=spec.objective, known_optimum=optimum, config=config, versions=dict(versions),
                   devices=({"name": group.space.gpu, "kind": "simulated"},), node=node, stop_reason="budget",
                   status="finished", wall_time_s=wall, evaluations=tuple(evaluations))
