"""Repeatability of a measurement: the fixed 5-launch median vs the shared protocol.

On ``fir`` (pocl, one pinned core, as the serial executor measures), a few configurations are measured again
and again, the two protocols interleaved (A, B, A, B, ...) so that the machine's load hits both alike: A = the
former fixed median of 5 launches, B = the default ``MeasurementProtocol`` (>= 5 launches, until 50 ms measured
and the median's 95 % interval is within 2 %, at most 50). Per configuration and protocol: the spread of the
objective across repeats (CV, with a 95 % bootstrap interval, seeded), the launches used and the time spent.
A difference whose intervals overlap is reported as no difference.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.common import last_core
from bench.harness import Benchmark, Context

CONFIGS = ({"banks": 2, "accesses": 4}, {"banks": 4, "accesses": 8}, {"banks": 8, "accesses": 2})
PROTOCOLS: dict[str, dict[str, Any]] = {
    "fixed5": {"min_runs": 5, "max_runs": 5, "min_time_s": 0.0, "target_rel_ci": 0.0, "warmup": 1}, "protocol": {}}


@dataclass(frozen=True)
class Options:
    repeats: int = 15
    seed: int = 0  # of the bootstrap


def cv_interval(values: list[float], seed: int, n: int = 2000) -> list[float]:
    data = np.asarray(values)
    boot = np.random.default_rng(seed).choice(data, size=(n, len(data)), replace=True)
    cvs = boot.std(axis=1, ddof=1) / boot.mean(axis=1)
    return [float(data.std(ddof=1) / data.mean()), float(np.percentile(cvs, 2.5)), float(np.percentile(cvs, 97.5))]


def measure(ctx: Context, repeats: int) -> dict[str, dict[str, list[tuple[float, int, float]]]]:
    from searchlab.adapters.knobs import Fir
    from searchlab.core.measure import protocol_from
    from searchlab.core.opencl import default_device
    from searchlab.core.problem import DeviceInfo
    from searchlab.core.records import Config
    from searchlab.run.execution import limit_threads

    cores = (last_core(),)
    limit_threads(DeviceInfo(kind="cpu", cores=cores))
    problem = Fir(arch="none")
    problem.setup(default_device(cores=cores))
    raw: dict[str, dict[str, list[tuple[float, int, float]]]] = {}
    try:
        for c in CONFIGS:
            config, key = Config(c), f"banks={c['banks']},accesses={c['accesses']}"
            raw[key] = {name: [] for name in PROTOCOLS}
            problem.evaluate(config)  # build and warm once
            for _ in range(repeats):
                for name, options in PROTOCOLS.items():
                    problem.protocol = protocol_from(options)
                    t0 = time.perf_counter()
                    m = problem.evaluate(config)
                    if m.objective is None:
                        raise SystemExit(f"protocol: fir {key} failed: {m.message}")
                    raw[key][name].append((m.objective, len(m.samples), time.perf_counter() - t0))
            ctx.log(f"{key}: {repeats} repeats of both protocols")
    finally:
        problem.teardown()
    return raw


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds([o.seed])
    raw = measure(ctx, o.repeats)
    results: dict[str, Any] = {}
    for key, per in raw.items():
        results[key] = {name: {"objective_median": float(np.median([v[0] for v in vals])),
                               "cv_across_repeats": cv_interval([v[0] for v in vals], o.seed),
                               "launches_mean": float(np.mean([v[1] for v in vals])),
                               "seconds_per_measurement": float(np.mean([v[2] for v in vals]))}
                        for name, vals in per.items()}
        a, b = results[key]["fixed5"]["cv_across_repeats"], results[key]["protocol"]["cv_across_repeats"]
        results[key]["verdict"] = ("protocol more repeatable" if b[2] < a[1] else
                                   "fixed5 more repeatable" if a[2] < b[1] else "no difference (intervals overlap)")
        ctx.log(f"{key}: CV fixed5 {a[0]:.4f} [{a[1]:.4f}, {a[2]:.4f}], protocol {b[0]:.4f} [{b[1]:.4f}, {b[2]:.4f}]: "
                f"{results[key]['verdict']}")
    return {"problem": "fir (n=16384, taps=128, arch=none), pocl, one pinned core", "repeats": o.repeats,
            "protocols": PROTOCOLS, "results": results, "raw": raw}


BENCHMARK = Benchmark("protocol", "repeatability of a measurement on fir: fixed 5-launch median vs the shared "
                      "protocol, interleaved", Options, run, cited_by=("docs/measurement.md",))
