"""Paper 001 Fig. 11 and 12: probabilistic vs trivial-failures vs random (and every registered searcher that runs
on knob spaces), 50 tests, >= 11 seeds; OpenCL tables and Kernel Tuner tables separately, never pooled.

``probabilistic_record`` measures every configuration of each OpenCL knob problem once on this machine's OpenCL
device with no architecture caps (pocl, one pinned core) into ``bench/results/probabilistic_tables/<problem>
.json.gz`` (the tables tests/searchers/test_probabilistic_fed.py and docs/knobs.md replay).

``probabilistic`` replays, for every problem x architecture (the caps applied to the recording by the problem's
own checks, ``searchlab.adapters.knobs.apply_arch``) and the four Kernel Tuner cache files, each searcher with
each seed, 50 tests each: normalised best-so-far (§8.2: best run time of the whole table / best-so-far run
time, 0 until a first success; mean, 10/90th percentiles) vs tests, tests needed for 50-95 % of peak (censored
at 50: bench/common/stats.py), the share of failed evaluations, paired comparisons with bootstrap intervals and
Wilcoxon p, and the paper's two claims restated with intervals. Every run's curve is kept in
``<out>_runs.json.gz``: a slow searcher can be run apart and merged (``--skip optuna_gp`` then ``--searchers
optuna_gp --merge``); ``--report-only`` rebuilds the result from that file. The report is the figure (SVG).
Replays: no number here is a timing.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS, kt_tables
from bench.common.stats import censored_quantiles, paired, tests_to_reach, uninformative_levels
from bench.harness import Benchmark, Context

TABLES = RESULTS / "probabilistic_tables"
RAW = "_runs.json.gz"  # every run's curve beside the result (--merge, --report-only)
OPENCL = ("fir", "matmul_blocked", "conv2d", "smith_waterman")
ARCHS = ("small_few", "small_many", "large_few", "large_many")
PAPER = ("probabilistic", "probabilistic_trivial", "random")
SKIP = {"exhaustive"}  # not a search: it enumerates
FRACTIONS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
TESTS = 50
COMPARE = (("probabilistic", "random"), ("probabilistic", "probabilistic_trivial"))
LEVELS = (0.5, 0.7, 0.9)


@dataclass(frozen=True)
class RecordOptions:
    problems: tuple[str, ...] = OPENCL
    core: int = 0
    tables_dir: str = str(TABLES)  # where the recordings go (the tests and `probabilistic` read them from TABLES)


@dataclass(frozen=True)
class Options:
    seeds: int = 11
    jobs: int = 1
    problems: tuple[str, ...] = ()  # label prefixes, e.g. fir kernel_tuner/convolution_A100 (default: all)
    searchers: tuple[str, ...] = ()  # registered names (default: every one that runs on knob spaces)
    skip: tuple[str, ...] = ()  # searchers to leave out (e.g. a slow one, run apart)
    merge: bool = False  # keep other runs already in <out>_runs.json.gz
    report_only: bool = False  # rebuild the result from <out>_runs.json.gz, running nothing


def record(ctx: Context, o: RecordOptions) -> dict[str, Any]:
    from searchlab.adapters.knobs import SCHEMAS, record_table
    from searchlab.adapters.table import save_table

    os.environ["POCL_CPU_MAX_CU_COUNT"] = os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {o.core})
    out = Path(o.tables_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in o.problems:
        problem, start = SCHEMAS[name](arch="none"), time.time()

        def progress(i: int, config: Any, m: Any, name: str = name, start: float = start) -> None:
            if i % 50 == 0:
                ctx.log(f"{name} {i:4d} {time.time() - start:7.1f}s {dict(config)} {m.status.value}")

        table = record_table(problem, progress=progress)
        path = save_table(table, out / f"{name}.json.gz")
        written[name] = {"path": str(path), "rows": len(table.rows), "seconds": round(time.time() - start, 1)}
        ctx.log(f"wrote {path} ({len(table.rows)} rows)")
    return {"tables": written}


_PROBLEMS: dict[str, Any] = {}


def build_problems(only: tuple[str, ...]) -> dict[str, Any]:
    """Every problem/architecture combination (from the recordings) and Kernel Tuner file."""
    from searchlab.adapters.knobs import KernelTunerCache, KnobTable
    from searchlab.adapters.table import load_table

    out: dict[str, Any] = {}
    for name in OPENCL:
        path = TABLES / f"{name}.json.gz"
        if path.exists():
            table = load_table(path)
            out |= {f"{name}/{arch}": KnobTable(table=table, arch=arch) for arch in ARCHS}
    for path in kt_tables():
        out[f"kernel_tuner/{path.name.removesuffix('.json.gz')}"] = KernelTunerCache(path=str(path))
    return {k: v for k, v in out.items() if not only or any(k.startswith(p) for p in only)}


def searcher_names(space: Any, only: tuple[str, ...]) -> list[str]:
    """The paper's three first, then every registered searcher that runs on knob spaces."""
    from searchlab import registry

    names = [n for n in PAPER if n in registry.searchers()]
    names += sorted(n for n in registry.searchers() if n not in PAPER and n not in SKIP)
    classes: dict[str, Any] = {n: registry.searcher_class(n) for n in names if not only or n in only}
    return [n for n, cls in classes.items() if cls.incompatibility(space) is None]


