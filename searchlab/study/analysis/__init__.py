"""A study's analysis: read recorded runs, score them, and write the report -- never run anything.

Execution (:mod:`searchlab.study.execution`) makes the records; this half only reads them, so
:mod:`searchlab.tuning` (which scores a searcher's settings with the same metrics) may import it
without reaching the grid, Ray or any problem. ``.importlinter`` in pyproject.toml forbids the
way back: nothing here, and nothing in tuning, imports ``searchlab.study.execution``.

- :mod:`.metrics`, :mod:`.methodology`, :mod:`.stats`: the definitions (best-so-far, the
  autotuning-methodology score P, intervals and paired tests);
- :mod:`.collect`, :mod:`.summary`: reading records -- a run directory, a study, a reproduce directory --
  through the one reader (:func:`searchlab.core.store.read_runs`);
- :mod:`.aggregate`, :mod:`.compare`, :mod:`.headline`, :mod:`.tuned`, :mod:`.provenance`,
  :mod:`.nodes`: a study's numbers;
- :mod:`.report`, :mod:`.report_pairs`, :mod:`.plots`: the report and its figures.
"""
