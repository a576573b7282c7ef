"""Paper 003 §4.3 / Table 6.2 on this machine: every threshold tuner on ``lud`` and ``loopmm`` (and the simple
tuner on ``matmul``), the hand-written OpenCL imitations (``lud_opencl`` ...), measured on the OpenCL device.

Per problem: the tree-aware exhaustive search first (its best measured configuration is the reference, written
to ``bench/results/thresholds.<problem>.tuning``, which docs/futhark.md passes as ``problem.reference_tuning``),
then each tuner (randomised ones with several seeds). For every run: benchmark runs (evaluations made while
tuning; the final check of the answer excluded), tuning time, and the summed validation run time of the tuned
configuration relative to the exhaustive best, the two measured alternately (the machine is shared: drift
between distant measurements would otherwise dominate); medians and, as a check, minima. pocl runs one pinned
thread. The report is the figure (SVG).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.common import tuned_config
from bench.harness import Benchmark, Context

# Paper 003 Table 6.2 (LUD, mean benchmark runs over three GPUs' columns).
PAPER_LUD_RUNS = {"binary": [45, 45, 45], "active": [42, 32, 37], "cma_index": [233, 173, 99],
                  "instrumented": [18, 18, 18]}
TUNERS = (("simple", 1), ("binary", 1), ("instrumented", 1), ("futhark_autotune", 1), ("active", 3), ("cma_index", 3))


@dataclass(frozen=True)
class Options:
    problems: tuple[str, ...] = ("lud", "loopmm", "matmul")
    seeds: int = 3
    repeats: int = 10


def pin() -> None:
    os.environ["POCL_CPU_MAX_CU_COUNT"] = "1"
    os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})


def paired(problem: Any, config: dict[str, int], reference: dict[str, int], rounds: int = 3) -> dict[str, Any]:
    """Validation run times of ``config`` and ``reference`` measured alternately, dataset by dataset,
    ``rounds`` x ``repeats`` runs each (so both see the same background load)."""
    specs = [s for s in problem.specs if not s.train]
    got: dict[str, dict[str, list[float]]] = {"tuned": {}, "reference": {}}
    for _ in range(rounds):
        for spec in specs:
            for label, c in (("tuned", config), ("reference", reference)):
                run_ = problem.run_dataset(c, spec, problem.protocol, force_check=True)
                got[label].setdefault(spec.name, []).extend(run_.samples.values)
    med = {k: {d: statistics.median(v) for d, v in s.items()} for k, s in got.items()}
    low = {k: {d: min(v) for d, v in s.items()} for k, s in got.items()}
    return {"validation_ms": {d: t * 1e3 for d, t in med["tuned"].items()},
            "reference_validation_ms": {d: t * 1e3 for d, t in med["reference"].items()},
            "relative_to_exhaustive": sum(med["tuned"].values()) / sum(med["reference"].values()),
            "relative_to_exhaustive_min": sum(low["tuned"].values()) / sum(low["reference"].values())}


def run_tuner(ctx: Context, problem: Any, executor: Any, name: str, seed: int, reference: dict[str, int]) -> dict[str, Any]:
    from searchlab import registry
    from searchlab.api import optimize
    from searchlab.run.loop import Budget

    searcher = registry.searcher_class(name)(problem.space, seed=seed)
    outcome = optimize(problem, searcher, Budget(evaluations=5000), executor=executor)
    config = tuned_config(outcome)
    runs = [r for r in outcome.results if not r.candidate.meta.get("final")]
    row = {"tuner": name, "seed": seed, "benchmark_runs": len(runs), "evaluations": len(outcome.results),
           "failed": sum(1 for r in outcome.results if not r.ok), "tuning_time_s": round(outcome.wall_time_s, 2),
           "tuned": config, **paired(problem, config, reference)}
    ctx.log(f"{name:17s} seed {seed}: {row['benchmark_runs']:4d} runs {row['tuning_time_s']:7.1f} s  validation / "
            f"exhaustive = {row['relative_to_exhaustive']:.3f} (min: {row['relative_to_exhaustive_min']:.3f})")
    return row


def bench_problem(ctx: Context, name: str, o: Options) -> dict[str, Any]:
    from searchlab.adapters.futhark import Loopmm, Lud, Matmul
    from searchlab.adapters.futhark.tools import FIXED_10, fixed_runs, write_tuning
    from searchlab.api import optimize
    from searchlab.run.execution import SerialExecutor
    from searchlab.run.loop import Budget
    from searchlab.searchers import ExhaustiveSearcher

    cls: Any = {"lud": Lud, "loopmm": Loopmm, "matmul": Matmul}[name]
    problem = cls(measure=fixed_runs(FIXED_10, o.repeats))
    executor = SerialExecutor(timeout_s=None)
    executor.start(problem)
    try:
        start = time.time()
        outcome = optimize(problem, ExhaustiveSearcher(problem.space, seed=0), Budget(evaluations=100000),
                           executor=executor)
        if outcome.best is None:
            raise SystemExit(f"thresholds: {name}: the exhaustive search found nothing")
        reference = {k: int(v) for k, v in outcome.best.config.items()}  # type: ignore[arg-type]
        write_tuning(ctx.artefact(f".{name}.tuning"), reference)
        space = problem.space
        baselines = {label: paired(problem, {k: int(v) for k, v in c.items()}, reference)
                     for label, c in (("untuned", space.default_config()), ("all_false", space.all_false()))}
        out: dict[str, Any] = {
            "problem": name, "code_versions": problem.code_versions, "thresholds": len(space.names),
            "loop_based": [n for n in space.names if space.is_loop_based(n)],
            "datasets": {d.name: "train" if d.train else "validation" for d in space.datasets},
            "exhaustive": {"evaluations": len(outcome.results), "tuning_time_s": round(time.time() - start, 1),
                           "best_objective_s": outcome.best.objective, "config": reference,
                           "validation_ms": baselines["untuned"]["reference_validation_ms"]},
            "baselines_relative_to_exhaustive": {k: v["relative_to_exhaustive"] for k, v in baselines.items()},
            "baselines": baselines, "runs": []}
        ctx.log(f"{name}: exhaustive {len(outcome.results)} evaluations in {out['exhaustive']['tuning_time_s']} s; "
                f"untuned/exhaustive {out['baselines_relative_to_exhaustive']['untuned']:.3f}, "
                f"all-false/exhaustive {out['baselines_relative_to_exhaustive']['all_false']:.3f}")
        for tuner, n_seeds in (("simple", 1),) if name == "matmul" else TUNERS:
            for seed in range(o.seeds if n_seeds > 1 else 1):
                out["runs"].append(run_tuner(ctx, problem, executor, tuner, seed, reference))
        return out
    finally:
        executor.close()


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.core.opencl import default_device

    pin()
    ctx.used_seeds(range(o.seeds))
    results: dict[str, Any] = {
        "benchmark": "paper 003 threshold tuners (Table 6.2 style)", "device": default_device().name,
        "repeats": o.repeats, "note": "pocl pinned to one thread; times are OpenCL profiling-event sums, medians of "
                                      "`repeats` runs (validation: 3x repeats)",
        "paper_lud_benchmark_runs": PAPER_LUD_RUNS, "problems": []}
    for p in o.problems:
        results["problems"].append(bench_problem(ctx, p, o))
        ctx.checkpoint(results)
    return results


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = [p for p in results["problems"] if p["problem"] != "matmul"]
    if not problems:
        return
    fig, axes = plt.subplots(1, len(problems), figsize=(6 * len(problems), 4.5), squeeze=False)
    markers = dict(zip([t for t, _ in TUNERS], "osD^vx"))
    for ax, p in zip(axes[0], problems):
        for tuner, _ in TUNERS:
            rows = [r for r in p["runs"] if r["tuner"] == tuner]
            ax.scatter([r["benchmark_runs"] for r in rows], [r["relative_to_exhaustive"] for r in rows],
                       marker=markers[tuner], label=tuner, s=50)
        ax.scatter([p["exhaustive"]["evaluations"]], [1.0], marker="*", s=120, c="k", label="exhaustive")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.axhline(1.05, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("benchmark runs while tuning")
        ax.set_ylabel("validation run time / exhaustive best")
        ax.set_title(f"{p['problem']} ({p['code_versions']} code versions), pocl 1 thread")
        ax.legend(fontsize=8)
    fig.tight_layout()
    ctx.save_figure(fig)


BENCHMARK = Benchmark("thresholds", "every threshold tuner on the lud_opencl and loopmm_opencl imitations: benchmark "
                      "runs, tuning time, validation time vs exhaustive", Options, run, report,
                      cited_by=("docs/futhark.md",))
