"""Does searchlab's tuned-versus-untuned ratio agree with ``futhark bench``'s? (issue 22, item 4)

For each program and each threshold configuration, in ``--rounds`` interleaved rounds (order
rotated per round), every configuration is timed

- by searchlab, as an evaluation does: the program's server with the thresholds set live
  (``set_tuning_param``), one warm-up then ``--runs`` timed runs per dataset, the server's
  ``runtime:`` line; once with the values as the configuration has them and once as searchlab
  now sends them (a 0 becomes the default, what a ``.tuning`` file gives: docs/futhark.md);
- by ``futhark bench --skip-compilation -r RUNS`` on the same executable and data files
  (``--spec-file``), untuned with ``--no-tuning``, tuned with the configuration as a ``.tuning`` file.

Per round and dataset, speed-up = untuned time / tuned time (each the median of the round's
runs); reported as the median over rounds with its distribution-free 95 % interval
(``searchlab.core.measure.median_ci``; with 5 rounds the rounds' range). Two measurements agree when
their intervals overlap. Configurations: ``all-false`` (every comparison false: a sizeable
threshold effect on lud), ``all-true`` (index 0 of every plateau: the outer-parallel versions, close
to untuned), and ``--tuning FILE`` (e.g. the ``.tuning`` a run wrote).

    /work/bin/cpuslot --exclusive python bench/futhark_check.py --programs lud matmul \\
        --tuning lud=/tmp/old/lud.fut.tuning --rounds 5

Writes bench/results/futhark_check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "results" / "futhark_check.json"


def searchlab_times(problem: Any, config: dict[str, int], runs: int, live_zero: bool) -> dict[str, float]:
    """Median seconds per dataset as an evaluation measures them (live_zero: send a 0 as it is)."""
    from searchlab.adapters.futhark._sizes import ServerPool

    assert isinstance(problem._pool, ServerPool)
    params = dict(config) if live_zero else problem.split(config)[0]
    server = problem._pool.get((), False)
    server.set_params(params)
    out = {}
    for name in problem.data:
        data = problem.data[name]
        problem._run_once(server, data)  # warm-up
        out[name] = statistics.median(problem._run_once(server, data) for _ in range(runs))
    return out


def bench_times(problem: Any, work: Path, config: dict[str, int] | None, runs: int) -> dict[str, float]:
    """Median seconds per dataset under ``futhark bench`` (config None: --no-tuning)."""
    from searchlab.adapters.futhark._report import write_tuning

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
        raise RuntimeError(f"futhark bench failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")
    if config is not None and f"using {stem}.fut.tuning" not in proc.stdout:
        raise RuntimeError(f"futhark bench did not use the tuning file: {proc.stdout[-400:]}")
    payload = json.loads(result.read_text())
    datasets = next(iter(payload.values()))["datasets"]
    inputs = {str(d.input): name for name, d in problem.data.items()}
    out = {}
    for key, value in datasets.items():
        name = next((n for path, n in inputs.items() if path in key), key)
        out[name] = statistics.median(value["runtimes"]) * 1e-6
    return out


def interval(values: list[float]) -> dict[str, Any]:
    from searchlab.core.measure import median_ci

    return {"median": statistics.median(values), "ci95": list(median_ci(values)), "rounds": values}


def check_program(name: str, rounds: int, runs: int, extra: dict[str, dict[str, int]]) -> dict[str, Any]:
    from searchlab.adapters.futhark._report import write_spec
    from searchlab.adapters.futhark.program import FutharkLoopmm, FutharkLud, FutharkMatmul
    from searchlab.core.problem import DeviceInfo

    problem = {"lud": FutharkLud, "matmul": FutharkMatmul, "loopmm": FutharkLoopmm}[name]()
    problem.setup(DeviceInfo())
    space = problem.tree
    untuned = {k: int(v) for k, v in space.default_config().items()}  # type: ignore[arg-type]
    configs = {"all-false": {k: int(v) for k, v in space.all_false().items()},  # type: ignore[arg-type]
               "all-true": {n: int(space.plateau_values(n)[0]) for n in space.names}, **extra}
    work = Path(tempfile.mkdtemp(prefix=f"futhark_check_{name}_"))
    shutil.copy(problem.source, work / problem.source.name)
    shutil.copy(problem.exe, work / problem.source.stem)
    write_spec(problem, work)
    labels = ["untuned", *configs]
    samples: dict[str, dict[str, list[dict[str, float]]]] = {
        tool: {label: [] for label in labels} for tool in ("searchlab", "searchlab_live_zero", "futhark_bench")}
    for n in range(rounds):
        order = labels[n % len(labels):] + labels[: n % len(labels)]
        for label in order:
            config = untuned if label == "untuned" else configs[label]
            samples["searchlab"][label].append(searchlab_times(problem, config, runs, live_zero=False))
            samples["searchlab_live_zero"][label].append(searchlab_times(problem, config, runs, live_zero=True))
            samples["futhark_bench"][label].append(bench_times(problem, work, None if label == "untuned" else config,
                                                               runs))
        print(f"{name}: round {n + 1}/{rounds} done", flush=True)
    problem.teardown()
    out: dict[str, Any] = {"thresholds": list(space.names), "untuned": untuned, "configs": configs, "ratios": {}}
    for label in configs:
        out["ratios"][label] = {}
        for tool, by_label in samples.items():
            per_dataset = {}
            for d in by_label["untuned"][0]:
                per_dataset[d] = interval([u[d] / t[d] for u, t in zip(by_label["untuned"], by_label[label])])
            total = interval([sum(u.values()) / sum(t.values()) for u, t in zip(by_label["untuned"], by_label[label])])
            out["ratios"][label][tool] = {"total": total, "datasets": per_dataset}
        a, b = out["ratios"][label]["searchlab"]["total"]["ci95"], out["ratios"][label]["futhark_bench"]["total"]["ci95"]
        out["ratios"][label]["agree"] = a[0] <= b[1] and b[0] <= a[1]
    out["untuned_ms"] = {tool: {d: statistics.median(r[d] for r in by_label["untuned"]) * 1e3
                                for d in by_label["untuned"][0]} for tool, by_label in samples.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", nargs="+", default=["lud", "matmul"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tuning", nargs="*", default=[], help="PROGRAM=FILE: a .tuning file to check too")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from searchlab.adapters.futhark._report import read_tuning

    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
    extra: dict[str, dict[str, dict[str, int]]] = {}
    for item in args.tuning:
        program, _, path = item.partition("=")
        extra.setdefault(program, {})[f"file:{Path(path).name}"] = read_tuning(path)
    started, load = time.time(), os.getloadavg()
    results = {p: check_program(p, args.rounds, args.runs, extra.get(p, {})) for p in args.programs}
    payload = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "loadavg_before": load,
                           "loadavg_after": os.getloadavg(), "pocl_threads": os.environ["POCL_MAX_PTHREAD_COUNT"],
                           "note": "run under /work/bin/cpuslot --exclusive (nothing else heavy beside it)"},
               "args": {k: str(v) for k, v in vars(args).items()}, "wall_s": time.time() - started, "programs": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1))
    for program, r in results.items():
        for label, tools in r["ratios"].items():
            cells = "  ".join(f"{tool} {v['total']['median']:.3f} [{v['total']['ci95'][0]:.3f}, "
                              f"{v['total']['ci95'][1]:.3f}]" for tool, v in tools.items() if tool != "agree")
            print(f"{program} {label}: untuned/tuned  {cells}  agree={tools['agree']}")


if __name__ == "__main__":
    main()
