"""Seeding Kernel Tuner's strategies, which draw from process-global random states.

Kernel Tuner 1.5 passes ``tuning_options.seed`` only to pymoo; its strategies draw from the
global ``random`` and ``numpy.random`` states, SciPy's ``dual_annealing`` (called without a
seed) from the global numpy state too, and ``Searchspace.get_LHS_sample`` (diff_evo's first
population) from ``scipy.stats.qmc.LatinHypercube`` without a seed, i.e. fresh OS entropy.

- :class:`GlobalRandom`: the bridge seeds the global states with each strategy run's seed and
  swaps them in only while the strategy's thread runs (only one of the two threads runs at a
  time), so the strategy's draws depend only on its seed and searchlab's thread, or another
  bridged strategy in the same process, keeps its own states.
- :func:`seed_latin_hypercube`: ``LatinHypercube`` made without a seed *in a bridge thread* gets
  one drawn from the (seeded) global numpy state; elsewhere it is SciPy's, unchanged.

Not covered: a strategy using another unseeded source (none known in Kernel Tuner 1.5's
strategies wrapped here); tests/searchers/test_kernel_tuner_bridge.py checks each wrapped
strategy repeats its trajectory for a seed.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import numpy as np


class GlobalRandom:
    """The global ``random`` and ``numpy.random`` states, saved and put back."""

    def __init__(self) -> None:
        self.py: Any = random.getstate()
        self.np: Any = np.random.get_state()

    @staticmethod
    def seeded(seed: int) -> GlobalRandom:
        state = GlobalRandom.__new__(GlobalRandom)
        state.py, state.np = random.Random(seed).getstate(), np.random.RandomState(seed).get_state()
        return state

    def swap(self) -> GlobalRandom:
        """Install these states and return the ones they replace."""
        current = GlobalRandom()
        random.setstate(self.py)
        np.random.set_state(self.np)
        return current



_INSTALLED: list[str] = []  # the thread name it was installed for (once per process)


def seed_latin_hypercube(thread_name: str) -> None:
    """Give ``scipy.stats.qmc.LatinHypercube`` a seed from the global numpy state when it is made
    without one in a thread named ``thread_name`` (installed once per process: a subclass of
    SciPy's, so ``isinstance`` and subclassing elsewhere are unchanged)."""
    from scipy.stats import qmc

    if _INSTALLED:
        return
    _INSTALLED.append(thread_name)
    original = qmc.LatinHypercube

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if threading.current_thread().name == thread_name and kwargs.get("rng") is None \
                and kwargs.get("seed") is None:
            kwargs["rng"] = np.random.default_rng(np.random.randint(2**32, dtype=np.uint64))
        original.__init__(self, *args, **kwargs)

    seeded = type("LatinHypercube", (original,), {"__init__": __init__, "__module__": original.__module__})
    setattr(qmc, "LatinHypercube", seeded)  # noqa: B010 - a module attribute replaced on purpose