def one_run(job: tuple[str, str, int]) -> dict[str, Any]:
    """One search: normalised best-so-far per test (§8.2), failures, wall time."""
    from searchlab import registry
    from searchlab.api import optimize
    from searchlab.core.records import Direction, Status
    from searchlab.run.loop import Budget

    label, name, seed = job
    problem, start = _PROBLEMS[label], time.time()
    try:
        searcher = registry.searcher_class(name)(problem.space, direction=problem.direction, seed=seed)
        outcome = optimize(problem, searcher, Budget(evaluations=TESTS))
    except Exception as exc:  # a searcher that cannot run here is reported, not fatal to the bench
        return {"problem": label, "searcher": name, "seed": seed, "error": f"{type(exc).__name__}: {exc}"}
    peak, minimize = problem.known_optimum, problem.direction is Direction.MINIMIZE
    best, curve, failed, infeasible = None, [], 0, 0
    for r in outcome.results:
        failed += not r.ok
        infeasible += r.status is Status.INFEASIBLE
        if r.ok and r.objective is not None and (best is None or (r.objective < best) == minimize):
            best = r.objective
        curve.append(0.0 if best is None else (peak / best if minimize else best / peak))
    curve += [curve[-1] if curve else 0.0] * (TESTS - len(curve))  # a searcher that stopped early keeps its best
    return {"problem": label, "searcher": name, "seed": seed, "curve": curve, "failed": failed,
            "infeasible": infeasible, "tests": len(outcome.results), "wall_s": time.time() - start}


def _init(only: tuple[str, ...]) -> None:
    _PROBLEMS.update(build_problems(only))


def summarise(runs: list[dict[str, Any]], curves: bool = True) -> dict[str, Any]:
    """Fig. 11 (mean, 10/90th percentile per test) and Fig. 12 (tests to reach each fraction of peak,
    30/50/70th percentile, censored at 50)."""
    table = np.array([r["curve"] for r in runs])
    reach = {}
    for f in FRACTIONS:
        tests = [tests_to_reach(r["curve"], f) for r in runs]
        p30, p50, p70 = censored_quantiles(tests, (0.3, 0.5, 0.7), TESTS)
        reach[f"{f:.2f}"] = {"p30": p30, "p50": p50, "p70": p70, "reached": float(np.mean(np.isfinite(tests)))}
    out: dict[str, Any] = {"runs": len(runs)}
    if curves:
        out |= {"mean": table.mean(0).round(4), "p10": np.percentile(table, 10, axis=0).round(4),
                "p90": np.percentile(table, 90, axis=0).round(4)}

    def share(key: str) -> float:
        return round(float(np.mean([r[key] / max(1, r["tests"]) for r in runs])), 4)

    return {**out, "final_mean": round(float(table[:, -1].mean()), 4), "failed_share": share("failed"),
            "infeasible_share": share("infeasible"), "tests_to_reach": reach,
            "wall_s_per_run": round(float(np.mean([r["wall_s"] for r in runs])), 2)}


def _family(label: str) -> str:
    return "kernel_tuner" if label.startswith("kernel_tuner") else "opencl"


def comparisons(ok: list[dict[str, Any]], family: str, flags: dict[str, Any]) -> dict[str, Any]:
    """Paired A vs B over (table, seed) of one family: final fraction of peak at 50 tests and tests to reach
    50/70/90 % (tables where random reaches the level within three expected tests left out, uninformative)."""
    by = {(r["problem"], r["searcher"], r["seed"]): r for r in ok if _family(r["problem"]) == family}
    out: dict[str, Any] = {}
    for a, b in COMPARE:
        keys = sorted({(p, s) for p, n, s in by if n == a} & {(p, s) for p, n, s in by if n == b})
        if not keys:
            continue
        row: dict[str, Any] = {"final": paired([by[p, a, s]["curve"][-1] for p, s in keys],
                                               [by[p, b, s]["curve"][-1] for p, s in keys], higher_is_better=True)}
        for f in LEVELS:
            informative = [(p, s) for p, s in keys if not flags[p][f"{f:.2f}"]["uninformative"]]
            left_out = sorted({p for p, _ in keys} - {p for p, _ in informative})
            test = paired([tests_to_reach(by[p, a, s]["curve"], f) for p, s in informative],
                          [tests_to_reach(by[p, b, s]["curve"], f) for p, s in informative],
                          higher_is_better=False, horizon=TESTS) if informative else {}
            row[f"tests_to_{f:.2f}"] = {**test, "left_out_uninformative": left_out}
        out[f"{a}_vs_{b}"] = row
    return out


