"""A fixed set of DFT plans against FFTW_MEASURE, interleaved (issue 26, item 2: library speed).

TAG's own plans change with every search (its timings steer it), so a change to the library
is judged on *fixed* plans: the ones docs/grammar.md reports (TAG's 150-evaluation plans,
DP's plans, hand-written ones). FFTW is planned once per size from a wisdom file (FFTW_MEASURE
otherwise picks between near-equal plans by noise: 8 to 16 Gflop/s at 2^16 on this machine),
so it is the same yardstick in every run. Each round times every plan, under every
``--variants`` setting of the library (``chunk,buf_group,compact_kB,rep``; ``1,1,1048576,0``
runs as the library did before these settings existed), and FFTW, in an order reversed every
round, under the protocol of ``bench/dft_fftw.py``. Reported per plan and setting: ours / FFTW
(median of the per-round ratios, 95 % order-statistic interval) and the speed-up over the
first setting (same rounds):

    OMP_NUM_THREADS=1 /work/bin/cpuslot --exclusive python bench/dft_fixed.py \
        --variants 1,1,1048576,0 8,0,256,1 --out bench/results/dft_fixed.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROTOCOL = {"min_runs": 3, "max_runs": 10, "min_time_s": 0.003, "target_rel_ci": 0.03, "warmup": 1}

PLANS: dict[str, tuple[int, str]] = {
    "1024 CT(32v, 32v)": (1024, "DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))"),
    "65536 hand CT(8v, CT(8v, CT(32v, 32v)))": (
        65536, "DFT_65536(TW_8(t1v_8),DFT_8192(TW_8(t1v_8),DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))))"),
    "65536 TAG run 2": (
        65536, "DFT_65536(TW_4(t1_4),DFT_16384(TW_4(t1v_4),DFT_4096(TW_512(buf,DFT_512(TW_4(t1v_4),"
               "DFT_128(TW_32(t1v_32),DFT_4(n1v_4)))),DFT_8(n1_8))))"),
    "65536 DP": (
        65536, "DFT_65536(TW_4(t1v_4),DFT_16384(TW_4(t1v_4),DFT_4096(TW_4(t1v_4),DFT_1024(TW_128(buf,"
               "DFT_128(TW_16(t1v_16),DFT_8(n1v_8))),DFT_8(n1v_8)))))"),
    "2^20 hand CT(32v, CT(32v, CT(32v, 32v)))": (
        2**20, "DFT_1048576(TW_32(t1v_32),DFT_32768(TW_32(t1v_32),DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))))"),
    "2^20 TAG run 2": (
        2**20, "DFT_1048576(TW_16(t1_16),DFT_65536(TW_8(t1v_8),DFT_8192(TW_2048(buf,DFT_2048(TW_4(buf,DFT_4(n1_4)),"
               "DFT_512(TW_2(buf,DFT_2(n1v_2)),DFT_256(TW_16(buf,DFT_16(TW_8(t1v_8),DFT_2(n1_2))),DFT_16(n1_16))))),"
               "DFT_4(n1v_4))))"),
    "2^20 DP": (
        2**20, "DFT_1048576(TW_8(t1v_8),DFT_131072(TW_65536(buf,DFT_65536(TW_4(t1_4),DFT_16384(TW_16(t1v_16),"
               "DFT_1024(TW_256(buf,DFT_256(TW_16(t1v_16),DFT_16(n1v_16))),DFT_4(n1_4))))),DFT_2(n1v_2)))"),
    "65536 TAG mid": (  # TAG's plan after the chunk / compact / buffer changes (seed 0, 150 evaluations)
        65536, "DFT_65536(TW_8(t1v_8),DFT_8192(TW_8(buf,DFT_8(n1v_8)),DFT_1024(TW_8(buf,DFT_8(TW_2(t1v_2),"
               "DFT_4(n1v_4))),DFT_128(TW_32(t1v_32),DFT_4(n1_4)))))"),
    "2^20 TAG mid": (
        2**20, "DFT_1048576(TW_32(t1v_32),DFT_32768(TW_8(t1_8),DFT_4096(TW_512(buf,DFT_512(TW_2(t1_2),DFT_256(TW_32(t1v_32),"
               "DFT_8(n1_8)))),DFT_8(TW_2(t1v_2),DFT_4(n1_4)))))"),
    "100000 TAG mid": (
        100000, "DFT_100000(TW_32(t1_32),DFT_3125(TW_5(t1v_5),DFT_625(TW_5(t1_5),DFT_125(TW_5(t1v_5),DFT_25(n1_25)))))"),
    "1024 TAG final": (1024, "DFT_1024(TW_32(t1v_32),DFT_32(TW_4(t1v_4),DFT_8(n1_8)))"),
    "65536 TAG final": (
        65536, "DFT_65536(TW_128(buf,DFT_128(TW_4(t1v_4),DFT_32(n1v_32))),DFT_512(TW_4(t1_4),DFT_128(TW_16(t1v_16),"
               "DFT_8(n1_8))))"),
    "3000 TAG final": (3000, "DFT_3000(TW_24(t1v_24),DFT_125(TW_25(t1v_25),DFT_5(n1_5)))"),
    "100000 TAG run 2": (
        100000, "DFT_100000(TW_25(t1_25),DFT_4000(TW_32(t1v_32),DFT_125(TW_5(t1v_5),DFT_25(TW_5(t1v_5),DFT_5(n1_5)))))"),
}


def one_size(n: int, names: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """FFTW planned once (from the wisdom file), then every plan of size n and FFTW timed in
    alternating rounds, the order reversed every round; per round ratio = FFTW's time / ours."""
    import numpy as np

    from searchlab.adapters.grammar import DftProblem, _clib
    from searchlab.adapters.grammar._fftw import FftwPlan
    from searchlab.core.measure import MeasurementProtocol, median_ci
    from searchlab.core.records import Config

    problem = DftProblem(size=n, measure=MeasurementProtocol(**PROTOCOL), batch_s=args.batch_s)  # type: ignore[arg-type]
    problem.setup(problem.device)
    lib = _clib.load(problem.max_codelet)
    variants = args.variants or [None]
    keys = [*((name, var) for name in names for var in variants), ("fftw", None)]
    times: dict[tuple[str, str | None], list[float]] = {key: [] for key in keys}
    with FftwPlan(n, "measure", wisdom=str(args.wisdom)) as fftw:
        for r in range(args.rounds):
            for name, var in (keys if r % 2 == 0 else keys[::-1]):
                if name == "fftw":
                    times[name, var].append(fftw.measure(problem.protocol, problem.batch_s, problem.clock,
                                                         problem.pin).median)
                    continue
                if var is not None:
                    chunk, group, compact_kb, rep = (int(c) for c in var.split(","))
                    lib.fl_set_options(chunk, group, rep)
                    _clib.COMPACT_BYTES[0] = compact_kb << 10
                m = problem.evaluate(Config(word=PLANS[name][1]))
                if m.objective is None:
                    raise SystemExit(f"{name}: {m.message}")
                times[name, var].append(float(m.sensors["time_median_s"]))
    out: dict[str, Any] = {}
    fftw_s = times["fftw", None]
    for name, var in keys[:-1]:
        ratios = [f / o for f, o in zip(fftw_s, times[name, var])]
        first = times[name, variants[0]]
        res = {"n": n, "word": PLANS[name][1], "variant": var,
               "describe": problem.describe_config(Config(word=PLANS[name][1])),
               "ours_over_fftw_median": float(np.median(ratios)), "ours_over_fftw_ci95": list(median_ci(ratios)),
               "ours_over_fftw_rounds": ratios, "ours_mflops_median": fftw.mflops(float(np.median(times[name, var]))),
               "fftw_mflops_median": fftw.mflops(float(np.median(fftw_s)))}
        if var is not None and var != variants[0]:
            speedup = [a / b for a, b in zip(first, times[name, var])]
            res |= {"speedup_over_first_variant": float(np.median(speedup)),
                    "speedup_ci95": list(median_ci(speedup))}
        out[name if var is None else f"{name} [{var}]"] = res
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="*", default=None, help="substrings of plan names to run")
    parser.add_argument("--variants", nargs="*", default=None,
                        help="'chunk,buf_group,compact_kB,rep' library settings, compared in one run (first: base)")
    parser.add_argument("--batch-s", type=float, default=0.0005)
    parser.add_argument("--wisdom", type=Path, default=Path("/tmp/dft_fixed.wisdom"),
                        help="FFTW wisdom file: the same FFTW plan in every run (created on first use)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "dft_fixed.json")
    args = parser.parse_args()
    load, started = os.getloadavg(), time.time()
    out: dict[str, Any] = {"what": "fixed plans vs one FFTW_MEASURE plan per size (wisdom), interleaved",
                           "rounds": args.rounds, "protocol": PROTOCOL | {"batch_s": args.batch_s}, "plans": {}}
    sizes: dict[int, list[str]] = {}
    for name, (n, _) in PLANS.items():
        if not args.only or any(s in name for s in args.only):
            sizes.setdefault(n, []).append(name)
    for n, names in sizes.items():
        for name, res in one_size(n, names, args).items():
            out["plans"][name] = res
            lo, hi = res["ours_over_fftw_ci95"]
            gain = (f"  x{res['speedup_over_first_variant']:.3f} [{res['speedup_ci95'][0]:.3f}, "
                    f"{res['speedup_ci95'][1]:.3f}]" if "speedup_ci95" in res else "")
            print(f"{name}: {res['ours_over_fftw_median']:.3f} [{lo:.3f}, {hi:.3f}]  ours {res['ours_mflops_median']:.0f} "
                  f"FFTW {res['fftw_mflops_median']:.0f} Mflop/s{gain}", flush=True)
    out["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_before": list(load),
                      "load_average_after": list(os.getloadavg()), "elapsed_s": time.time() - started}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
