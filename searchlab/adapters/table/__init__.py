"""Recorded measurement tables, replayed as problems (``problem=table``; DESIGN.md, "Replay").

:mod:`._file` reads and writes tables, :mod:`.problem` replays one (a look-up charged the
recorded time, optionally drawing recorded samples as replay noise). The Kernel Tuner cache,
knob recording and T4 replays (searchlab.adapters.knobs, searchlab.adapters.user) extend
:class:`TableProblem`.
"""

from searchlab.adapters.table._file import FORMAT, Table, knobspace_from_dict, knobspace_to_dict, load_table, save_table
from searchlab.adapters.table.problem import TableKnobSpace, TableProblem, draw_sample, samples_are_objective

SCHEMAS: dict[str, type] = {"table": TableProblem}

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
    "samples_are_objective",
    "save_table",
]
