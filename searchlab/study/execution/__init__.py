"""A study's execution: compose the grid, run or replay its cells, and record them.

:mod:`.config` reads a study file, :mod:`.grid` composes and runs it (:mod:`.cells`: one cell;
:mod:`.replay`, :mod:`.batched`, :mod:`.batch`, :mod:`.tasks`: table replays as Ray tasks;
:mod:`.split`: tuning a searcher's settings on a fold's training tables first), and
:mod:`.publish` writes run directories' records; replays go into the study's records file through the one
batch writer (:class:`searchlab.core.store.RecordWriter`). The report is the analysis half's
(:mod:`searchlab.study.analysis`), which this half calls and which never calls back.
"""
