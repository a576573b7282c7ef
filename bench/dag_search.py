"""TAG vs MC vs UCT vs random vs DP on our C DFT library, and FFTW 3 (paper 002 §5, Fig. 7(a), 8).

For each size n (powers of two and any other n: mixed radix, Good-Thomas, Rader, Bluestein), every word any
searcher proposes is measured *once* by the ``problem=dft`` evaluation (C plan, checked against numpy.fft,
timed in C under the search protocol, thread CPU clock, pinned) and kept in a table that later proposals
replay, so all searchers and seeds see the same numbers (bench/common.py). Search time (``--clock wall``, as
paper 002 counts it; run under ``cpuslot --exclusive``) = the recorded evaluation times (plan + check +
timing) + the searcher's own ask/tell time. DP runs once per sub-problem context (strided: sub-problems timed
where a parent split runs them; and standalone), every sub-problem timing counted as an evaluation.

"Reaches DP" = best >= (1 - tolerance) x DP's best (3 %: about the median 95 % interval of one measurement);
each searcher's best plan per size is re-measured interleaved with DP's plan (``--confirm`` rounds) and the
ratio reported with its 95 % interval. Fig. 7(a): TAG's s and δ at ``--fig7-size``. Fig. 8(c): FFTW_MEASURE
(and FFTW_PATIENT up to ``--patient-max``) under the problem's own protocol, and FFTW's plan timed interleaved
with our best re-measured plan: the ratio with its 95 % interval. The report is the figure (SVG) and the
markdown table of docs/grammar.md (``<out>_table.md``): ``python -m bench report dag_search [FILE]``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bench.common.dft import Table, Trace, confirm_plans, dft_problem, drive
from bench.common.stats import mann_whitney, summary
from bench.harness import Benchmark, Context, UsageError
from searchlab.core.records import Config
from searchlab.study.analysis.stats import holm

SEARCHERS = ("tag", "mc", "uct", "random", "tag_canonical")


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (2**10, 2**12, 2**14, 2**16, 2**18, 2**20, 3000)
    clock: Literal["wall", "cpu"] = "wall"  # search time: wall clock or thread CPU
    seeds: int = 10
    budget: int = 100  # evaluations per searcher run at most
    searchers: tuple[str, ...] = ("tag", "mc", "uct", "random")  # of SEARCHERS
    dp_contexts: tuple[str, ...] = ("strided", "standalone")
    tolerance: float = 0.03
    confirm: int = 7  # interleaved re-measurement rounds
    fig7_size: int = 2**12
    s_values: tuple[int, ...] = (5, 10, 30, 100)
    delta_values: tuple[float, ...] = (0.01, 0.1, 0.5)
    patient_max: int = 2**12  # FFTW_PATIENT only up to this n (plan time)
    measure_max: int = 2**22  # FFTW_MEASURE only up to this n (plan time)
    big_from: int = 2**18  # from this n: big_budget and big_searchers
    big_budget: int = 25
    big_searchers: tuple[str, ...] = ("tag", "mc")
    max_runs: int = 10  # the search protocol's runs per measurement at most


def searcher(name: str, problem: Any, seed: int, **options: Any) -> Any:
    from searchlab.searchers import McSearcher, RandomSearcher, TagSearcher, UctSearcher

    classes = {"tag": TagSearcher, "mc": McSearcher, "uct": UctSearcher, "random": RandomSearcher,
               "tag_canonical": TagSearcher}
    if name == "tag_canonical":
        options = {"arcs": "canonical", **options}
    return classes[name](problem.space, direction=problem.direction, seed=seed, **options)


def searcher_runs(name: str, table: Table, o: Options, dp_best: float, dp_time: float,
                  **settings: Any) -> dict[str, Any]:
    target = (1 - o.tolerance) * dp_best
    runs: list[dict[str, Any]] = []
    for seed in range(o.seeds):
        trace = drive(searcher(name, table.problem, seed, **settings), table, o.budget,
                      lambda tr: tr.best[-1] >= target and tr.time_s[-1] >= dp_time)
        runs.append(_run_row(trace, seed, target, dp_time))
    overhead = [float(r["overhead_s"]) / max(float(r["evaluation_s"]), 1e-9) for r in runs]
    return {"evals_to_dp": summary([r["evals_to_dp"] for r in runs]),
            "time_to_dp_s": summary([r["time_to_dp_s"] for r in runs]),
            "best_at_dp_time_over_dp": summary([float(r["best_at_dp_time"]) / dp_best for r in runs]),
            "final_best_over_dp": summary([float(r["final_best"]) / dp_best for r in runs]),
            "overhead_fraction": summary(overhead), "runs": runs}


def _run_row(trace: Trace, seed: int, target: float, dp_time: float) -> dict[str, Any]:
    i = trace.first(target)
    return {"seed": seed, "evaluations": len(trace.best), "final_best": trace.best[-1], "best_word": trace.best_word,
            "evals_to_dp": None if i is None else i + 1, "time_to_dp_s": None if i is None else trace.time_s[i],
            "best_at_dp_time": trace.best_at(dp_time), "overhead_s": trace.overhead_s,
            "evaluation_s": trace.time_s[-1] - trace.overhead_s, "curve": trace.curve()}


def comparisons(searchers: Mapping[str, Any]) -> dict[str, Any]:
    """TAG against every other searcher: best at the end and at DP's time (÷ DP's best), Mann-Whitney."""
    out: dict[str, Any] = {}
    for name, other in searchers.items():
        if "tag" not in searchers or name == "tag":
            continue
        for key in ("final_best", "best_at_dp_time"):
            out[f"tag_vs_{name}:{key}"] = mann_whitney([r[key] for r in searchers["tag"]["runs"]],
                                                       [r[key] for r in other["runs"]])
    return out


def bench_size(ctx: Context, n: int, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar.library import problem_reference, versus_fftw
    from searchlab.searchers import DpSearcher

    started = time.perf_counter()
    if n >= o.big_from:
        o = dataclasses.replace(o, budget=o.big_budget, searchers=o.big_searchers)
    tables = {c: Table(dft_problem(n, c, max_runs=o.max_runs), o.clock) for c in o.dp_contexts}
    main = tables[o.dp_contexts[0]]
    for other in list(tables.values())[1:]:
        other.rows = main.rows  # full-size words measured once; sub-problem rows differ by context (key)
    out: dict[str, Any] = {"n": n, "words": main.problem.space.count_sinks(), "dp": {}, "searchers": {}}
    for context, table in tables.items():
        dp = drive(DpSearcher(table.problem.space, direction=table.problem.direction), table, 10**6)
        out["dp"][context] = {"evaluations": len(dp.best), "time_s": dp.time_s[-1], "best_mflops": dp.best[-1],
                              "plan": dp.best_word, "subproblem_evaluations": sum(dp.sub)}
    ref = out["dp"][o.dp_contexts[0]]
    for name in o.searchers:
        s = out["searchers"][name] = searcher_runs(name, main, o, ref["best_mflops"], ref["time_s"])
        ctx.log(f"n={n} {name}: evaluations to DP median {s['evals_to_dp']['median']} ({s['evals_to_dp']['reached']}"
                f"/{o.seeds}), final/DP {s['final_best_over_dp']['median']:.3f}")
    out["tests"] = comparisons(out["searchers"])
    if n == o.fig7_size:
        out["fig7a"] = {f"{k}={v}": searcher_runs("tag", main, o, ref["best_mflops"], ref["time_s"], **{k: v})
                        ["final_best_over_dp"] for k, values in (("s", o.s_values), ("delta", o.delta_values))
                        for v in values}
    bests = {name: max(s["runs"], key=lambda r: r["final_best"])["best_word"] for name, s in out["searchers"].items()}
    bests |= {f"dp_{c}": d["plan"] for c, d in out["dp"].items()}
    out["confirm"] = confirm_plans(main.problem, bests, f"dp_{o.dp_contexts[0]}", o.confirm)
    limits = {"estimate": 99, "measure": o.measure_max, "patient": o.patient_max}
    out["fftw"] = [problem_reference(main.problem, flag) for flag, top in limits.items() if n <= top]
    best = max((v for v in out["confirm"].values() if isinstance(v, dict)), key=lambda v: v["mflops_median"])
    flag = "measure" if n <= o.measure_max else "estimate"
    out["versus_fftw"] = versus_fftw(main.problem, Config(word=best["word"]), flag, rounds=o.confirm)
    out["table"] = {"timed": len(main.rows), "timing_cpu_s": main.timing_s, "timing_wall_s": main.wall_s}
    out["budget"], out["searchers_run"], out["bench_s"] = o.budget, list(o.searchers), time.perf_counter() - started
    return out


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_BATCH_S, SEARCH_PROTOCOL

    unknown = sorted(set(o.searchers + o.big_searchers) - set(SEARCHERS))
    if unknown:
        raise UsageError(f"dag_search: unknown searchers {unknown} (known: {', '.join(SEARCHERS)})")
    ctx.used_seeds(range(o.seeds))
    protocol = dataclasses.asdict(SEARCH_PROTOCOL) | {"max_runs": o.max_runs, "batch_s": SEARCH_BATCH_S}
    results: dict[str, Any] = {
        "what": "TAG/MC/UCT/random vs DP on the C DFT library's grammar (paper 002 Fig. 7(a), 8), and FFTW 3",
        "protocol": protocol, "clock": o.clock, "tolerance": o.tolerance, "seeds": o.seeds, "budget": o.budget,
        "searchers": list(o.searchers), "sizes": []}
    for n in o.sizes:
        ctx.log(f"DFT {n}")
        results["sizes"].append(bench_size(ctx, n, o))
        ctx.checkpoint(results)  # a stopped bench keeps every finished size
    return results


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    table = "\n".join(rows(results)) + "\n"
    ctx.artefact("_table.md").write_text(table, encoding="utf-8")
    print(table)
    plot(ctx, results)


# -- the table of docs/grammar.md ------------------------------------------------------------------------------


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _med(s: Mapping[str, Any], digits: int = 2) -> str:
    lo, hi = s.get("median_ci95") or (None, None)
    return f"{_f(s.get('median'), digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def tenth(searcher: Mapping[str, Any], dp: Mapping[str, Any]) -> dict[str, Any]:
    """Best so far at a tenth of DP's wall time ÷ DP's best, per seed (paper 002 Fig. 8(b)), read from each
    run's stored curve (every k-th evaluation, so a lower bound by at most k - 1 evaluations)."""
    values = []
    for run_ in searcher["runs"]:
        c = run_["curve"]
        within = [b for b, t in zip(c["best"], c["time_s"]) if t <= dp["time_s"] / 10]
        values.append((within[-1] if within else 0.0) / dp["best_mflops"])
    return summary(values)


