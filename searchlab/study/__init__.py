"""Comparative studies: aggregate recorded runs, replay tables at scale, report (DESIGN.md, "Study").

``python -m searchlab.study RUN_DIR...`` aggregates any set of run directories;
``python -m searchlab.study study=NAME`` runs the grid of ``conf/study/NAME.yaml`` first
(replays as parallel Ray tasks, or live runs one after another) and then aggregates it.
Two halves (issue 45, item 4): :mod:`.analysis` reads, scores and reports recorded runs and
never runs anything, so :mod:`searchlab.tuning` may import it; :mod:`.execution` composes and
runs the grid. The metrics are defined in :mod:`searchlab.study.analysis.metrics`.

Importing this package is cheap (no pandas, matplotlib or Ray). :func:`table_from_run`
(``searchlab.adapters.table._from_run``) is also what ``searchlab.adapters.table.problem`` uses to
open a run directory as a table; it lives there, so the table problem does not depend on the study
package (the package's lazy ``__getattr__`` reaches the whole study machinery).
"""

from searchlab.adapters.table._from_run import table_from_run

__all__ = ["collect_runs", "run_study", "table_from_run", "write_report"]


def __getattr__(name: str) -> object:  # the heavy parts load on first use
    if name == "collect_runs":
        from searchlab.study.analysis.collect import collect_runs

        return collect_runs
    if name == "write_report":
        from searchlab.study.analysis.report import write_report

        return write_report
    if name == "run_study":
        from searchlab.study.execution.grid import run_study

        return run_study
    raise AttributeError(name)
