"""Failure reasons a person can read: the first message of each failure mode, and wrong-output messages
in plain numbers with got/want labels (issue 27, item 2).

Why the first message: a run with 40 ``wrong_output`` failures usually has one cause, and its first
occurrence names it; ``results.db`` keeps every message for the rest. Why plain numbers: numpy's
``repr`` (``np.float64(0.1565...)``) and unlabeled ``a vs b`` make the reader guess which side was
measured and which was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from searchlab.core.buildlog import first_error_line, is_error_line
from searchlab.core.records import Result

MESSAGE_CHARS = 160  # a console line stays readable; summary.json keeps the same text


def first_failures(results: Sequence[Result]) -> dict[str, dict[str, Any]]:
    """For each failure mode (as in ``failure_modes``): how many, and the first message with its evaluation."""
    out: dict[str, dict[str, Any]] = {}
    for n, result in enumerate(results, start=1):
        if result.ok:
            continue
        mode = result.measurement.failure_mode.value
        if mode in out:
            out[mode]["count"] += 1
        else:
            message = " ".join(result.measurement.message.split()) or "(no message)"
            out[mode] = {"count": 1, "first": message, "evaluation": n,
                         "line": first_error_line(result.measurement.message) or message}
    return out


def failure_lines(summary: Mapping[str, Any]) -> list[str]:
    """The console block: one line per failure mode with its first message."""
    failures = summary.get("failures")
    if failures is None and summary.get("failure_modes"):  # a summary written before the field existed
        return ["  failures by mode: " + ", ".join(f"{k} {n}" for k, n in sorted(summary["failure_modes"].items()))]
    lines = ["  failures (first message of each mode):"] if failures else []
    for mode, info in sorted((failures or {}).items()):
        message = str(info["first"])
        line = str(info.get("line") or "")
        if line and is_error_line(line):  # a compiler's error line is shown whole (issue 54: it was cut off)
            message = line
        elif len(message) > MESSAGE_CHARS:
            message = message[:MESSAGE_CHARS - 3] + "..."
        lines.append(f"    {mode} x{info['count']}, first at evaluation {info['evaluation']}: {message}")
    return lines
