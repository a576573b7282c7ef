"""How often the run-end decision flips under a one-core load: the old protocol against the new.

Issue 35: ``make demo`` run twice gave two contradicting answers, because the old confirm phase
decided from 5 paired rounds, whose 95 % interval of the median ratio is their range (one
disturbed round decides). This bench repeats only the decision, on the same candidates, many
times while ``yes > /dev/null`` keeps the measuring core busy (pinned there after the executor chose
its core: the worst case; a load already running when a run starts is avoided, searchlab.run.execution._cores):

- **old**: 5 interleaved rounds, the median ratio's range over them; faster / slower /
  "no measurable change" (the interval holds 1);
- **new**: the sequential rule (searchlab.core.speedup: anytime confidence sequence, rounds until
  the interval excludes 1, lies within ``1 ± equivalence``, or a cap): faster / slower /
  equivalent / undecided.

Per problem, one seeded random search (``--budget`` evaluations, sized down from the demo's 100
to fit the time: the candidates only need to differ) picks the best 3 configurations; the
comparison is with the problem's default (Futhark: no ``.tuning``). A knob problem has no
default, so its baseline is the configuration of median rank in that search (fixed before the
repetitions, stated in the JSON). Then ``--repeats`` repetitions, each one old and one new
decision in alternating order. Every repetition's decision, interval and rounds are reported;
no run is picked. A "flip" is a repetition whose decision differs from the protocol's most
frequent one.

Run it alone (``cpuslot --exclusive``).
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.common import busy_core
from bench.harness import Benchmark, Context

PROBLEMS = {"lud": [], "matmul": [], "conv2d": ["problem.arch=none"]}


@dataclass(frozen=True)
class Options:
    repeats: int = 10
    budget: int = 10
    max_rounds: int = 40  # the product's defaults (confirm.*)
    max_time_s: float = 60.0
    problems: tuple[str, ...] = tuple(PROBLEMS)


def old_decision(confirmations: list[Any], default: Any, direction: Any) -> dict[str, Any]:
    """The protocol before issue 35: the pooled-median best, its 5 paired ratios' median and range."""
    from searchlab.core.records import Direction
    from searchlab.core.speedup import speedup

    def by_round(key: str) -> dict[int, float]:
        return {int(r.candidate.meta["round"]): float(r.objective) for r in confirmations
                if r.config.key == key and r.ok and r.objective is not None}

    base = by_round(default.key)
    keys = {r.config.key for r in confirmations} - {default.key}
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    best = min(keys, key=lambda k: sign * statistics.median(by_round(k).values()))
    mine = by_round(best)
    ratios = [speedup(base[n], mine[n], direction) for n in sorted(set(base) & set(mine))]
    lo, hi = min(ratios), max(ratios)  # the old median_ci at n = 5: the sample range
    decision = "faster" if lo > 1 else "slower" if hi < 1 else "no measurable change"
    return {"decision": decision, "speedup": statistics.median(ratios), "ci95": [lo, hi], "rounds": len(ratios)}


def new_decision(report: dict[str, Any]) -> dict[str, Any]:
    c = report["versus_default"]
    return {"decision": report["decision"], "speedup": c["speedup"], "ci95": c["ci95"], "rounds": c["pairs"],
            "stopped": report["stopped"]}


def _problem(name: str, extra: list[str]) -> Any:
    from omegaconf import OmegaConf

    from searchlab.cli.compose import compose
    from searchlab.recompose import build_problem

    config = OmegaConf.to_container(compose([f"problem={name}", *extra]).cfg["problem"], resolve=True)
    assert isinstance(config, dict)
    return build_problem({str(k): v for k, v in config.items()})


