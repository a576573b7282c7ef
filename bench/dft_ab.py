"""A/B of two (or more) builds of the C DFT library on fixed plans, interleaved (issue 26).

Each variant is a C source (the generated codelets + executor.c, as ``problem=dft`` compiles them; ``current``
= this tree's; ``git:COMMIT`` = the library as generated at that commit, from its _codegen.py and executor.c;
or a path to a C file) with optional extra compiler flags (``name=source@flag,flag``) and run-time settings
(``#chunk,group,rep``). Every plan is built in every variant, checked against numpy.fft, and timed by the
library's own C loop (thread CPU clock, not pinned; one 64-byte aligned input and output array for all) in
rounds, the variant order reversed every round (with ``--fftw`` FFTW_MEASURE's plan from a wisdom file too);
reported: each variant's time over the first variant's per round (median, 95 % order-statistic interval), its
pseudo-Gflop/s, and ours / FFTW per round. A development tool for library changes (docs/grammar.md).
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO
from bench.harness import Benchmark, Context

FLOPS_NOTE = "per round: the best of 3 batches of about batch_s, thread CPU clock"


@dataclass(frozen=True)
class Options:
    variants: tuple[str, ...] = ("current",)  # name=SOURCE[@flag,flag][#chunk,group,rep]; SOURCE: current | git:COMMIT | FILE.c
    plans: tuple[str, ...] = ("1024:DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))",)  # n:word
    rounds: int = 7
    batch_s: float = 0.003
    fftw: bool = False  # also time FFTW_MEASURE (wisdom /tmp/dft_fixed.wisdom)


def _source_at(commit: str) -> str:
    """The library source as generated at ``commit`` (its own _codegen.py run on its own executor.c)."""
    def show(name: str) -> str:
        return subprocess.run(["git", "show", f"{commit}:searchlab/adapters/grammar/{name}"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout

    namespace: dict[str, Any] = {"__name__": "_codegen_at_commit"}
    exec(compile(show("_codegen.py"), f"{commit}:_codegen.py", "exec"), namespace)  # that commit's generator
    return str(namespace["library_source"](32)) + show("executor.c")


def build(spec: str) -> tuple[str, ctypes.CDLL]:
    """One variant: compiled once into a cache keyed by its source and flags, opened as the problem opens it."""
    from searchlab.adapters.grammar.library import EXECUTOR, FLAGS, library_source, open_library

    spec, _, options = spec.partition("#")
    name, _, rest = spec.partition("=")
    path, _, extra = (rest or "current").partition("@")
    flags = list(FLAGS) + [f for f in extra.split(",") if f]
    if path == "current":
        source = library_source(32) + EXECUTOR.read_text()
    elif path.startswith("git:"):
        source = _source_at(path[4:])
    else:
        source = Path(path).read_text()
    digest = hashlib.sha256((source + " ".join(flags)).encode()).hexdigest()[:12]
    target = Path(os.environ.get("SEARCHLAB_CACHE", "/tmp")) / "ab" / f"{name}{options.replace(',', '_')}-{digest}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.with_suffix(".c").write_text(source)
        subprocess.run(["gcc", *flags, "-o", str(target), str(target.with_suffix(".c")), "-lm"], check=True)
    lib = open_library(target)
    if options:
        lib.fl_set_options(*(int(c) for c in options.split(",")))
    return name, lib


def one_plan(item: str, libs: list[tuple[str, ctypes.CDLL]], o: Options) -> dict[str, Any]:
    import numpy as np

    from searchlab.adapters.grammar import DftProblem
    from searchlab.adapters.grammar.library import FftwPlan, Plan, aligned
    from searchlab.core.measure import median_ci
    from searchlab.core.records import Config

    n_text, _, word = item.partition(":")
    n = int(n_text)
    problem = DftProblem(size=n)
    spec = problem.spec(Config(word=word))
    x = aligned(np.random.default_rng(0).standard_normal(2 * n).view(np.complex128))
    ref = np.fft.fft(x)
    y = aligned(np.zeros_like(x))  # one output array for all variants: the same addresses
    plans, reps = [], []
    for name, lib in libs:
        plan = Plan(lib, spec, problem.twiddles)
        lib.fl_set_clock(1)
        plan.run_dft(x, y, (1, 1), (1, 1, 1), 1)
        err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        if not err < 1e-10:
            raise SystemExit(f"dft_ab: {name} {word}: relative error {err:.3g}")
        reps.append(max(1, math.ceil(o.batch_s / max(plan.run_dft(x, y, (1, 1), (1, 1, 1), 3) / 3, 1e-9))))
        plans.append(plan)
    times: list[list[float]] = [[] for _ in range(len(libs) + 1)]
    fftw = FftwPlan(n, "measure", wisdom="/tmp/dft_fixed.wisdom") if o.fftw else None
    lib0 = libs[0][1]
    execute = ctypes.cast(fftw.fftw.fftw_execute, ctypes.c_void_p).value if fftw else None
    fftw_reps = max(1, math.ceil(o.batch_s / max(lib0.fl_run_fn(execute, fftw.plan, 3) / 3, 1e-9))) if fftw else 1
    order = list(range(len(libs) + (fftw is not None)))
    for r in range(o.rounds):
        for i in order if r % 2 == 0 else order[::-1]:
            if i == len(libs) and fftw is not None:
                best = min(lib0.fl_run_fn(execute, fftw.plan, fftw_reps) / fftw_reps for _ in range(3))
            else:
                best = min(plans[i].run_dft(x, y, (1, 1), (1, 1, 1), reps[i]) / reps[i] for _ in range(3))
            times[i].append(best)
    flops = 5 * n * math.log2(n)
    entry: dict[str, Any] = {"n": n, "word": word, "describe": problem.describe_config(Config(word=word)),
                             "seconds": {}, "gflops_median": {}, "speed_vs_first": {}}
    for i, (name, _) in enumerate(libs):
        ratio = [b / a for a, b in zip(times[i], times[0])]
        entry["seconds"][name] = times[i]
        entry["gflops_median"][name] = flops / statistics.median(times[i]) / 1e9
        entry["speed_vs_first"][name] = [statistics.median(ratio), *median_ci(ratio)]
        if fftw is not None:
            ours = [f / w for f, w in zip(times[-1], times[i])]
            entry.setdefault("ours_over_fftw", {})[name] = [statistics.median(ours), *median_ci(ours)]
    if fftw is not None:
        entry["seconds"]["fftw"] = times[-1]
        entry["gflops_median"]["fftw"] = flops / statistics.median(times[-1]) / 1e9
        fftw.__exit__()
    for plan in plans:
        plan.close()
    return entry


def run(ctx: Context, o: Options) -> dict[str, Any]:
    results: dict[str, Any] = {"what": "fixed plans, library builds A/B (+ FFTW_MEASURE from wisdom), interleaved",
                               "rounds": o.rounds, "batch_s": o.batch_s, "variants": list(o.variants),
                               "timing": FLOPS_NOTE, "plans": []}
    libs = [build(spec) for spec in o.variants]
    for item in o.plans:
        entry = one_plan(item, libs, o)
        results["plans"].append(entry)
        ctx.log(f"{entry['describe']}: " + ", ".join(
            f"{name} {g:.2f} Gflop/s (x{entry['speed_vs_first'].get(name, [1.0])[0]:.3f})"
            for name, g in entry["gflops_median"].items()))
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("dft_ab", "A/B of builds of the C DFT library on fixed plans, interleaved (+ FFTW_MEASURE)",
                      Options, run, cited_by=("docs/grammar.md",))
