"""The runner Kernel Tuner's strategy calls: it hands configurations to searchlab and waits.

A Kernel Tuner strategy evaluates configurations through ``runner.run(parameter_space,
tuning_options)`` (``strategies/common.py``, ``CostFunc._run_configs``) and reads back one
result dict per configuration. :class:`BridgeRunner` takes the place of Kernel Tuner's
``SimulationRunner`` (``runners/simulation.py``) and answers as it does:

- a configuration already measured in this searchlab run (told, replayed on resume, or met in an
  earlier restart) is answered from those results and is not counted: Kernel Tuner serves
  repeats from its cache too, and searchlab never measures a configuration twice;
- a configuration outside the known constraints gets ``__error__: InvalidConfig`` unmeasured
  (constraint-aware strategies never ask for one: the search space holds only feasible members);
- the others, in the order asked, are handed to the searcher's ask side as one batch (the
  strategy's own batch: a population, or a single point) while this thread blocks; once
  searchlab has told all their results, each is returned as ``{"time": loss}`` (loss: smaller
  is better whatever the problem's direction; Kernel Tuner minimises ``time``) or, for a failed
  measurement, ``__error__: RuntimeFailedConfig`` (Kernel Tuner's cost ``sys.float_info.max``);
- each configuration handed over adds one to ``tuning_options.budget``, whose ``max_fevals`` is
  what is left of the run's budget: when it is spent the rest of the batch is answered ``None``
  and Kernel Tuner raises ``StopCriterionReached`` itself, as in its simulation mode.

Stopping: when searchlab stops (budget spent, searcher closed or discarded) the blocked call
raises ``StopCriterionReached``, which every strategy catches, and so does any later call.
A strategy that only asks for known configurations for :data:`IDLE_LOOKUPS` look-ups in a row is
stopped the same way (it has converged; the searcher restarts it), so the searcher's thread
never waits on a loop that no longer measures anything.

Random state: the runner swaps the global states at each hand-over (:mod:`.seeding`).
"""

from __future__ import annotations

import math
import queue
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from searchlab.core.records import Config
from searchlab.searchers._kernel_tuner.seeding import GlobalRandom
from searchlab.searchers._kernel_tuner.space import to_config
from searchlab.searchers._support.neighbours import Grid

IDLE_LOOKUPS = 5000  # look-ups of known configurations in a row before a run counts as converged


class Stopped(Exception):
    """Raised by searchlab's side when a blocked runner must give up (turned into Kernel Tuner's
    ``StopCriterionReached`` inside the strategy's thread)."""


class Channel:
    """The two queues between the strategy's thread and the searcher."""

    def __init__(self) -> None:
        self.to_searcher: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.to_thread: queue.SimpleQueue[bool] = queue.SimpleQueue()  # True: results are in; False: stop


class BridgeRunner:
    """Kernel Tuner's runner interface (``runners/runner.py``), answered by searchlab."""

    simulation_mode = True

    def __init__(self, grid: Grid, known: Mapping[Config, float], channel: Channel, outside: GlobalRandom) -> None:
        self.grid, self.known, self.channel = grid, known, channel
        self.outside = outside  # searchlab's random states while the strategy runs
        self.names = grid.names
        self.stopped = False
        self.idle = 0
        self.handed = 0  # configurations handed to searchlab by this run
        # parameter tuple -> (its configuration, feasible): strategies look the same points up again and
        # again (basinhopping with Powell: ~40,000 look-ups for 220 configurations), so each is converted once
        self._parsed: dict[tuple[Any, ...], tuple[Config, bool]] = {}

    # -- Kernel Tuner's Runner interface ---------------------------------------------------
    def add_strategy_time(self, seconds: float) -> None:
        pass

    def available_parallelism(self) -> int:
        return 1

    def shutdown(self) -> None:
        pass

    def get_device_info(self) -> Any:
        return None

    def get_environment(self, tuning_options: Any) -> dict[str, Any]:
        return {"device_name": "searchlab"}

    def run(self, parameter_space: Iterable[Sequence[Any]], tuning_options: Any) -> list[dict[str, Any] | None]:
        from kernel_tuner.util import StopCriterionReached

        if self.stopped:
            raise StopCriterionReached("searchlab stopped the run")
        elements = [tuple(e) for e in parameter_space]
        parsed = [self._parse(e) for e in elements]
        fresh = list(dict.fromkeys(c for c, ok in parsed if ok and c not in self.known))
        budget = tuning_options.budget
        room = len(fresh) if budget.max_fevals is None else max(budget.max_fevals - budget.num_fevals, 0)
        handed = fresh[:room]
        if handed:
            self.idle = 0
            self._hand_over(handed)
            budget.add_evaluations(len(handed))
        else:
            self.idle += len(elements)
            if self.idle > IDLE_LOOKUPS:
                raise StopCriterionReached(f"{IDLE_LOOKUPS} look-ups without a new configuration")
        return [self._result(c, e, ok) for (c, ok), e in zip(parsed, elements)]

    def _parse(self, element: tuple[Any, ...]) -> tuple[Config, bool]:
        try:
            hit = self._parsed.get(element)
        except TypeError:  # an unhashable value: convert it every time
            config = to_config(self.names, element)
            return config, self.grid.feasible(config)
        if hit is None:
            config = to_config(self.names, element)
            hit = self._parsed[element] = (config, self.grid.feasible(config))
        return hit

    # -- the hand-over ---------------------------------------------------------------------------
    def _hand_over(self, configs: list[Config]) -> None:
        from kernel_tuner.util import StopCriterionReached

        mine = self.outside.swap()  # searchlab's states back while it runs
        self.channel.to_searcher.put(("ask", configs))
        go_on = self.channel.to_thread.get()
        self.outside = mine.swap()
        if not go_on:
            self.stopped = True
            raise StopCriterionReached("searchlab stopped the run")
        self.handed += len(configs)

    def _result(self, config: Config, element: tuple[Any, ...], feasible: bool) -> dict[str, Any] | None:
        from kernel_tuner.util import InvalidConfig, RuntimeFailedConfig

        result: dict[str, Any] = dict(zip(self.names, element))
        if not feasible:
            result["__error__"] = InvalidConfig()
            return result
        loss = self.known.get(config)
        if loss is None:  # not handed over: the budget is spent
            return None
        if math.isfinite(loss):
            result["time"] = loss
        else:
            result["__error__"] = RuntimeFailedConfig()
        result.update(compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
        return result
