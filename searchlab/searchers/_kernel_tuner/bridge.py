"""One run of a Kernel Tuner strategy in a background thread, driven by searchlab.

A Kernel Tuner strategy is a loop that calls ``strategy.tune(searchspace, runner,
tuning_options)`` and waits on the runner for each result; searchlab's searchers are asked and
told. As :mod:`searchlab.searchers._sequential.dual_annealing` does with SciPy, the loop runs
in a daemon thread whose runner (:class:`~searchlab.searchers._kernel_tuner.runner.BridgeRunner`)
blocks until the searcher has the results; only one of the two threads runs at any time.

``tuning_options`` are those ``interface.tune_kernel`` builds for a simulation run with one
objective, ``time``, minimised; ``strategy_options`` are the searcher's options plus
``max_fevals`` (what is left of the run's budget, as Kernel Tuner passes its evaluation budget;
not a user option). The global random states are seeded with the run's seed and kept apart
from searchlab's (:mod:`.seeding`).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

from searchlab.core.records import Config
from searchlab.searchers._kernel_tuner.runner import BridgeRunner, Channel
from searchlab.searchers._kernel_tuner.seeding import GlobalRandom, seed_latin_hypercube
from searchlab.searchers._support.neighbours import Grid

THREAD_NAME = "searchlab-kernel-tuner"
JOIN_S = 30.0  # a stopped strategy unwinds in milliseconds; bounded so a close never hangs
# Kernel Tuner's own warnings (overflow in annealing's acceptance on failed configurations, fewer
# samples than asked on small spaces) say nothing about the searchlab run; a filter by module,
# because warnings.catch_warnings is not thread-safe.
warnings.filterwarnings("ignore", module=r"kernel_tuner\.")


def tuning_options(name: str, searchspace: Any, options: Mapping[str, Any], max_fevals: int, seed: int) -> Any:
    """Kernel Tuner's ``tuning_options`` for ``strategy.tune``, as ``tune_kernel`` fills them."""
    from kernel_tuner.interface import Options
    from kernel_tuner.util import TuningBudget

    return Options(
        tune_params=searchspace.tune_params, restrictions=[], restrictions_unmodified=[],
        strategy=name, strategy_options=Options({**options, "max_fevals": max_fevals}), max_fevals=max_fevals,
        budget=TuningBudget(None, max_fevals), objective=["time"], objective_higher_is_better=[False],
        verbose=False, quiet=True, metrics=None, cache={}, cachefile=None, simulation_mode=True, seed=seed,
        simulated_time=0)


class Bridge(threading.Thread):
    """Runs one ``tune`` call of the strategy ``name`` (``kernel_tuner.strategies.<name>``)."""

    def __init__(self, name: str, searchspace: Any, grid: Grid, known: Mapping[Config, float],
                 options: Mapping[str, Any], max_fevals: int, seed: int) -> None:
        super().__init__(daemon=True, name=THREAD_NAME)
        from searchlab.searchers._kernel_tuner.costfunc import strategy_module

        self.strategy = strategy_module(name)  # basinhopping: a copy with a cheaper, equal cost function
        seed_latin_hypercube(THREAD_NAME)
        self.searchspace, self.seed = searchspace, seed
        self.options = tuning_options(name, searchspace, options, max_fevals, seed)
        self.channel = Channel()
        self.runner = BridgeRunner(grid, known, self.channel, GlobalRandom())

    def run(self) -> None:
        from kernel_tuner.util import StopCriterionReached

        self.runner.outside = GlobalRandom.seeded(self.seed).swap()
        try:
            self.strategy.tune(self.searchspace, self.runner, self.options)
        except StopCriterionReached:  # a few strategies let it escape from their first evaluation
            pass
        except BaseException as error:
            self.runner.outside.swap()
            self.channel.to_searcher.put(("error", error))
            return
        self.runner.outside.swap()
        self.channel.to_searcher.put(("end", None))

    # -- searchlab's side -----------------------------------------------------------------------
    def next_batch(self) -> list[Config] | None:
        """Block until the strategy wants configurations measured (None: its run ended)."""
        kind, payload = self.channel.to_searcher.get()
        if kind == "error":
            raise payload
        return payload if kind == "ask" else None

    def resume(self) -> None:
        """The batch's results are in ``known``: let the strategy read them."""
        self.channel.to_thread.put(True)

    def stop(self) -> None:
        """Unblock the strategy (its runner raises ``StopCriterionReached``) and wait for the thread."""
        if self.is_alive():
            self.channel.to_thread.put(False)
            self.join(JOIN_S)
