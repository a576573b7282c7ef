"""Recorded measurement tables, replayed as problems (``problem=table``; DESIGN.md, "Replay").

The table itself (a record, its file format, replay noise) is core data
(:mod:`searchlab.interchange.table`, re-exported here); :mod:`.problem` replays one (a look-up charged
the recorded time) and :func:`load_table` (:func:`searchlab.interchange.open_table`) also reads a finished run's directory as a
table: this package registers :func:`table_from_run` as the run reader on import. The Kernel Tuner cache,
knob recording and T4 replays (searchlab.adapters.knobs, searchlab.adapters.user) extend
:class:`TableProblem`.
"""

from searchlab.adapters.table._from_run import table_from_run
from searchlab.adapters.table.problem import TableProblem, draw_sample, load_table
from searchlab.core.measure import samples_are_objective
from searchlab.interchange._open import set_run_reader
from searchlab.interchange.table import (
    FORMAT,
    Table,
    TableKnobSpace,
    knobspace_from_dict,
    knobspace_to_dict,
    read_table_file,
    save_table,
)

SCHEMAS: dict[str, type] = {"table": TableProblem}
set_run_reader(table_from_run)  # searchlab.interchange.open_table reads recorded runs through it

__all__ = [
    "FORMAT",
    "SCHEMAS",
    "Table",
    "TableKnobSpace",
    "TableProblem",
    "draw_sample",
    "knobspace_from_dict",
    "knobspace_to_dict",
    "load_table",
    "read_table_file",
    "samples_are_objective",
    "save_table",
]
