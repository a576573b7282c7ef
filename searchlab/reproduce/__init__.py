"""``searchlab reproduce EXPERIMENT.json``: run an ``autotuning_methodology`` experiment file as the field runs it.

Willemsen et al., "A methodology for comparing optimization algorithms for auto-tuning" (FGCS 2024) publish
comparisons as schema-1.2.0 experiment files; their reference runner is ``autotuning_experiment``
(``autotuning-methodology`` 1.1.0). This package runs the same file unchanged, faster, and resumably:

- :mod:`.experiment` reads and checks the file (the package's own JSON schema) and expands it into groups;
- :mod:`.kt` runs one repeat with Kernel Tuner's own strategy code in its simulation mode, the space loaded
  once per worker process (the reference rebuilds everything per repeat, which is where its time goes);
- :mod:`.execute` spreads repeats over Ray and stores each finished one atomically (:mod:`.store`);
- :mod:`.scoring` computes the performance score P with the package's own functions, on both axes;
- :mod:`.outputs` writes figures, tables, ``report.html`` and ``scores.json``.

docs/study.md says how to reproduce a published comparison and how to add a searcher to one.
"""