def rows(results: Mapping[str, Any]) -> list[str]:
    """One row per size: DP's run, evaluations and seconds to DP's quality, best at DP's time, at a tenth of
    it and at the end, re-measured plans, TAG-vs-MC p-values (Holm over every test in the file), FFTW."""
    names = list(results["searchers"])
    raw = {f"{s['n']}:{k}": float(t["p_value"]) for s in results["sizes"] for k, t in s["tests"].items()
           if t.get("p_value") is not None}
    adjusted = dict(zip(raw, holm(list(raw.values()))))
    head = ("| n | DP: evaluations, wall s | evaluations to DP (-3 %), median: " + " / ".join(names)
            + " | wall s to DP, median [95 % CI]: " + " / ".join(names)
            + f" | seeds reaching DP (of {results['seeds']}) | best at DP's wall time ÷ DP: " + " / ".join(names)
            + " | best at a tenth of DP's wall time ÷ DP: " + " / ".join(names)
            + " | best at the end ÷ DP: " + " / ".join(names)
            + " | re-measured best plan ÷ DP's plan [95 % CI]: " + " / ".join(n for n in names if n != "random")
            + " | TAG vs MC, p (Holm): at DP's time / at the end | best plan ÷ FFTW_MEASURE [95 % CI] (plan) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in results["sizes"]:
        dp, srch = next(iter(s["dp"].values())), s["searchers"]
        remeasured = [f"{_f(c['over_reference_median'])} [{_f(c['over_reference_ci95'][0])}, "
                      f"{_f(c['over_reference_ci95'][1])}]" for n, c in s["confirm"].items() if n in srch and n != "random"]
        tests = [f"{_f(raw.get(k), 3)} ({_f(adjusted.get(k), 2)})"
                 for k in (f"{s['n']}:tag_vs_mc:best_at_dp_time", f"{s['n']}:tag_vs_mc:final_best")]
        cells = [f"{s['n']}" + ("" if s.get("budget") == results["budget"] else f" (budget {s.get('budget')})"),
                 f"{dp['evaluations']}, {dp['time_s']:.2f} s",
                 " / ".join(_f(srch[n]["evals_to_dp"]["median"], 0) for n in srch),
                 " / ".join(_med(srch[n]["time_to_dp_s"]) for n in srch),
                 " / ".join(str(srch[n]["evals_to_dp"]["reached"]) for n in srch),
                 " / ".join(_med(srch[n]["best_at_dp_time_over_dp"]) for n in srch),
                 " / ".join(_med(tenth(srch[n], dp)) for n in srch),
                 " / ".join(_med(srch[n]["final_best_over_dp"]) for n in srch),
                 " / ".join(remeasured), " / ".join(tests), _fftw(s["versus_fftw"])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _fftw(v: Mapping[str, Any]) -> str:
    lo, hi = v["ours_over_fftw_ci95"]
    return f"{v['ours_over_fftw_median']:.2f} [{lo:.2f}, {hi:.2f}] ({v['describe'].split(' = ', 1)[-1]})"


# -- the figure --------------------------------------------------------------------------------------------------


def _band(ax: Any, x: list[float], stats: list[Mapping[str, Any]], color: str, label: str) -> None:
    def get(key: str) -> list[float]:
        return [np.nan if s[key] is None else s[key] for s in stats]

    ax.plot(x, get("median"), "o-", color=color, label=label)
    ax.fill_between(x, get("p25"), get("p75"), color=color, alpha=0.2)


def plot(ctx: Context, results: Mapping[str, Any]) -> None:
    """Evaluations and time to DP's best; best at DP's time and at the end ÷ DP's; Mflop/s of DP, the best
    searcher plan and FFTW (Fig. 8(c))."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    t = [float(np.log2(s["n"])) for s in sizes]
    context = next(iter(sizes[0]["dp"])) if sizes else "strided"
    fig, axes = plt.subplots(1, 5, figsize=(24, 4.5))
    axes[0].plot(t, [s["dp"][context]["evaluations"] for s in sizes], "k-s", label=f"DP ({context}, whole run)")
    axes[1].plot(t, [s["dp"][context]["time_s"] for s in sizes], "k-s", label=f"DP ({context}, whole run)")
    for k, name in enumerate(results["searchers"]):
        xs = [tt for tt, s in zip(t, sizes) if name in s["searchers"]]
        for ax, key in zip(axes, ("evals_to_dp", "time_to_dp_s", "best_at_dp_time_over_dp", "final_best_over_dp")):
            _band(ax, xs, [s["searchers"][name][key] for s in sizes if name in s["searchers"]], f"C{k}", name)
    for c in sizes[0]["dp"] if sizes else {}:
        axes[4].plot(t, [s["confirm"].get(f"dp_{c}", {}).get("mflops_median", np.nan) for s in sizes], "s-",
                     label=f"DP {c} (re-measured)")
    axes[4].plot(t, [max((v["mflops_median"] for v in s["confirm"].values() if isinstance(v, dict)), default=np.nan)
                     for s in sizes], "o-", label="best re-measured plan (any searcher or DP)")
    for flag in ("measure", "patient"):
        pts = [(tt, f["mflops"]) for tt, s in zip(t, sizes) for f in s["fftw"] if f["flag"] == flag]
        if pts:
            axes[4].plot(*zip(*pts), "^--", label=f"FFTW 3 {flag.upper()}")
    titles = ["evaluations to reach DP's best (-tol)", "search time to reach it (s)", "best at DP's time / DP",
              "best at the end / DP", "pseudo-Mflop/s (thread CPU time)"]
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("log2 n (3000: 11.55)")
        ax.legend(fontsize=7)
    for ax in axes[:2]:
        ax.set_yscale("log")
    for ax in axes[2:4]:
        ax.axhline(1.0, color="k", lw=1)
    fig.suptitle(f"C DFT library, measured table, {results['seeds']} seeds, median and p25-p75", fontsize=10)
    fig.tight_layout()
    ctx.save_figure(fig)


BENCHMARK = Benchmark("dag_search", "TAG/MC/UCT/random vs DP on the C DFT library (paper 002 Fig. 7(a), 8) and FFTW 3",
                      Options, run, report, cited_by=("docs/grammar.md", "docs/measurement.md"))
