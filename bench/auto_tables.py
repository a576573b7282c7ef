"""The four shared convolution tables as searchlab sees them inside Kernel Tuner's harness, and ``auto`` driven on them
by hand (``bench/auto_loto.py``, ``bench/auto_spaces.py``).

The space is :func:`searchlab.integrations.kernel_tuner.knob_space` of the table's parameters and recorded
configurations (failed ones included), exactly what ``Strategy("auto")`` gets from Kernel Tuner's ``Searchspace``
with ``bench/auto_kt.py``'s restriction; ``auto`` is deterministic for a seed and Kernel Tuner only looks the
configurations up, so a run here proposes what the same seed proposes in Kernel Tuner's harness (checked on
seed 0 of A100: the same curve), without Kernel Tuner's 0.1 s per run around it.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import time
from dataclasses import dataclass
from typing import Any

from bench.auto_kt import TABLE_DIR
from searchlab.core.records import FailureMode, Measurement, Result
from searchlab.core.spaces import KnobSpace
from searchlab.searchers import AutoSearcher

DEVICES = ("A100", "A4000", "MI250X", "W6600")


@dataclass(frozen=True)
class SharedTable:
    device: str
    names: tuple[str, ...]
    space: KnobSpace
    times: dict[tuple[Any, ...], float | None]  # recorded configuration -> time (ms), None when it failed
    optimum: float


@functools.cache
def shared_table(device: str) -> SharedTable:
    from searchlab.integrations.kernel_tuner import knob_space

    with gzip.open(TABLE_DIR / f"convolution_{device}.json.gz", "rt") as fh:
        cache = json.load(fh)
    names = tuple(cache["tune_params_keys"])
    times = {tuple(e[n] for n in names): (float(e["time"]) if isinstance(e.get("time"), (int, float)) else None)
             for e in cache["cache"].values()}
    space = knob_space(cache["tune_params"], list(times))
    return SharedTable(device, names, space, times, min(t for t in times.values() if t is not None))


def drive(table: SharedTable, seed: int, budget: int, options: dict[str, Any]) -> tuple[list[float], list[float]]:
    """``auto`` for ``budget`` evaluations: the fraction of the optimum after each, and each proposal's time."""
    searcher = AutoSearcher(table.space, seed=seed, **options)
    searcher.set_budget(budget)
    best, curve, clock = math.inf, [], []
    for _ in range(budget):
        start = time.perf_counter()
        asked = searcher.ask(1)
        spent = time.perf_counter() - start
        if not asked:
            break
        value = table.times[tuple(asked[0].config[n] for n in table.names)]
        m = Measurement.ok(value) if value is not None else Measurement.failed(FailureMode.RUNTIME, "recorded failure")
        start = time.perf_counter()
        searcher.tell(Result(asked[0], m))
        clock.append(spent + time.perf_counter() - start)
        best = min(best, value) if value is not None else best
        curve.append(table.optimum / best if math.isfinite(best) else 0.0)
    return curve, clock
