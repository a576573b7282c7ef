"""BLAS on one thread around ``auto``'s model steps, cheaply.

Why: the model's matrices are at most a few hundred rows, where BLAS threads only add synchronisation, and
OpenBLAS's spinning threads slowed a 220 x 220 Cholesky factorisation from 0.4 ms to 260 ms when other processes
shared the cores (docs/searchers.md, "auto"). The limit is set and restored around every ask and tell, so it must
cost little: ``threadpoolctl``'s ``ThreadpoolController.limit`` took 0.1 ms per entry (issue 53's profile).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any


@functools.cache
def _blas_libraries() -> tuple[Any, ...]:
    """The BLAS libraries loaded in this process (``threadpoolctl``), looked up once: building a controller scans
    the loaded libraries (2.5 ms). SciPy's LAPACK is its own OpenBLAS, loaded with ``scipy.linalg``: imported first,
    or the controller does not see it and the likelihood's Cholesky factorisations ran on spinning threads (34 ms
    each for n = 128 on a busy machine, 65 % of ``auto``'s time in Kernel Tuner's harness; issue 53's profile)."""
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the controller looks)
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside, as it was outside afterwards. Each library's thread count is read and set
    directly: ``ThreadpoolController.limit`` checks its arguments and every library's state on each entry, 0.1 ms
    per call, a seventh of a 250-evaluation run's thinking time (issue 53's profile)."""
    libraries = _blas_libraries()
    before = [lib.num_threads for lib in libraries]
    if all(n == 1 for n in before):
        yield
        return
    for lib in libraries:
        lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, n in zip(libraries, before):
            lib.set_num_threads(n)