def claims(stats: dict[str, Any]) -> dict[str, Any]:
    """Paper 001 §8.2 restated with intervals: (1) random needs >= 2x the tests of probabilistic for 50-90 % of
    peak; (2) the trivial-failures ablation is worse."""
    out: dict[str, Any] = {}
    for family, rows in stats.items():
        vs_random, vs_trivial = rows.get("probabilistic_vs_random", {}), rows.get("probabilistic_vs_probabilistic_trivial", {})
        levels = {}
        for f in LEVELS:
            c = vs_random.get(f"tests_to_{f:.2f}", {})
            lo = (c.get("ratio_ci95") or [None])[0]
            usable = c.get("ratio_bound") in ("exact", "lower bound")
            levels[f"{f:.2f}"] = {"ratio_random_over_probabilistic": c.get("ratio_b_over_a"),
                                  "ratio_bound": c.get("ratio_bound"), "ci95": c.get("ratio_ci95"),
                                  "restricted_mean_diff": c.get("diff"), "restricted_mean_diff_ci95": c.get("diff_ci95"),
                                  "wilcoxon_p": c.get("wilcoxon_p"), "verdict": c.get("verdict"),
                                  "holds": None if "pairs" not in c else bool(usable and lo is not None and lo >= 2)}
        trivial = {k: {"verdict": v.get("verdict"), "diff": v.get("diff"), "ci95": v.get("diff_ci95"),
                       "wilcoxon_p": v.get("wilcoxon_p")} for k, v in vs_trivial.items() if "verdict" in v}
        out[family] = {
            "claim_1": "random needs >= 2x the tests of probabilistic (median) to reach 50/70/90 % of peak; holds when "
                       "the 95 % interval of the ratio of medians (exact or a lower bound where random's median is "
                       "censored at 50) lies at or above 2", "claim_1_levels": levels,
            "claim_2": "the trivial-failures ablation is worse than probabilistic; holds when probabilistic is better "
                       "with the interval of the difference excluding 0", "claim_2_metrics": trivial,
            "claim_2_holds": any(v["verdict"] == "A better" for v in trivial.values())
                             and not any(v["verdict"] == "B better" for v in trivial.values())}
    return out


def _qualities(label: str) -> list[float]:
    """Fraction of peak of every testable configuration of a table (0: it fails)."""
    from searchlab.core.records import Direction, Status

    problem = _PROBLEMS[label]
    peak, minimize = problem.known_optimum, problem.direction is Direction.MINIMIZE
    return [0.0 if not (m.status is Status.OK and m.objective) else peak / m.objective if minimize else m.objective / peak
            for c, m in problem.table.rows.items() if problem.space.check(c) is None]


def _describe(label: str) -> dict[str, Any]:
    from searchlab.core.records import Status

    problem = _PROBLEMS[label]
    feasible = [m for c, m in problem.table.rows.items() if problem.space.check(c) is None]
    return {"configurations": len(feasible), "optimum": problem.known_optimum,
            "failed_share": round(sum(m.status is not Status.OK for m in feasible) / max(1, len(feasible)), 3)}


