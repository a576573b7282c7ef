"""A fixed set of DFT plans against FFTW_MEASURE, interleaved (issue 26, item 2: library speed).

TAG's own plans change with every search (its timings steer it), so a change to the library is judged on
*fixed* plans: the ones docs/grammar.md reports (TAG's 150-evaluation plans, DP's plans, hand-written ones).
FFTW is planned once per size from a wisdom file (FFTW_MEASURE otherwise picks between near-equal plans by
noise: 8 to 16 Gflop/s at 2^16 on this machine), so it is the same yardstick in every run. Each round times
every plan, under every ``--variants`` setting of the library (``chunk,buf_group,compact_kB,rep``;
``1,1,1048576,0`` runs as the library did before these settings existed), and FFTW, in an order reversed every
round, under the search protocol. Reported per plan and setting: ours / FFTW (median of the per-round ratios,
95 % order-statistic interval) and the speed-up over the first setting (same rounds). Run it under
``cpuslot --exclusive``.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Any

from bench.harness import Benchmark, Context

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


@dataclass(frozen=True)
class Options:
    rounds: int = 7
    only: tuple[str, ...] = ()  # substrings of plan names to run (default: all)
    variants: tuple[str, ...] = ()  # 'chunk,buf_group,compact_kB,rep' library settings compared in one run (first: base)
    batch_s: float = 0.0005
    wisdom: str = "/tmp/dft_fixed.wisdom"  # FFTW wisdom file: the same FFTW plan in every run (made on first use)


def _set_variant(lib: Any, variant: str | None) -> None:
    from searchlab.adapters.grammar.library import COMPACT_BYTES

    if variant is not None:
        chunk, group, compact_kb, rep = (int(c) for c in variant.split(","))
        lib.fl_set_options(chunk, group, rep)
        COMPACT_BYTES[0] = compact_kb << 10


def one_size(n: int, names: list[str], o: Options) -> dict[str, Any]:
    """FFTW planned once (from the wisdom file), then every plan of size n and FFTW timed in alternating
    rounds, the order reversed every round; per round ratio = FFTW's time / ours."""
    from searchlab.adapters.grammar import SEARCH_PROTOCOL, DftProblem
    from searchlab.adapters.grammar.library import FftwPlan, load
    from searchlab.core.measure import median_ci
    from searchlab.core.records import Config

    problem = DftProblem(size=n, measure=SEARCH_PROTOCOL, batch_s=o.batch_s)
    problem.setup(problem.device)
    lib = load(problem.max_codelet)
    variants: list[str | None] = list(o.variants) or [None]
    keys = [*((name, var) for name in names for var in variants), ("fftw", None)]
    times: dict[tuple[str, str | None], list[float]] = {key: [] for key in keys}
    with FftwPlan(n, "measure", wisdom=o.wisdom) as fftw:
        for r in range(o.rounds):
            for name, var in keys if r % 2 == 0 else keys[::-1]:
                if name == "fftw":
                    times[name, var].append(fftw.measure(problem.protocol, problem.batch_s, problem.clock,
                                                         problem.pin).median)
                    continue
                _set_variant(lib, var)
                m = problem.evaluate(Config(word=PLANS[name][1]))
                if m.objective is None:
                    raise SystemExit(f"dft_fixed: {name}: {m.message}")
                times[name, var].append(float(m.sensors["time_median_s"]))
    out: dict[str, Any] = {}
    fftw_s = times["fftw", None]
    for name, var in keys[:-1]:
        ratios = [f / w for f, w in zip(fftw_s, times[name, var])]
        res = {"n": n, "word": PLANS[name][1], "variant": var,
               "describe": problem.describe_config(Config(word=PLANS[name][1])),
               "ours_over_fftw_median": statistics.median(ratios), "ours_over_fftw_ci95": list(median_ci(ratios)),
               "ours_over_fftw_rounds": ratios, "ours_mflops_median": fftw.mflops(statistics.median(times[name, var])),
               "fftw_mflops_median": fftw.mflops(statistics.median(fftw_s))}
        if var is not None and var != variants[0]:
            speedup = [a / b for a, b in zip(times[name, variants[0]], times[name, var])]
            res |= {"speedup_over_first_variant": statistics.median(speedup), "speedup_ci95": list(median_ci(speedup))}
        out[name if var is None else f"{name} [{var}]"] = res
    return out


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_PROTOCOL

    results: dict[str, Any] = {"what": "fixed plans vs one FFTW_MEASURE plan per size (wisdom), interleaved",
                               "rounds": o.rounds, "plans": {},
                               "protocol": dataclasses.asdict(SEARCH_PROTOCOL) | {"batch_s": o.batch_s}}
    sizes: dict[int, list[str]] = {}
    for name, (n, _) in PLANS.items():
        if not o.only or any(s in name for s in o.only):
            sizes.setdefault(n, []).append(name)
    for n, names in sizes.items():
        for name, res in one_size(n, names, o).items():
            results["plans"][name] = res
            lo, hi = res["ours_over_fftw_ci95"]
            gain = (f"  x{res['speedup_over_first_variant']:.3f} [{res['speedup_ci95'][0]:.3f}, "
                    f"{res['speedup_ci95'][1]:.3f}]" if "speedup_ci95" in res else "")
            ctx.log(f"{name}: {res['ours_over_fftw_median']:.3f} [{lo:.3f}, {hi:.3f}]  ours "
                    f"{res['ours_mflops_median']:.0f} FFTW {res['fftw_mflops_median']:.0f} Mflop/s{gain}")
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("dft_fixed", "fixed DFT plans (and library settings) vs one FFTW_MEASURE plan per size, "
                      "interleaved", Options, run, cited_by=("docs/grammar.md",))
