"""The config groups of a run, declared once (issue 21, item 1).

Every list of groups elsewhere derives from :data:`GROUPS`: the command line's help
(:mod:`searchlab.cli.helptext`), Hydra's ConfigStore (:mod:`searchlab.cli.config`), the
registry's kinds and entry-point groups (:mod:`searchlab.registry`), the re-composition of a
stored config (:mod:`searchlab.recompose`), the NaN check (:mod:`searchlab.run.checks`) and
what a resume may change (:mod:`searchlab.run.prepare`). It lives in the core layer so that
all of them can import it.

:data:`MOVED` maps module paths of earlier releases to today's, so a ``results.db`` whose
stored config names ``searchlab.run.execution.SerialExecutor`` stays resumable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"  # ships inside the package (package data)


@dataclass(frozen=True)
class Group:
    """One config group: ``NAME=CHOICE`` on the command line, ``NAME.key=value`` for its options."""

    name: str
    registered: bool  # its choices are classes found through searchlab.registry (built from records: checked)
    entry_points: str | None = None  # the entry-point group plugins add choices through
    resumable: bool = False  # a resume may change it (how to run, not what is searched)


GROUPS: tuple[Group, ...] = (
    Group("problem", registered=True, entry_points="searchlab.problems"),
    Group("searcher", registered=True, entry_points="searchlab.searchers"),
    Group("executor", registered=True, resumable=True),
    Group("budget", registered=False, resumable=True),
)
NAMES = tuple(g.name for g in GROUPS)
REGISTERED = tuple(g.name for g in GROUPS if g.registered)  # the registry's kinds
ENTRY_POINTS = {g.name: g.entry_points for g in GROUPS if g.entry_points}
# Top-level options a resume may change as well: how the run is shown, cached, confirmed and plotted.
RESUMABLE_OPTIONS = ("progress", "cache", "confirm", "plot", "live")
RESUMABLE = (*(g.name for g in GROUPS if g.resumable), *RESUMABLE_OPTIONS)

# The one alias table (issue 21): old module path -> new. A ``_target_`` stored by an earlier release
# is read through it, so its results.db stays readable and resumable; only registered classes are built.
MOVED = {
    "searchlab.execution": "searchlab.run.execution",
    "searchlab.tables": "searchlab.adapters.table",
    "searchlab.adapters.meta": "searchlab.tuning",
}


def current_target(target: str) -> str:
    """``target`` with a module path of an earlier release replaced by today's."""
    for old, new in MOVED.items():
        if target == old or target.startswith(old + "."):
            return new + target[len(old):]
    return target
