"""A/B of two (or more) builds of the C DFT library on fixed plans, interleaved (issue 26).

Each variant is a C source file (the generated codelets + executor.c, as ``_clib.build``
compiles it; ``current`` = this tree's) and compiler flags. Every plan is built in every
variant, checked against numpy.fft, and timed by the library's own C loop (thread CPU
clock, not pinned; one 64-byte aligned input and output array for all) in rounds, the variant
order reversed every round (with ``--fftw`` FFTW_MEASURE's plan from a wisdom file too);
reported: each variant's time over the first variant's per round (median, 95 % order-statistic
interval), its pseudo-Gflop/s, and ours / FFTW per round. A variant ``git:COMMIT`` is the
library as generated at that commit (its _codegen.py and executor.c).

    /work/bin/cpuslot python bench/dft_ab.py --fftw --variants before=git:081f390 after=current \
        --plans 1024:'DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))' --out bench/results/dft_ab.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import ctypes
import hashlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build(source: str, flags: list[str], tag: str) -> ctypes.CDLL:
    from searchlab.adapters.grammar import _clib

    digest = hashlib.sha256((source + " ".join(flags)).encode()).hexdigest()[:12]
    target = Path(os.environ.get("SEARCHLAB_CACHE", "/tmp")) / "ab" / f"{tag}-{digest}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        c_file = target.with_suffix(".c")
        c_file.write_text(source)
        subprocess.run(["gcc", *flags, "-o", str(target), str(c_file), "-lm"], check=True)
    saved = _clib.build
    _clib.build = lambda max_codelet, cc="gcc": target  # type: ignore[assignment]
    try:
        _clib.load.cache_clear()
        return _clib.load(32)
    finally:
        _clib.build = saved  # type: ignore[assignment]
        _clib.load.cache_clear()


def main() -> None:
    from searchlab.adapters.grammar import DftProblem, _clib, _codegen
    from searchlab.adapters.grammar._fftw import FftwPlan
    from searchlab.core.measure import median_ci
    from searchlab.core.records import Config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", required=True,
                        help="name=path.c[@flag,flag] or 'current' (this tree's source)")
    parser.add_argument("--plans", nargs="+", required=True, help="n:word")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-s", type=float, default=0.003)
    parser.add_argument("--out", type=Path, default=None, help="write the per-round times and ratios here (JSON)")
    parser.add_argument("--fftw", action="store_true", help="also time FFTW_MEASURE (wisdom /tmp/dft_fixed.wisdom)")
    args = parser.parse_args()
    load, started = os.getloadavg(), time.time()
    results: dict[str, Any] = {"what": "fixed plans, library builds A/B (+ FFTW_MEASURE from wisdom), interleaved",
                               "rounds": args.rounds, "batch_s": args.batch_s, "variants": args.variants,
                               "timing": "per round: the best of 3 batches of about batch_s, thread CPU clock",
                               "plans": []}
    libs: list[tuple[str, ctypes.CDLL]] = []
    for spec in args.variants:
        spec, _, options = spec.partition("#")  # name=path@flags#chunk,group,rep (fl_set_options)
        name, _, rest = spec.partition("=")
        path, _, extra = (rest or "current").partition("@")
        flags = list(_clib.FLAGS) + [f for f in extra.split(",") if f]
        if path == "current":
            source = _codegen.library_source(32) + _clib.EXECUTOR.read_text()
        elif path.startswith("git:"):
            def show(name: str, commit: str = path[4:]) -> str:
                return subprocess.run(["git", "show", f"{commit}:searchlab/adapters/grammar/{name}"], cwd=ROOT,
                                      capture_output=True, text=True, check=True).stdout
            namespace: dict[str, Any] = {"__name__": "_codegen_at_commit"}
            exec(compile(show("_codegen.py"), "_codegen.py", "exec"), namespace)
            source = namespace["library_source"](32) + show("executor.c")
        else:
            source = Path(path).read_text()
        lib = build(source, flags, name + options.replace(",", "_"))
        if options:
            lib.fl_set_options(*(int(c) for c in options.split(",")))
        libs.append((name, lib))
    for item in args.plans:
        n_text, _, word = item.partition(":")
        n = int(n_text)
        problem = DftProblem(size=n)
        spec = problem.spec(Config(word=word))
        x = _clib.aligned(np.random.default_rng(0).standard_normal(2 * n).view(np.complex128))
        ref = np.fft.fft(x)
        plans, reps = [], []
        y = _clib.aligned(np.zeros_like(x))  # one output array for all variants: the same addresses
        for name, lib in libs:
            plan = _clib.Plan(lib, spec, problem.twiddles)
            lib.fl_set_clock(1)
            plan.run_dft(x, y, (1, 1), (1, 1, 1), 1)
            err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
            if not err < 1e-10:
                raise SystemExit(f"{name} {word}: relative error {err:.3g}")
            once = max(plan.run_dft(x, y, (1, 1), (1, 1, 1), 3) / 3, 1e-9)
            plans.append((plan, y))
            reps.append(max(1, math.ceil(args.batch_s / once)))
        times: list[list[float]] = [[] for _ in range(len(libs) + 1)]
        order = list(range(len(libs) + bool(args.fftw)))
        fftw = FftwPlan(n, "measure", wisdom="/tmp/dft_fixed.wisdom") if args.fftw else None
        execute = ctypes.cast(fftw.fftw.fftw_execute, ctypes.c_void_p).value if fftw else None
        lib0 = libs[0][1]
        if fftw:
            fftw_reps = max(1, math.ceil(args.batch_s / max(lib0.fl_run_fn(execute, fftw.plan, 3) / 3, 1e-9)))
        for r in range(args.rounds):
            for i in (order if r % 2 == 0 else order[::-1]):
                if i == len(libs):
                    assert fftw is not None
                    best = min(lib0.fl_run_fn(execute, fftw.plan, fftw_reps) / fftw_reps for _ in range(3))
                else:
                    plan, y = plans[i]
                    best = min(plan.run_dft(x, y, (1, 1), (1, 1, 1), reps[i]) / reps[i] for _ in range(3))
                times[i].append(best)
        flops = 5 * n * math.log2(n)
        line = [f"{n} {problem.describe_config(Config(word=word)).split(' = ', 1)[1]}"]
        for i, (name, _) in enumerate(libs):
            ratio = [b / a for a, b in zip(times[i], times[0])]
            lo, hi = median_ci(ratio)
            line.append(f"  {name}: {flops / float(np.median(times[i])) / 1e9:.2f} Gflop/s, "
                        f"speed vs first {float(np.median(ratio)):.3f} [{lo:.3f}, {hi:.3f}]")
        if fftw:
            line.append(f"  FFTW {flops / float(np.median(times[-1])) / 1e9:.2f} Gflop/s; ours/FFTW: " + ", ".join(
                "{} {:.3f} [{:.3f}, {:.3f}]".format(name, float(np.median([f / o for f, o in zip(times[-1], times[i])])),
                                                    *median_ci([f / o for f, o in zip(times[-1], times[i])]))
                for i, (name, _) in enumerate(libs)))
            fftw.__exit__()
        print("\n".join(line), flush=True)
        entry: dict[str, Any] = {"n": n, "word": word, "describe": line[0], "seconds": {}, "gflops_median": {}}
        for i, (name, _) in enumerate(libs):
            entry["seconds"][name] = times[i]
            entry["gflops_median"][name] = flops / float(np.median(times[i])) / 1e9
            ratio = [b / a for a, b in zip(times[i], times[0])]
            entry.setdefault("speed_vs_first", {})[name] = [float(np.median(ratio)), *median_ci(ratio)]
            if fftw:
                ours = [f / o for f, o in zip(times[-1], times[i])]
                entry.setdefault("ours_over_fftw", {})[name] = [float(np.median(ours)), *median_ci(ours)]
        if fftw:
            entry["seconds"]["fftw"] = times[-1]
            entry["gflops_median"]["fftw"] = flops / float(np.median(times[-1])) / 1e9
        results["plans"].append(entry)
        if args.out:
            results["machine"] = {"load_average_before": list(load), "load_average_after": list(os.getloadavg()),
                                  "elapsed_s": time.time() - started, "cpus": os.cpu_count()}
            args.out.write_text(json.dumps(results, indent=1))
        for plan, _ in plans:
            plan.close()


if __name__ == "__main__":
    main()