def analyse(results: list[dict[str, Any]], seeds: int) -> dict[str, Any]:
    ok, errors = [r for r in results if "error" not in r], [r for r in results if "error" in r]
    if any(r["problem"] not in _PROBLEMS for r in ok):  # merged runs of problems this call did not load
        _init(())
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:  # OpenCL problems and Kernel Tuner tables apart: never pooled
        for g in dict.fromkeys((_family(r["problem"]), r["problem"].split("/")[0], r["problem"])):
            groups[g][r["searcher"]].append(r)
    summary = {g: {name: summarise(rs, curves="/" not in g) for name, rs in by.items()} for g, by in groups.items()}
    flags = {label: uninformative_levels(_qualities(label), FRACTIONS) for label in _PROBLEMS}
    stats: dict[str, Any] = {f: comparisons(ok, f, flags) for f in ("opencl", "kernel_tuner") if f in groups}
    return {"benchmark": "paper 001 Fig. 11/12: normalised best-so-far and tests to reach a fraction of peak",
            "tests": TESTS, "seeds": seeds, "sum_of_run_wall_s": round(sum(r.get("wall_s", 0.0) for r in ok), 1),
            "normalisation": "table best run time / best-so-far run time (0 before a first success)",
            "opencl_tables": "recorded once, uncapped, on this machine's pocl CPU device (bench/results/"
                             "probabilistic_tables); architectures applied by searchlab.adapters.knobs.apply_arch",
            "statistics": "paired over (table, seed); 95 % percentile-bootstrap intervals (4000 resamples, seed 0); "
                          "two-sided Wilcoxon signed-rank p; tests-to-reach censored at 50 (51 in the paired tests); "
                          "a table is left out of a level where random search needs <= 3 expected tests",
            "problems": {label: {**_describe(label), "levels": flags[label]} for label in _PROBLEMS},
            "comparisons": stats, "claims": claims(stats), "summary": summary, "errors": errors}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    import multiprocessing as mp

    _init(o.problems)
    results: list[dict[str, Any]] = []
    if not o.report_only:
        plan = [(label, name, seed) for label, problem in _PROBLEMS.items()
                for name in searcher_names(problem.space, o.searchers) if name not in o.skip for seed in range(o.seeds)]
        ctx.log(f"{len(plan)} runs over {len(_PROBLEMS)} problems")
        start = time.time()
        pool = mp.get_context("fork").Pool(o.jobs, initializer=_init, initargs=(o.problems,)) if o.jobs > 1 else None
        try:
            for i, res in enumerate(pool.imap_unordered(one_run, plan) if pool else map(one_run, plan)):
                results.append(res)
                if "error" in res or i % 50 == 0:
                    ctx.log(f"{i + 1}/{len(plan)} {time.time() - start:.0f}s {res['problem']} {res['searcher']} "
                            f"{res.get('error', res.get('curve', [0])[-1])}")
        finally:
            if pool is not None:
                pool.terminate()
    earlier = ctx.load_data(RAW) if o.merge or o.report_only else None
    if earlier:  # keep runs recorded before (e.g. a slow searcher run apart)
        fresh = {(r["problem"], r["searcher"], r["seed"]) for r in results}
        results += [r for r in earlier if (r["problem"], r["searcher"], r["seed"]) not in fresh]
    if not results:
        raise SystemExit(f"probabilistic: no runs (nothing run, none in {ctx.artefact(RAW)})")
    ctx.save_data(RAW, results)
    ctx.used_seeds(sorted({int(r["seed"]) for r in results}))
    return analyse(results, 1 + max(int(r["seed"]) for r in results))


def _num(value: Any, censored: float) -> float:
    return float(value) if isinstance(value, (int, float)) else censored  # "> 50": censored


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    """Fig. 11 (best so far) and Fig. 12 (tests to reach) per family."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = results["summary"]
    groups = [g for g in ("opencl", "kernel_tuner") if g in summary]
    fig, axes = plt.subplots(len(groups), 2, figsize=(13, 4.2 * len(groups)), squeeze=False)
    for row, g in enumerate(groups):
        ax, ax2 = axes[row]
        names = [n for n in PAPER if n in summary[g]] + sorted(n for n in summary[g] if n not in PAPER)
        for i, name in enumerate(names):
            s, x = summary[g][name], np.arange(1, TESTS + 1)
            style = {"lw": 2.2 if name in PAPER else 1.0, "alpha": 1.0 if name in PAPER else 0.6, "color": f"C{i % 10}"}
            ax.plot(x, s["mean"], label=name, **style)
            fr = [float(f) for f in s["tests_to_reach"]]
            cell = [s["tests_to_reach"][f] for f in s["tests_to_reach"]]
            ax2.plot(fr, [_num(c["p50"], np.nan) for c in cell], marker="o", **style)
            if name in PAPER:
                ax.fill_between(x, s["p10"], s["p90"], color=style["color"], alpha=0.15)
                ax2.fill_between(fr, [_num(c["p30"], np.nan) for c in cell], [_num(c["p70"], TESTS + 5) for c in cell],
                                 color=style["color"], alpha=0.15)
        ax.set(title=f"Fig. 11 ({g}): normalised best so far, mean and 10/90th pct", xlabel="tests",
               ylabel="fraction of peak", ylim=(0, 1.02))
        ax2.set(title=f"Fig. 12 ({g}): tests to reach a fraction of peak (median, 30/70th pct)",
                xlabel="fraction of peak", ylabel="tests", ylim=(0, TESTS + 5))
        ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    ctx.save_figure(fig)


BENCHMARK = [
    Benchmark("probabilistic", "paper 001 Fig. 11/12: probabilistic vs trivial vs random (and every knob searcher), "
              "OpenCL and Kernel Tuner tables apart, paired intervals and Wilcoxon p", Options, run, report,
              cited_by=("docs/knobs.md", "docs/baselines.md")),
    Benchmark("probabilistic_record", "measure every configuration of the four OpenCL knob problems once, uncapped, "
              "into bench/results/probabilistic_tables/", RecordOptions, record, cited_by=("docs/knobs.md",)),
]
