"""A study's report from its runs, and where a study's outputs go by default.

Both halves call it: the execution after its grid (passing the tables it parsed, ``tables=``), and the
analysis-only command (``python -m searchlab.study RUN_DIR...``), which so imports nothing of the execution
(issue 52: the report lived in the grid's module, and aggregating a run directory imported the grid).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from searchlab.study.analysis.aggregate import TableLookup


def default_study_dir(name: str) -> Path:
    return Path("outputs") / "study" / time.strftime("%Y-%m-%d") / f"{time.strftime('%H-%M-%S')}_{name}"


def report(runs: list[Any], notes: list[str], out_dir: Path, meta: dict[str, Any], reference: str,
           tuned: dict[str, str] | None = None, tables: TableLookup | None = None) -> dict[str, Any]:
    """Aggregate and write the report; ``tuned``: tuned label -> default label (a default-versus-tuned table);
    ``tables``: the tables a process parsed already (searchlab.study.analysis.aggregate.aggregate)."""
    from searchlab.study.analysis.aggregate import aggregate
    from searchlab.study.analysis.report import write_report
    from searchlab.study.analysis.tuned import tuned_table

    started = time.time()
    data = aggregate(runs, notes, reference, tables=tables)
    data.tuned = tuned_table(data, tuned or {})
    meta = dict(meta, runs=len(runs), problems=len({r.problem for r in runs}),
                searchers=len({r.searcher for r in runs}), reference=reference,
                created=time.strftime("%Y-%m-%d %H:%M:%S"))
    paths = write_report(data, out_dir, meta)
    meta["report wall time (s)"] = round(time.time() - started, 2)
    return {"paths": paths, "meta": meta, "rows": data.rows, "notes": data.notes}
