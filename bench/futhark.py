"""Our threshold tuners against the real ``futhark autotune``, and thresholds only vs thresholds + sizes.

``futhark``: on each of our Futhark programs (real compiler, OpenCL on pocl): every threshold tuner
(randomised ones with ``--seeds`` seeds), ``random`` and ``tag``, and ``futhark autotune`` itself run on the
same training datasets (a ``--spec-file`` with only them, the same compiled executable). Per run: benchmark
runs (evaluations that ran the program; ``futhark autotune`` does not report its sampling runs, so only its
wall time is), tuning wall time, and the validation run time of the tuned thresholds next to untuned and
all-false, each a median with its 95 % interval over ``--validation-runs`` runs, all configurations measured
round-robin in the same session.

``futhark_sizes``: for each seed, ``random`` tunes a program twice with the same evaluation budget: on the
threshold tree alone and on thresholds + block/tile sizes (``problem.sizes=true``). The tuned configurations,
untuned and all-false are then measured round-robin on the validation datasets (``--rounds`` rounds of
``--validation-runs`` runs; a cell is the median over rounds of the summed per-dataset medians with the
distribution-free 95 % interval of that median). Each size setting pocl has not built before costs a build
(seconds to a minute on a loaded 2-core machine): tuning wall time is reported.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, futhark_on_path, tuned_config
from bench.harness import Benchmark, Context

TUNERS = (("simple", 1), ("binary", 1), ("instrumented", 1), ("futhark_autotune", 1), ("exhaustive", 1),
          ("active", 3), ("cma_index", 3), ("random", 3), ("tag", 3))


@dataclass(frozen=True)
class Options:
    problems: tuple[str, ...] = ("loopmm", "lud")
    seeds: int = 3
    budget: int = 40
    validation_runs: int = 10
    rounds: int = 3


@dataclass(frozen=True)
class SizesOptions:
    program: str = str(REPO / "tests" / "data" / "futhark" / "mm.fut")
    validation: tuple[str, ...] = ("[64][64]f32 [64][64]f32",)
    seeds: int = 3
    budget: int = 6
    validation_runs: int = 10
    rounds: int = 5


def real_autotune(problem: Any) -> tuple[dict[str, int], float, str]:
    """``futhark autotune`` on the training datasets, with the executable we compiled."""
    from searchlab.adapters.futhark.tools import read_tuning

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        stem = problem.source.stem
        shutil.copy(problem.source, work / f"{stem}.fut")
        shutil.copy(problem.exe, work / stem)
        spec = ["==", f"entry: {problem.cases[0].entry}"]
        for d in problem.space.train_datasets():
            data = problem.data[d.name]
            spec += [f"input @ {data.input}", *([f"output @ {data.expected_path}"] if data.expected_path else [])]
        (work / "train.spec").write_text("\n".join(spec) + "\n")
        start = time.time()
        proc = subprocess.run(["futhark", "autotune", "--backend=opencl", "--skip-compilation", "--spec-file=train.spec",
                               f"{stem}.fut"], capture_output=True, text=True, cwd=work, timeout=3600)
        wall = time.time() - start
        if proc.returncode != 0:
            return {}, wall, (proc.stderr or proc.stdout)[-500:]
        return read_tuning(work / f"{stem}.fut.tuning"), wall, ""


def validate(executor: Any, configs: dict[str, dict[str, int]], rounds: int) -> dict[str, Any]:
    """Round-robin: every configuration once per round, so all see the same load drift."""
    from searchlab.core.measure import Samples

    samples: dict[str, dict[str, list[float]]] = {label: {} for label in configs}
    for _ in range(rounds):
        for label, config in configs.items():
            for d, v in executor.call("validation_times", config).items():
                samples[label].setdefault(d, []).append(v["median"])
    out = {}
    for label, per in samples.items():
        total = [sum(vals[i] for vals in per.values()) for i in range(rounds)]
        out[label] = {"sum_median_ms": statistics.median(total) * 1e3,
                      "ci95_ms": [x * 1e3 for x in Samples(tuple(total)).ci95],
                      "per_dataset_ms": {d: statistics.median(v) * 1e3 for d, v in per.items()}}
    return out


def _ints(config: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in dict(config).items()}


def bench_problem(ctx: Context, name: str, o: Options) -> dict[str, Any]:
    from searchlab import registry
    from searchlab.adapters.futhark import FutharkLoopmm, FutharkLud, FutharkMatmul
    from searchlab.adapters.futhark.tools import benchmark_runs
    from searchlab.api import optimize
    from searchlab.run.execution import SerialExecutor
    from searchlab.run.loop import Budget

    cls: Any = {"lud": FutharkLud, "loopmm": FutharkLoopmm, "matmul": FutharkMatmul}[name]
    problem = cls(validation_runs=o.validation_runs)
    executor = SerialExecutor()
    executor.start(problem)
    runs: list[dict[str, Any]] = []
    configs = {"untuned": _ints(problem.space.default_config()), "all-false": _ints(problem.space.all_false())}
    try:
        for tuner, n in TUNERS:
            for seed in range(o.seeds if n > 1 else 1):
                start = time.time()
                searcher = registry.searcher_class(tuner)(problem.space, seed=seed)
                outcome = optimize(problem, searcher, Budget(evaluations=o.budget), executor=executor)
                ran, tuning = benchmark_runs(outcome.results)
                label = f"{tuner}#{seed}"
                configs[label] = tuned_config(outcome)
                best = None if outcome.best is None else outcome.best.measurement.objective
                runs.append({"tuner": tuner, "seed": seed, "label": label, "benchmark_runs": ran, "tuning_runs": tuning,
                             "tuning_wall_s": time.time() - start, "stop": str(outcome.reason),
                             "train_objective_ms": None if best is None else best * 1e3})
                ctx.log(f"{name} {label}: {tuning} runs, {time.time() - start:.1f} s")
        tuning_, wall, error = real_autotune(problem)
        runs.append({"tuner": "futhark autotune (real)", "seed": 0, "label": "futhark-autotune", "benchmark_runs": None,
                     "tuning_wall_s": wall, "error": error})
        if tuning_:
            configs["futhark-autotune"] = {**configs["untuned"], **tuning_}
        ctx.log(f"{name} futhark autotune: {wall:.1f} s {error}")
        validation = validate(executor, configs, o.rounds)
    finally:
        executor.close()
    return {"thresholds": len(problem.space.names), "space_size": problem.space.size(),
            "train": [d.name for d in problem.space.train_datasets()],
            "validation_datasets": [d.name for d in problem.space.validation_datasets()],
            "runs": runs, "configs": configs, "validation": validation}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    futhark_on_path()
    ctx.used_seeds(range(o.seeds))
    results: dict[str, Any] = {"problems": {}}
    for name in o.problems:
        results["problems"][name] = bench_problem(ctx, name, o)
        ctx.checkpoint(results)
    return results


def run_sizes(ctx: Context, o: SizesOptions) -> dict[str, Any]:
    from searchlab.adapters.futhark import FutharkServerProblem
    from searchlab.api import optimize
    from searchlab.run.execution import SerialExecutor
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher

    futhark_on_path()
    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
    ctx.used_seeds(range(o.seeds))
    opts: dict[str, Any] = {"program": o.program, "validation": list(o.validation), "validation_runs": o.validation_runs}
    plain, sized = FutharkServerProblem(**opts), FutharkServerProblem(**opts, sizes=True)
    runs, configs = [], {"untuned": _ints(sized.space.default_config()), "all-false": _ints(sized.space.all_false())}
    for label, problem in (("thresholds", plain), ("thresholds+sizes", sized)):
        executor = SerialExecutor()
        executor.start(problem)
        try:
            for seed in range(o.seeds):
                start = time.time()
                outcome = optimize(problem, RandomSearcher(problem.space, seed=seed), Budget(evaluations=o.budget),
                                   executor=executor)
                failed, wall = sum(1 for r in outcome.results if not r.ok), time.time() - start
                configs[f"{label}#{seed}"] = tuned_config(outcome)
                runs.append({"space": label, "seed": seed, "tuning_wall_s": wall, "failed_evaluations": failed,
                             "config": configs[f"{label}#{seed}"]})
                ctx.log(f"{label} seed {seed}: {wall:.1f} s, {failed} failed")
        finally:
            executor.close()
    executor = SerialExecutor()
    executor.start(sized)  # every configuration (thresholds only: default sizes) on the same servers
    try:
        validation = validate(executor, configs, o.rounds)
    finally:
        executor.close()
    return {"searcher": "random", "size_knobs": sized.space.describe()["knobs"], "runs": runs,
            "validation": validation, "reading": summarise(validation, o.seeds),
            "pocl_cache": os.environ.get("POCL_CACHE_DIR", "pocl's default (~/.cache/pocl), may be warm")}


def summarise(validation: dict[str, Any], seeds: int) -> dict[str, Any]:
    """Per space: the seeds' cells, and whether each seed's interval overlaps untuned's."""
    untuned = validation["untuned"]["ci95_ms"]
    out: dict[str, Any] = {"untuned_ms": validation["untuned"]["sum_median_ms"], "untuned_ci95_ms": untuned}
    for space in ("thresholds", "thresholds+sizes"):
        cells = [validation[f"{space}#{s}"] for s in range(seeds)]
        out[space] = {"median_of_seeds_ms": statistics.median(c["sum_median_ms"] for c in cells),
                      "per_seed": [[c["sum_median_ms"], c["ci95_ms"]] for c in cells],
                      "overlaps_untuned": [not (c["ci95_ms"][0] > untuned[1] or c["ci95_ms"][1] < untuned[0])
                                           for c in cells]}
    return out


BENCHMARK = [
    Benchmark("futhark", "every threshold tuner and generic searchers against the real futhark autotune: benchmark "
              "runs, tuning wall time, validation time with intervals", Options, run, cited_by=("docs/futhark.md",)),
    Benchmark("futhark_sizes", "thresholds only vs thresholds + block/tile sizes, same searcher and budget: "
              "validation time with intervals, tuning wall time", SizesOptions, run_sizes,
              cited_by=("docs/futhark.md",)),
]
