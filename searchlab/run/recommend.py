"""``summary.json["recommended"]``: the one configuration a run hands over (issue 46 item 2).

``best`` is the search's best *single measurement* (kept under that name for old readers, and as
``best_measured``); it is often a lucky draw (the winner's curse, searchlab.run.confirm) and is not
what a run recommends. ``recommended`` is: the configuration written (a Futhark ``.tuning`` file),
or the confirm phase's best when it measurably beats the default, else the default itself, with
the confirmed speed-up and its anytime 95 % interval where one was measured. A script that reads
``recommended["config"]`` gets what the verdict says, and for Futhark exactly what the written
``.tuning`` holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.core.speedup import recommended as beats_default


def _entry(config: Mapping[str, Any], is_default: bool, why: str, c: Mapping[str, Any] | None = None,
           **extra: Any) -> dict[str, Any]:
    """One ``recommended`` entry; ``c``: the paired comparison with the default that decided it."""
    out: dict[str, Any] = {"config": dict(config), "is_default": is_default, "why": why,
                           "speedup": None, "ci95": None, "pairs": None, "basis": None}
    if c is not None:
        out.update(speedup=c.get("speedup"), ci95=list(c.get("ci95") or []) or None, pairs=c.get("pairs"),
                   basis=c.get("basis") or "tuning")
    return {**out, **extra}


def _written(report: Mapping[str, Any]) -> dict[str, Any]:
    """A problem that writes its recommendation to a file (Futhark): the file decides."""
    c = report.get("versus_default")
    if report.get("recommended"):
        path = str(Path(str(report["tuning_file"])).resolve())
        return _entry(report.get("tuned") or {}, False, "measurably faster than the default", c,
                      tuning_file=path, command=report.get("use_command"))
    candidate = report.get("candidate_tuning_file")
    return _entry(report.get("untuned") or {}, True, str(report.get("recommendation") or "kept the default"),
                  tuning_file=None, best_candidate=dict(report.get("tuned") or {}), best_candidate_versus_default=c,
                  candidate_tuning_file=str(Path(str(candidate)).resolve()) if candidate else None,
                  check_command=report.get("check_command"))


def recommended_entry(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """What ``summary`` recommends (None: nothing was measured successfully)."""
    report, confirm = summary.get("report") or {}, summary.get("confirm") or {}
    best = summary.get("best")
    if "recommended" in report and ("tuned" in report or "untuned" in report):
        return _written(report)
    if "tuned_is_default" in report:  # problem=searcher_settings: settings against the defaults
        if report["tuned_is_default"] or best is None:
            return _entry(report.get("default_settings") or {}, True, "the search's best did not score above the "
                          "defaults on the training tables")
        return _entry(best["config"], False, "scored above the defaults on the training tables")
    chosen, c = confirm.get("best"), confirm.get("versus_default")
    default = (confirm.get("default") or {}).get("config")
    if default is None and summary.get("default_config") is not None:  # interrupted first, or the phase was off
        why = ("interrupted before the comparison with the default" if summary.get("stop_reason") == "interrupted"
               else "not compared with the default (the confirm phase was off)")
        return _entry(summary["default_config"], True, why)
    if default is not None:
        if chosen is not None and beats_default(c):
            return _entry(chosen["config"], False, "measurably faster than the default", c,
                          objective=chosen.get("median"))
        why = {"slower": "the best candidate is measurably slower than the default",
               "equivalent": "no difference from the default",
               "undecided": "undecided: the interval still holds 1 at the cap"}.get(str(confirm.get("decision")),
                                                                                   "nothing measurably faster")
        return _entry(default, True, why, objective=(confirm.get("default") or {}).get("median"),
                      best_candidate_versus_default=c)
    if chosen is not None:
        return _entry(chosen["config"], False, "the confirmed best; the problem has no default to compare with",
                      objective=chosen.get("median"))
    if best is not None:
        return _entry(best["config"], False, "the search's best single measurement (no confirm phase, no default)",
                      objective=best.get("objective"))
    return None
