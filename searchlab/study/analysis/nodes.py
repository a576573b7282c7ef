"""Work per node: how a study's evaluations spread over the machines of a Ray cluster (issue 24).

Read from each run's ``evaluations.node`` (Ray's node id of the process that evaluated it).
A run recorded before that column existed, or outside Ray, counts under "unknown".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

UNKNOWN = "unknown"


def node_rows(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per node: the runs that used it, its evaluations and their share."""
    evaluations: dict[str, int] = {}
    runs_on: dict[str, int] = {}
    for run in runs:
        counts = run.nodes or {}
        for node, count in counts.items():
            key = node or UNKNOWN
            evaluations[key] = evaluations.get(key, 0) + count
            runs_on[key] = runs_on.get(key, 0) + 1
    total = sum(evaluations.values()) or 1
    return [{"node": node, "runs": runs_on[node], "evaluations": n, "share": f"{100.0 * n / total:.1f}%"}
            for node, n in sorted(evaluations.items(), key=lambda kv: (-kv[1], kv[0]))]


def _spread(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """The rows when the work spread over more than one machine; none on one machine (issue 35:
    a one-row table says nothing)."""
    rows = node_rows(runs)
    return rows if len(rows) > 1 else []


def html_section(runs: Sequence[Any], table: Callable[[Sequence[dict[str, Any]]], str]) -> str:
    rows = _spread(runs)
    return "<h2>Work per node</h2>" + table(rows) if rows else ""


def markdown_section(runs: Sequence[Any], table: Callable[[Sequence[dict[str, Any]]], str]) -> list[str]:
    rows = _spread(runs)
    return ["## Work per node", "", table(rows), ""] if rows else []
