"""Which cells of a study are not held out: the searcher's shipped defaults were chosen on that very table.

Each searcher declares the tables (by content digest) and problem instances its defaults were chosen on, once,
beside its defaults (``Searcher.defaults_chosen_on``, searchlab.core.provenance). A study reads it from the
registered class each run names (a record is data: nothing unregistered is imported) and marks every
(problem, searcher) row whose table is one of them, so a report never compares ``auto`` on the tables that chose
its defaults without saying so (issue 45).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from searchlab.core.provenance import Ref, file_digest, matches


def declared(searcher_cfg: Any) -> tuple[Ref, ...]:
    """The refs a run's searcher config declares (() for an unregistered or undeclared searcher)."""
    from searchlab.recompose import is_registered
    from searchlab.searchers import searcher_class

    if not isinstance(searcher_cfg, Mapping) or not is_registered("searcher", searcher_cfg.get("_target_")):
        return ()
    try:
        cls = searcher_class(searcher_cfg, "study")
    except Exception:  # an entry point that no longer loads: nothing declared
        return ()
    return tuple(cls.defaults_chosen_on)


def chosen_on(config: Mapping[str, Any]) -> str:
    """The name of the table / instance of a run (its stored config) that chose its searcher's defaults, or ''."""
    refs = declared(config.get("searcher"))
    problem = config.get("problem")
    if not refs or not isinstance(problem, Mapping):
        return ""
    path = problem.get("path")
    ref = matches(refs, problem, file_digest(str(path)) if isinstance(path, str) and path else None)
    return "" if ref is None else ref.name


def row_mark(configs: Sequence[Mapping[str, Any]]) -> str:
    """A (problem, searcher) row's mark: the tables that chose the defaults, among its runs' ('' for none)."""
    names = sorted({n for n in (chosen_on(c) for c in configs) if n})
    return "; ".join(names)


def declarations(searchers: Mapping[str, Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per study searcher label: what its shipped defaults were chosen on (the report's provenance table)."""
    out = []
    for label, cfg in searchers.items():
        refs = declared(cfg)
        out.append({"searcher": label, "defaults chosen on": "; ".join(r.name for r in refs) if refs else
                    "nothing (fixed a priori, or the original authors' defaults)"})
    return out


def provenance_rows(runs: Sequence[Any], rows: Sequence[Mapping[str, Any]], pooled: str) -> list[dict[str, str]]:
    """What each searcher's shipped defaults were chosen on, and which of the study's problems that covers
    (``pooled``: the label of the all-problems rows, left out)."""
    first = {r.searcher: r.config.get("searcher") or {} for r in reversed(runs)}
    out = declarations({label: first[label] for label in sorted(first)})
    for row in out:
        marked = sorted({str(r["problem"]) for r in rows
                         if r["searcher"] == row["searcher"] and r.get("defaults_chosen_on") and r["problem"] != pooled})
        row["not held out here"] = ", ".join(marked) if marked else "-"
    return out
