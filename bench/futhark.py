"""Our threshold tuners and a few generic searchers against the real ``futhark autotune``.

    python bench/futhark.py [--problems loopmm lud] [--seeds 3] [--budget 40]

On each of our Futhark programs (real compiler, OpenCL on pocl): every threshold tuner
(randomised ones with ``--seeds`` seeds), ``random`` and ``tag``, and ``futhark autotune``
itself run on the same training datasets (a ``--spec-file`` with only them, the same
compiled executable). Per run: benchmark runs (evaluations that ran the program; for
``futhark autotune`` the number of ``Compared`` sampling runs is not reported by the tool,
so only its wall time is), tuning wall time, and the validation run time of the tuned
thresholds next to untuned and all-false, each a median with its 95 % interval over
``--validation-runs`` runs, all configurations measured round-robin in the same session.
Writes ``bench/results/futhark.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
os.environ["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"

TUNERS = (("simple", 1), ("binary", 1), ("instrumented", 1), ("futhark_autotune", 1), ("exhaustive", 1),
          ("active", 3), ("cma_index", 3), ("random", 3), ("tag", 3))


def tuned_config(outcome: Any) -> dict[str, int]:
    finals = [r for r in outcome.results if r.candidate.meta.get("final") and r.ok]
    best = finals[-1] if finals else outcome.best
    return {k: int(v) for k, v in best.config.items()} if best is not None else {}


def real_autotune(problem: Any) -> tuple[dict[str, int], float, str]:
    """``futhark autotune`` on the training datasets, with the executable we compiled."""
    from searchlab.adapters.futhark._report import read_tuning

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


def validate(executor: Any, problem: Any, configs: dict[str, dict[str, int]], rounds: int) -> dict[str, Any]:
    """Round-robin: every configuration once per round, so all see the same load drift."""
    import statistics

    from searchlab.core.measure import Samples

    samples: dict[str, dict[str, list[float]]] = {label: {} for label in configs}
    for _ in range(rounds):
        for label, config in configs.items():
            times = executor.call("validation_times", config)
            for d, v in times.items():
                samples[label].setdefault(d, []).append(v["median"])
    out = {}
    for label, per in samples.items():
        total = [sum(vals[i] for vals in per.values()) for i in range(rounds)]
        s = Samples(tuple(total))
        out[label] = {"sum_median_ms": statistics.median(total) * 1e3, "ci95_ms": [x * 1e3 for x in s.ci95],
                      "per_dataset_ms": {d: statistics.median(v) * 1e3 for d, v in per.items()}}
    return out


def bench_problem(name: str, seeds: int, budget: int, validation_runs: int, rounds: int) -> dict[str, Any]:
    import searchlab.adapters.futhark as futhark
    from searchlab import searchers
    from searchlab.adapters.futhark._report import benchmark_runs
    from searchlab.api import optimize
    from searchlab.execution import SerialExecutor
    from searchlab.loop import Budget

    cls = {"lud": futhark.FutharkLud, "loopmm": futhark.FutharkLoopmm, "matmul": futhark.FutharkMatmul}[name]
    problem = cls(validation_runs=validation_runs)
    classes = {"simple": searchers.SimpleSearcher, "binary": searchers.BinarySearcher,
               "instrumented": searchers.InstrumentedSearcher, "futhark_autotune": searchers.FutharkAutotuneSearcher,
               "exhaustive": searchers.ExhaustiveSearcher, "active": searchers.ActiveSearcher,
               "cma_index": searchers.CmaIndexSearcher, "random": searchers.RandomSearcher, "tag": searchers.TagSearcher}
    executor = SerialExecutor()
    executor.start(problem)
    runs: list[dict[str, Any]] = []
    configs: dict[str, dict[str, int]] = {
        "untuned": {k: int(v) for k, v in problem.space.default_config().items()},
        "all-false": {k: int(v) for k, v in problem.space.all_false().items()},
    }
    try:
        for tuner, n in TUNERS:
            for seed in range(seeds if n > 1 else 1):
                start = time.time()
                outcome = optimize(problem, classes[tuner](problem.space, seed=seed), Budget(evaluations=budget),
                                   executor=executor)
                ran, tuning = benchmark_runs(outcome.results)
                label = f"{tuner}#{seed}"
                configs[label] = tuned_config(outcome)
                runs.append({"tuner": tuner, "seed": seed, "label": label, "benchmark_runs": ran, "tuning_runs": tuning,
                             "tuning_wall_s": time.time() - start, "stop": str(outcome.reason),
                             "train_objective_ms": None if outcome.best is None else outcome.best.measurement.objective * 1e3})
                print(f"{name} {label}: {tuning} runs, {time.time() - start:.1f} s", flush=True)
        tuning, wall, error = real_autotune(problem)
        runs.append({"tuner": "futhark autotune (real)", "seed": 0, "label": "futhark-autotune", "benchmark_runs": None,
                     "tuning_wall_s": wall, "error": error})
        if tuning:
            configs["futhark-autotune"] = {**configs["untuned"], **tuning}
        print(f"{name} futhark autotune: {wall:.1f} s {error}", flush=True)
        validation = validate(executor, problem, configs, rounds)
    finally:
        executor.close()
    return {"thresholds": len(problem.space.names), "space_size": problem.space.size(),
            "train": [d.name for d in problem.space.train_datasets()],
            "validation_datasets": [d.name for d in problem.space.validation_datasets()],
            "runs": runs, "configs": configs, "validation": validation}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", default=["loopmm", "lud"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--validation-runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS / "futhark.json"))
    args = parser.parse_args()
    load_before = os.getloadavg()
    start = time.time()
    results = {name: bench_problem(name, args.seeds, args.budget, args.validation_runs, args.rounds)
               for name in args.problems}
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "loadavg_before": load_before,
                       "loadavg_after": os.getloadavg(),
                       "note": "2 cores shared with 7 other sessions' builds, tests and Ray clusters"},
           "args": vars(args), "wall_s": time.time() - start, "problems": results}
    Path(args.out).write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps({n: r["validation"] for n, r in results.items()}, indent=1))


if __name__ == "__main__":
    main()
