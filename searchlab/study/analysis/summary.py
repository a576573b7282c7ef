"""Reading a run's ``summary.json`` for a study: bounded and checked (issue 47, items 10 and 11).

A leaf module (core and errors only), so the study's readers and its cell runner share it without a cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from searchlab.core.files import read_json
from searchlab.errors import ConfigError

SUMMARY = "summary.json"


def read_summary(run_dir: Path) -> dict[str, Any]:
    """A run's ``summary.json`` ({} if it has none), read through the bounded reader (its size checked before
    it is read: issue 47, item 11) and checked (item 10): what a study takes from it is a mapping with a
    ``report`` mapping and a numeric ``wall_time_s``. A damaged one is one ConfigError naming the file and
    what is wrong (exit 2, as damaged records are): delete it to study the run from its ``results.db``."""
    path = run_dir / SUMMARY
    if not path.is_file():
        return {}
    fix = "delete it to study the run from its results.db alone"
    try:
        summary = read_json(path, "summary")
    except ConfigError as exc:
        raise ConfigError(f"{exc}; {fix}") from None
    if not isinstance(summary, dict):
        raise ConfigError(f"summary {str(path)!r} holds a JSON {type(summary).__name__}, not a mapping; {fix}")
    wall = summary.get("wall_time_s")
    if wall is not None and not (type(wall) in (int, float) and abs(wall) < 1e300):  # NaN, inf, 10**400
        raise ConfigError(f"summary {str(path)!r}: wall_time_s={str(wall)[:40]!r} is not a number of seconds; {fix}")
    if not isinstance(summary.get("report") or {}, dict):
        raise ConfigError(f"summary {str(path)!r}: report is a JSON {type(summary['report']).__name__}, not a "
                          f"mapping; {fix}")
    return summary