def repeat(n: int, problem: Any, executor: Any, search: list[Any], default: Any, options: Any) -> dict[str, Any]:
    """One repetition: one old and one new decision on the same candidates, in alternating order."""
    from searchlab.run.confirm import ConfirmConfig, run_confirm
    from searchlab.run.confirm_report import confirm_report

    row: dict[str, Any] = {"repeat": n}
    for protocol in ("old", "new") if n % 2 == 0 else ("new", "old"):
        t0 = time.time()
        if protocol == "old":
            done, _, _ = run_confirm(executor, search, [], problem.direction, ConfirmConfig(k=3, rounds=5, max_rounds=5),
                                     None, default)
            row["old"] = {**old_decision(done, default, problem.direction), "seconds": time.time() - t0}
        else:
            done, complete, stopped = run_confirm(executor, search, [], problem.direction, options, None, default)
            report = confirm_report(search, done, problem.direction, options.k, complete, default,
                                    equivalence=options.equivalence, stopped=stopped)
            row["new"] = {**new_decision(report), "seconds": time.time() - t0}
    return row


def one_problem(ctx: Context, name: str, o: Options, options: Any) -> dict[str, Any]:
    from searchlab.api import optimize
    from searchlab.core.records import loss
    from searchlab.run.execution import SerialExecutor
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher

    problem = _problem(name, PROBLEMS.get(name, []))
    executor = SerialExecutor()
    (worker,) = executor.start(problem)
    # the load arrives after the executor chose its (idle) core, on that very core: the worst case
    core = (worker.device.cores or (sorted(os.sched_getaffinity(0))[-1],))[0]
    load = busy_core(core)
    started = time.time()
    try:
        outcome = optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=o.budget),
                           executor=executor)
        ok = sorted((r for r in outcome.results if r.ok), key=lambda r: loss(r.measurement, problem.direction))
        default = problem.default_config() or ok[len(ok) // 2].config
        search = [r for r in outcome.results if r.config.key != default.key]
        rows = []
        for n in range(o.repeats):
            rows.append(repeat(n, problem, executor, search, default, options))
            ctx.log(f"{name} {n}: old {rows[-1]['old']['decision']}, new {rows[-1]['new']['decision']} "
                    f"({rows[-1]['new']['rounds']} rounds)")
    finally:
        load.terminate()
        load.wait()
        executor.close()
    out: dict[str, Any] = {"problem": name, "overrides": PROBLEMS.get(name, []), "search_budget": o.budget,
                           "loaded_core": core, "runs": rows, "wall_s": time.time() - started,
                           "baseline": "the problem's default" if problem.default_config() else
                           f"median-rank configuration of the search: {dict(default)}"}
    for protocol in ("old", "new"):
        counts = Counter(r[protocol]["decision"] for r in rows)
        mode = counts.most_common(1)[0][0]
        out[protocol] = {"decisions": dict(counts), "flips": sum(c for d, c in counts.items() if d != mode),
                         "median_rounds": statistics.median(r[protocol]["rounds"] for r in rows),
                         "median_seconds": statistics.median(r[protocol]["seconds"] for r in rows)}
    return out


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.run.confirm import ConfirmConfig

    ctx.used_seeds([0])
    options = ConfirmConfig(k=3, rounds=5, max_rounds=o.max_rounds, max_time_s=o.max_time_s, equivalence=0.02)
    results: dict[str, Any] = {
        "load": "yes > /dev/null pinned to the measuring core (loaded_core), started after the executor chose it: "
                "the worst case, which choosing idle cores at start cannot avoid", "repeats": o.repeats,
        "new_rule": {"rounds": 5, "max_rounds": o.max_rounds, "max_time_s": o.max_time_s, "equivalence": 0.02,
                     "k": 3, "alpha": 0.05},
        "old_rule": {"rounds": 5, "k": 3, "interval": "range of the 5 paired ratios"}, "problems": []}
    for name in o.problems:  # written after every problem: a stopped bench keeps what it measured
        results["problems"].append(one_problem(ctx, name, o, options))
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("confirm_flips", "how often the run-end decision flips under a one-core load: old 5-round "
                      "protocol vs the sequential rule", Options, run, cited_by=("docs/measurement.md",))
