"""What the Futhark benchmarks and tools use besides the problems (a deliberate public door, names only).

``.tuning`` files as ``futhark bench --tuning`` reads them (:func:`read_tuning`, :func:`write_tuning`), a
``--spec-file`` naming a run's exact data files (:func:`write_spec`), counting the evaluations that ran a
benchmark (:func:`benchmark_runs`), and the fixed-run protocols of paper 003's validation tables
(:func:`fixed_runs`, :data:`FIXED_10`). docs/futhark.md's benchmarks (bench/futhark*.py, bench/thresholds.py).
"""

from searchlab.adapters.futhark._program import FIXED_10, fixed_runs
from searchlab.adapters.futhark._report import benchmark_runs, read_tuning, write_spec, write_tuning

__all__ = ["FIXED_10", "benchmark_runs", "fixed_runs", "read_tuning", "write_spec", "write_tuning"]
