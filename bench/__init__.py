"""searchlab's benchmarks: one harness (:mod:`bench.harness`), one command (``python -m bench``), one schema."""
