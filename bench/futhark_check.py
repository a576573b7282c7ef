"""Does searchlab's tuned-versus-untuned ratio agree with ``futhark bench``'s? (issue 22, item 4)

For each program and each threshold configuration, in ``--rounds`` interleaved rounds (order
rotated per round), every configuration is timed

- by searchlab, as an evaluation does: the program's server with the thresholds set live
  (``set_tuning_param``), one warm-up then ``--runs`` timed runs per dataset, the server's
  ``runtime:`` line (``FutharkServerProblem.timed_runs``); once with the values as the configuration
  has them and once as searchlab now sends them (a 0 becomes the default, what a ``.tuning`` file gives: docs/futhark.md);
- by ``futhark bench --skip-compilation -r RUNS`` on the same executable and data files
  (``--spec-file``), untuned with ``--no-tuning``, tuned with the configuration as a ``.tuning`` file.

Per round and dataset, speed-up = untuned time / tuned time (each the median of the round's
runs); reported as the median over rounds with its distribution-free 95 % interval
(``searchlab.core.measure.median_ci``; with 5 rounds the rounds' range). Two measurements agree when
their intervals overlap. Configurations: ``all-false`` (every comparison false: a sizeable
threshold effect on lud), ``all-true`` (index 0 of every plateau: the outer-parallel versions, close
to untuned), and ``--tuning FILE`` (e.g. the ``.tuning`` a run wrote).

Run it under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import futhark_on_path
from bench.common.stats import median_interval
from bench.harness import Benchmark, Context

TOOLS = ("searchlab", "searchlab_live_zero", "futhark_bench")


@dataclass(frozen=True)
class Options:
    programs: tuple[str, ...] = ("lud", "matmul")
    rounds: int = 5
    runs: int = 10
    tuning: tuple[str, ...] = ()  # PROGRAM=FILE: a .tuning file to check too


def searchlab_times(problem: Any, config: dict[str, int], runs: int, live_zero: bool) -> dict[str, float]:
    """Median seconds per dataset as an evaluation measures them (live_zero: send a 0 as it is)."""
    return {name: statistics.median(problem.timed_runs(config, name, runs, as_given=live_zero))
            for name in problem.data}


def bench_times(problem: Any, work: Path, config: dict[str, int] | None, runs: int) -> dict[str, float]:
    """Median seconds per dataset under ``futhark bench`` (config None: --no-tuning)."""
    from searchlab.adapters.futhark.tools import write_tuning

    stem = problem.source.stem
    tuning = work / f"{stem}.fut.tuning"
    tuning.unlink(missing_ok=True)
    if config is not None:
        write_tuning(tuning, config)
    result = work / "bench.json"
    cmd = ["futhark", "bench", "--backend=opencl", "--skip-compilation", "-r", str(runs), f"--json={result}",
           f"--spec-file={work / (stem + '.spec')}", *(["--no-tuning"] if config is None else []), f"{stem}.fut"]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"futhark_check: futhark bench failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")
    if config is not None and f"using {stem}.fut.tuning" not in proc.stdout:
        raise SystemExit(f"futhark_check: futhark bench did not use the tuning file: {proc.stdout[-400:]}")
    datasets = next(iter(json.loads(result.read_text()).values()))["datasets"]
    inputs = {str(d.input): name for name, d in problem.data.items()}
    return {next((n for path, n in inputs.items() if path in key), key): statistics.median(value["runtimes"]) * 1e-6
            for key, value in datasets.items()}


def _ratios(samples: dict[str, dict[str, list[dict[str, float]]]], label: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tool, by_label in samples.items():
        base, tuned = by_label["untuned"], by_label[label]
        per_dataset = {d: median_interval([u[d] / t[d] for u, t in zip(base, tuned)]) for d in base[0]}
        total = median_interval([sum(u.values()) / sum(t.values()) for u, t in zip(base, tuned)])
        out[tool] = {"total": total, "datasets": per_dataset}
    a, b = out["searchlab"]["total"]["ci95"], out["futhark_bench"]["total"]["ci95"]
    out["agree"] = a[0] <= b[1] and b[0] <= a[1]
    return out


def check_program(ctx: Context, name: str, o: Options, extra: dict[str, dict[str, int]]) -> dict[str, Any]:
    from searchlab.adapters.futhark import FutharkLoopmm, FutharkLud, FutharkMatmul
    from searchlab.adapters.futhark.tools import write_spec
    from searchlab.core.problem import DeviceInfo

    cls: Any = {"lud": FutharkLud, "matmul": FutharkMatmul, "loopmm": FutharkLoopmm}[name]
    problem = cls()
    problem.setup(DeviceInfo())
    space = problem.tree
    untuned = {k: int(v) for k, v in space.default_config().items()}
    configs = {"all-false": {k: int(v) for k, v in space.all_false().items()},
               "all-true": {n: int(space.plateau_values(n)[0]) for n in space.names}, **extra}
    work = Path(tempfile.mkdtemp(prefix=f"futhark_check_{name}_"))
    shutil.copy(problem.source, work / problem.source.name)
    shutil.copy(problem.exe, work / problem.source.stem)
    write_spec(problem, work)
    labels = ["untuned", *configs]
    samples: dict[str, dict[str, list[dict[str, float]]]] = {tool: {label: [] for label in labels} for tool in TOOLS}
    try:
        for n in range(o.rounds):
            for label in labels[n % len(labels):] + labels[: n % len(labels)]:
                config = untuned if label == "untuned" else configs[label]
                samples["searchlab"][label].append(searchlab_times(problem, config, o.runs, live_zero=False))
                samples["searchlab_live_zero"][label].append(searchlab_times(problem, config, o.runs, live_zero=True))
                samples["futhark_bench"][label].append(bench_times(problem, work, None if label == "untuned" else config,
                                                                   o.runs))
            ctx.log(f"{name}: round {n + 1}/{o.rounds} done")
    finally:
        problem.teardown()
        shutil.rmtree(work, ignore_errors=True)
    return {"thresholds": list(space.names), "untuned": untuned, "configs": configs,
            "ratios": {label: _ratios(samples, label) for label in configs},
            "untuned_ms": {tool: {d: statistics.median(r[d] for r in by_label["untuned"]) * 1e3
                                  for d in by_label["untuned"][0]} for tool, by_label in samples.items()}}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.adapters.futhark.tools import read_tuning

    futhark_on_path()
    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
    extra: dict[str, dict[str, dict[str, int]]] = {}
    for item in o.tuning:
        program, _, path = item.partition("=")
        extra.setdefault(program, {})[f"file:{Path(path).name}"] = read_tuning(path)
    results: dict[str, Any] = {"pocl_threads": os.environ["POCL_MAX_PTHREAD_COUNT"], "programs": {}}
    for p in o.programs:
        r = results["programs"][p] = check_program(ctx, p, o, extra.get(p, {}))
        for label, tools in r["ratios"].items():
            cells = "  ".join(f"{tool} {tools[tool]['total']['median']:.3f} [{tools[tool]['total']['ci95'][0]:.3f}, "
                              f"{tools[tool]['total']['ci95'][1]:.3f}]" for tool in TOOLS)
            ctx.log(f"{p} {label}: untuned/tuned  {cells}  agree={tools['agree']}")
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("futhark_check", "does searchlab's tuned / untuned ratio agree with futhark bench's? "
                      "interleaved rounds, with intervals", Options, run, cited_by=("docs/futhark.md",))
