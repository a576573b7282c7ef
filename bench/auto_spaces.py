"""``auto``'s thinking time per proposal on every knob-space kind it serves, through searchlab's ask/tell (issue 53).

``bench/auto_kt.py`` times ``auto`` inside Kernel Tuner's harness on the shared tables; this one covers the
other space kinds the issue names, driven by hand (``ask(1)``, evaluate, ``tell``) so that only the searcher is
timed, every proposal (its ``ask`` and the ``tell`` after it):

- ``constrained_1e5``: the synthetic GPU-kernel space of ``bench/proposal_space.py`` with one more knob
  (``stages``, 1-10): 967,680 combinations, 96,800 valid under the known constraints, 8 % hidden failures;
- ``product_1e16``: eight integer knobs of 100 values, no constraint (what Optuna and Ray Tune give ``auto``);
- ``past_256``: a 256-configuration product asked for 1024 evaluations (the budget 4x the space): every
  configuration once, then "done" at once;
- ``table_4362``: the shared A100 table's valid set as a searchlab table space (the same space Kernel Tuner's
  harness gives, without Kernel Tuner around it).

Reported per space: p50 / p90 / max of the per-proposal time with bootstrap intervals (whole runs resampled), the
first proposal apart (it builds the candidate set), and the wall time of a run.

    cpuslot --exclusive .venv/bin/python -m bench auto_spaces
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import proposal_space
from bench.auto_kt import TABLE_DIR
from bench.auto_stats import quantile_of_runs
from bench.harness import Benchmark, Context
from bench.proposal_space import num
from searchlab.core.records import Config, FailureMode, Measurement, Result
from searchlab.core.spaces import IntKnob, KnobSpace, OrdinalKnob
from searchlab.searchers import AutoSearcher

Objective = Callable[[Config], "float | None"]


@dataclass(frozen=True)
class Options:
    seeds: int = 3
    evaluations: int = 250
    spaces: list[str] = field(default_factory=lambda: ["constrained_1e5", "product_1e16", "past_256", "table_4362"])
    auto_options: str = ""  # JSON object of auto's options; "" = the shipped defaults


def _hash01(config: Config) -> float:
    key = repr(sorted(config.items())).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64


def constrained() -> tuple[KnobSpace, Objective]:
    base = proposal_space.space()
    space = KnobSpace((*base.knobs, OrdinalKnob("stages", tuple(range(1, 11)))), base.constraints)

    def objective(c: Config) -> float | None:
        if proposal_space.hidden_failure(c):
            return None
        rest = Config({k: v for k, v in c.items() if k != "stages"})
        return proposal_space.time_ms(rest) * (1.0 + 0.02 * (num(c, "stages") - 4) ** 2)

    return space, objective


def product() -> tuple[KnobSpace, Objective]:
    space = KnobSpace(tuple(IntKnob(f"p{i}", 0, 99) for i in range(8)))

    def objective(c: Config) -> float | None:
        bowl = sum((num(c, f"p{i}") - 17 * i % 100) ** 2 for i in range(8)) / 8e3
        return math.exp(bowl + 0.1 * _hash01(c))

    return space, objective


def small() -> tuple[KnobSpace, Objective]:
    space = KnobSpace(tuple(OrdinalKnob(n, (1, 2, 4, 8)) for n in "abcd"))
    return space, lambda c: 1.0 + _hash01(c)


def table() -> tuple[KnobSpace, Objective]:
    from searchlab.integrations.kernel_tuner import knob_space

    with gzip.open(TABLE_DIR / "convolution_A100.json.gz", "rt") as fh:
        cache = json.load(fh)
    names = cache["tune_params_keys"]
    times = {tuple(e[n] for n in names): e.get("time") for e in cache["cache"].values()}
    space = knob_space(cache["tune_params"], list(times))

    def objective(c: Config) -> float | None:
        value = times[tuple(c[n] for n in names)]
        return float(value) if isinstance(value, (int, float)) else None

    return space, objective


SPACES: dict[str, tuple[Callable[[], tuple[KnobSpace, Objective]], int | None]] = {
    "constrained_1e5": (constrained, None), "product_1e16": (product, None), "past_256": (small, 1024),
    "table_4362": (table, None)}


def one_run(space: KnobSpace, objective: Objective, seed: int, budget: int, options: dict[str, Any]
            ) -> dict[str, Any]:
    searcher = AutoSearcher(space, seed=seed, **options)
    searcher.set_budget(budget)
    clock: list[float] = []
    start = time.perf_counter()
    for _ in range(budget):
        t = time.perf_counter()
        asked = searcher.ask(1)
        spent = time.perf_counter() - t
        if not asked:
            clock.append(spent)  # the "done" answer is a proposal too
            break
        value = objective(asked[0].config)
        m = Measurement.ok(value) if value is not None else Measurement.failed(FailureMode.RESOURCES, "hidden")
        t = time.perf_counter()
        searcher.tell(Result(asked[0], m))
        clock.append(spent + time.perf_counter() - t)
    return {"seed": seed, "wall_s": time.perf_counter() - start, "proposals": len(clock), "first_s": clock[0],
            "proposal_s": clock[1:], "notes": list(searcher.notes)}


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    options = json.loads(opts.auto_options) if opts.auto_options else {}
    out: dict[str, Any] = {"auto_options": options, "spaces": {}}
    for name in opts.spaces:
        make, budget = SPACES[name]
        space, objective = make()
        runs = []
        for seed in ctx.used_seeds(range(opts.seeds)):
            runs.append(one_run(space, objective, seed, budget or opts.evaluations, options))
            ctx.log(f"{name} seed {seed}: {runs[-1]['proposals']} proposals, {runs[-1]['wall_s']:.2f} s")
        times = [r["proposal_s"] for r in runs]
        out["spaces"][name] = {
            "budget": budget or opts.evaluations, "p50": quantile_of_runs(times, 0.5), "p90": quantile_of_runs(times, 0.9),
            "max_s": max(max(t) for t in times if t), "first_s": [r["first_s"] for r in runs],
            "wall_s": [r["wall_s"] for r in runs], "proposals": [r["proposals"] for r in runs], "notes": runs[0]["notes"]}
        ctx.log(f"{name}: p50 {out['spaces'][name]['p50']['value'] * 1e3:.1f} ms, "
                f"p90 {out['spaces'][name]['p90']['value'] * 1e3:.1f} ms")
    p90 = [s["p90"]["value"] for s in out["spaces"].values()]
    out["criteria"] = {"p90_proposal_at_most_50ms": {"worst_p90_s": max(p90), "met": max(p90) <= 0.05}}
    return out


BENCHMARK = Benchmark("auto_spaces", "auto's time per proposal on a 10^5-configuration constrained space, an "
                      "unconstrained product, a budget 4x a 256-configuration space and a shared table (issue 53)",
                      Options, run, cited_by=("docs/baselines.md",))
