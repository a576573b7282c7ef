"""Dual annealing (generalized simulated annealing + local search) as Kernel Tuner runs it.

Dual annealing (Xiang, Sun, Fan & Gong, *Generalized simulated annealing algorithm and
its application to the Thomson model*, Phys. Lett. A 233, 1997; Tsallis & Stariolo 1996)
was among the best strategies in Schoonhoven, van Werkhoven & Batenburg, *Benchmarking
optimization algorithms for auto-tuning GPU kernels*, IEEE TEVC 2022. Kernel Tuner
(``strategies/dual_annealing.py`` and ``strategies/common.py``) runs
:func:`scipy.optimize.dual_annealing` itself on a scaled continuous box and snaps each point
to a configuration; so do we, rather than re-deriving the visiting distribution:

- knob ``d`` with ``n_d`` values spans ``[0, eps * n_d]`` with ``eps = min_d 1 / n_d``; a
  point maps to value index ``floor(x_d / eps)`` clipped to the range (Kernel Tuner's
  ``unscale_and_snap_to_nearest``); the start ``x0`` is a random feasible configuration;
- local search ``method`` (default COBYLA, Kernel Tuner's default) with SciPy's options;
  ``maxfun`` cost-function calls per run (default: the number of feasible members, as
  Kernel Tuner's ``max_fevals = searchspace.size``); visiting, acceptance and temperature
  parameters are SciPy's defaults;
- failed and known-infeasible configurations cost ``PENALTY`` (Kernel Tuner returns an
  error value, ``sys.float_info.max``; a finite 1e20 keeps COBYLA's arithmetic finite);
  configurations already measured are answered from the results, not re-proposed.

SciPy's routine calls the cost function and waits, so it runs in a helper thread that
blocks in the cost function until the searcher is told the result; only one of the two
threads runs at a time, so runs are deterministic. When a SciPy run ends (``maxiter`` or
``maxfun``), a new one starts from a new random point with a new seed. When the searcher
is discarded, the coroutine is closed and the thread is told to stop.

Several evaluations in flight: none — dual annealing is sequential (each visit is accepted
or rejected before the next is drawn), so ``ask`` returns nothing while one is pending.
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._sequential.base import Algorithm, SequentialSearcher
from searchlab.searchers._support.neighbours import Grid
from searchlab.searchers._tunable import Annotated, Tunable

PENALTY = 1e20
METHODS = ("COBYLA", "L-BFGS-B", "SLSQP", "CG", "Powell", "Nelder-Mead", "BFGS", "trust-constr")


class _Stop(Exception):
    """Raised inside the cost function to unwind SciPy when the searcher goes away."""


class _AnnealingThread(threading.Thread):
    """Runs ``scipy.optimize.dual_annealing``; its cost function hands points to the searcher."""

    def __init__(self, grid: Grid, known: Mapping[Config, float], x0: np.ndarray, seed: int,
                 options: dict[str, Any]) -> None:
        super().__init__(daemon=True, name="searchlab-dual-annealing")
        self.grid, self.known, self.x0, self.seed, self.options = grid, known, x0, seed, options
        self.eps = min(1.0 / n for n in grid.sizes)
        self.to_searcher: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.to_thread: queue.SimpleQueue[float | None] = queue.SimpleQueue()

    def snap(self, x: np.ndarray) -> Config:
        index = [min(max(math.floor(v / self.eps), 0), n - 1) if math.isfinite(v) else 0
                 for v, n in zip(x, self.grid.sizes)]
        return self.grid.decode(index)

    def cost(self, x: np.ndarray) -> float:
        config = self.snap(x)
        if not self.grid.feasible(config):
            return PENALTY
        loss = self.known.get(config)
        if loss is None:
            self.to_searcher.put(("ask", config))
            answer = self.to_thread.get()
            if answer is None:
                raise _Stop
            loss = answer
        return loss if math.isfinite(loss) else PENALTY

    def run(self) -> None:
        from scipy.optimize import dual_annealing

        bounds = [(0.0, self.eps * n) for n in self.grid.sizes]
        try:
            dual_annealing(self.cost, bounds, x0=self.x0, rng=np.random.default_rng(self.seed),
                           minimizer_kwargs={"method": self.options["method"]}, maxiter=self.options["maxiter"],
                           maxfun=self.options["maxfun"], initial_temp=self.options["initial_temp"],
                           visit=self.options["visit"], accept=self.options["accept"])
        except _Stop:
            return
        except Exception as error:  # surface SciPy's error in the searcher's thread
            self.to_searcher.put(("error", error))
        self.to_searcher.put(("end", None))

    def next_point(self) -> Config | None:
        """Block until SciPy wants a configuration measured (None: the run ended)."""
        kind, payload = self.to_searcher.get()
        if kind == "error":
            raise payload
        return payload if kind == "ask" else None


class DualAnnealingSearcher(SequentialSearcher):
    name = "dual_annealing"

    def __init__(self, space: Space, *, method: Annotated[str, Tunable(choices=METHODS[:6])] = "COBYLA",
                 maxiter: int = 1000, maxfun: int | None = None,
                 initial_temp: Annotated[float, Tunable(10.0, 5e4, log=True)] = 5230.0,
                 visit: Annotated[float, Tunable(1.5, 2.95)] = 2.62,  # 3.0 divides by zero in SciPy (3 - visit)
                 accept: Annotated[float, Tunable(-1000.0, -5.0)] = -5.0, **kwargs: object) -> None:
        if method not in METHODS:
            raise ConfigError(f"searcher.method={method!r}: must be one of {list(METHODS)}")
        if maxiter < 1 or (maxfun is not None and maxfun < 1):
            raise ConfigError(f"searcher.maxiter={maxiter}, maxfun={maxfun}: must be >= 1")
        if not 1 < visit <= 3 or not -1e4 < accept <= -5 or not 0.01 < initial_temp <= 5e4:
            raise ConfigError(f"searcher.visit={visit}, accept={accept}, initial_temp={initial_temp}: SciPy needs "
                              "1 < visit <= 3, -1e4 < accept <= -5, 0.01 < initial_temp <= 5e4")
        super().__init__(space, **kwargs)
        self.options: dict[str, Any] = {"method": method, "maxiter": maxiter, "initial_temp": initial_temp,
                                        "visit": visit, "accept": accept,
                                        "maxfun": maxfun or self.grid.n_feasible(limit=100_000) or self.space.size()}

    def _x0(self, config: Config) -> np.ndarray:
        eps = min(1.0 / n for n in self.grid.sizes)
        return np.array([(i + 0.5) * eps for i in self.grid.encode(config)])

    def _run(self) -> Algorithm:
        seed = int(self.rng.integers(2**63))
        thread = _AnnealingThread(self.grid, self._losses, self._x0(self.start_point()), seed, self.options)
        thread.start()
        try:
            while (config := thread.next_point()) is not None:
                (loss,) = yield [config]
                thread.to_thread.put(loss)
        finally:
            if thread.is_alive():
                thread.to_thread.put(None)


# method: SciPy local minimiser (Kernel Tuner's supported_methods)
# maxiter: SciPy's global iterations per run
# maxfun: cost-function calls per run (None: number of feasible members)
DualAnnealingConfig = searcher_config(DualAnnealingSearcher)
