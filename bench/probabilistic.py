"""Paper 001 Fig. 11 and 12: probabilistic vs trivial-failures vs random (and every searcher
in ``searchlab.searchers.SCHEMAS`` that runs on knob spaces), 50 tests, >= 11 seeds.

Two steps:

1. ``python bench/probabilistic.py record`` measures every configuration of each OpenCL knob
   problem once on this machine's OpenCL device with no architecture caps (pocl, one pinned
   core) and writes ``bench/results/probabilistic_tables/<problem>.json.gz``.
2. ``python bench/probabilistic.py run`` replays, for every problem x architecture (the caps
   applied to the recording by the problem's own checks, searchlab.adapters.knobs.apply_arch) and for
   the four Kernel Tuner cache files, each searcher with each seed, 50 tests each, and writes
   ``bench/results/probabilistic.json`` and ``.png``: normalised best-so-far (mean, 10/90th
   percentiles) vs tests, tests needed for 50/70/90 % of peak (30/50/70th percentiles), the
   share of failed evaluations, and the ratio of tests random/trivial need over probabilistic.

A slow searcher can be run apart and merged: ``run --skip optuna_gp`` then
``run --searchers optuna_gp --merge`` (the raw curves are kept in
``bench/results/probabilistic_runs.json.gz``).

Quality is normalised as in §8.2: best run time of the whole table / best-so-far run time
(0 until a first success).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from probabilistic_stats import censored_quantiles, paired, tests_to_reach, uninformative_levels  # noqa: E402

TABLES = ROOT / "bench" / "results" / "probabilistic_tables"
RESULTS = Path(os.environ.get("PROBABILISTIC_RESULTS", ROOT / "bench" / "results"))
KT_DIR = ROOT.parent / "shared" / "data" / "kernel_tuner"
OPENCL = ("fir", "matmul_blocked", "conv2d", "smith_waterman")
ARCHS = ("small_few", "small_many", "large_few", "large_many")
RAW = RESULTS / "probabilistic_runs.json.gz"  # every run's curve, so reports can merge runs made apart


def record(names: list[str], core: int) -> None:
    os.environ["POCL_CPU_MAX_CU_COUNT"] = "1"
    os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    from searchlab.adapters.knobs._replay import problem_classes, record_table
    from searchlab.adapters.table import save_table

    TABLES.mkdir(parents=True, exist_ok=True)
    for name in names:
        problem = problem_classes()[name](arch="none")
        start = time.time()

        def progress(i: int, config: Any, m: Any, name: str = name, start: float = start) -> None:
            print(f"{name} {i:4d} {time.time() - start:7.1f}s {dict(config)} {m.status.value} {m.failure_mode.value} "
                  f"{m.objective if m.objective is None else f'{m.objective * 1e3:.3f} ms'}", flush=True)

        table = record_table(problem, progress=progress)
        path = save_table(table, TABLES / f"{name}.json.gz")
        print(f"wrote {path} ({len(table.rows)} rows, {time.time() - start:.0f} s)", flush=True)


PAPER = ("probabilistic", "probabilistic_trivial", "random")
SKIP = {"exhaustive"}  # not a search: it enumerates
FRACTIONS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
TESTS = 50


def build_problems(only: list[str] | None) -> dict[str, Any]:
    """Every problem/architecture combination (from the recordings) and Kernel Tuner file."""
    from searchlab.adapters.knobs import KernelTunerCache, KnobTable
    from searchlab.adapters.table import load_table

    out: dict[str, Any] = {}
    for name in OPENCL:
        path = TABLES / f"{name}.json.gz"
        if not path.exists():
            print(f"no recording {path}: run 'record' first; skipping {name}", file=sys.stderr)
            continue
        table = load_table(path)
        for arch in ARCHS:
            out[f"{name}/{arch}"] = KnobTable(table=table, arch=arch)
    for path in sorted(KT_DIR.glob("*.json.gz")):
        out[f"kernel_tuner/{path.name.removesuffix('.json.gz')}"] = KernelTunerCache(path=str(path))
    return {k: v for k, v in out.items() if not only or any(k.startswith(o) for o in only)}


def searcher_names(space: Any, only: list[str] | None) -> list[str]:
    """The paper's three first, then every registered searcher that runs on knob spaces."""
    import importlib

    from searchlab.searchers import SCHEMAS

    names = [n for n in PAPER if n in SCHEMAS] + sorted(n for n in SCHEMAS if n not in PAPER and n not in SKIP)
    usable = []
    for name in names:
        if only and name not in only:
            continue
        module, cls = SCHEMAS[name]._target_.rsplit(".", 1)
        if getattr(importlib.import_module(module), cls).incompatibility(space) is None:
            usable.append(name)
    return usable


def make_searcher(name: str, space: Any, direction: Any, seed: int) -> Any:
    import dataclasses
    import importlib

    from searchlab.searchers import SCHEMAS

    schema = SCHEMAS[name]
    module, cls = schema._target_.rsplit(".", 1)
    options = {f.name: getattr(schema(), f.name) for f in dataclasses.fields(schema) if f.name != "_target_"}
    return getattr(importlib.import_module(module), cls)(space, direction=direction, seed=seed, **options)


def one_run(job: tuple[str, str, int]) -> dict[str, Any]:
    """One search: normalised best-so-far per test (§8.2), failures, wall time."""
    label, name, seed = job
    problem = _PROBLEMS[label]
    from searchlab.api import optimize
    from searchlab.core.records import Direction, Status
    from searchlab.run.loop import Budget

    start = time.time()
    try:
        outcome = optimize(problem, make_searcher(name, problem.space, problem.direction, seed), Budget(evaluations=TESTS))
    except Exception as exc:
        return {"problem": label, "searcher": name, "seed": seed, "error": f"{type(exc).__name__}: {exc}"}
    peak = problem.known_optimum
    best, curve, failed, infeasible = None, [], 0, 0
    for r in outcome.results:
        failed += not r.ok
        infeasible += r.status is Status.INFEASIBLE
        if r.ok and r.objective is not None:
            better = best is None or (r.objective < best if problem.direction is Direction.MINIMIZE else r.objective > best)
            best = r.objective if better else best
        curve.append(0.0 if best is None else (peak / best if problem.direction is Direction.MINIMIZE else best / peak))
    curve += [curve[-1] if curve else 0.0] * (TESTS - len(curve))  # a searcher that stopped early keeps its best
    return {"problem": label, "searcher": name, "seed": seed, "curve": curve, "failed": failed,
            "infeasible": infeasible, "tests": len(outcome.results), "wall_s": time.time() - start}


_PROBLEMS: dict[str, Any] = {}


def _init(only: list[str] | None) -> None:
    _PROBLEMS.update(build_problems(only))


def summarise(runs: list[dict[str, Any]], curves: bool = True) -> dict[str, Any]:
    """Fig. 11 (mean, 10/90th percentile per test) and Fig. 12 (tests to reach each fraction of
    peak, 30/50/70th percentile, censored at 50: "> 50" where that share never got there)."""
    import numpy as np

    table = np.array([r["curve"] for r in runs])
    reach = {}
    for f in FRACTIONS:
        tests = [tests_to_reach(r["curve"], f) for r in runs]
        p30, p50, p70 = censored_quantiles(tests, (0.3, 0.5, 0.7), TESTS)
        reach[f"{f:.2f}"] = {"p30": p30, "p50": p50, "p70": p70, "reached": float(np.mean(np.isfinite(tests)))}
    out: dict[str, Any] = {"runs": len(runs)}
    if curves:
        out.update(mean=table.mean(0).round(4).tolist(), p10=np.percentile(table, 10, axis=0).round(4).tolist(),
                   p90=np.percentile(table, 90, axis=0).round(4).tolist())
    return {**out, "final_mean": round(float(table[:, -1].mean()), 4),
            "failed_share": round(float(np.mean([r["failed"] / max(1, r["tests"]) for r in runs])), 4),
            "infeasible_share": round(float(np.mean([r["infeasible"] / max(1, r["tests"]) for r in runs])), 4),
            "wall_s_per_run": round(float(np.mean([r["wall_s"] for r in runs])), 2),
            "tests_to_reach": reach}


COMPARE = (("probabilistic", "random"), ("probabilistic", "probabilistic_trivial"))
LEVELS = (0.5, 0.7, 0.9)


def comparisons(ok: list[dict[str, Any]], family: str, flags: dict[str, Any]) -> dict[str, Any]:
    """Paired A vs B over (table, seed) of one family: final fraction of peak at 50 tests and
    tests to reach 50/70/90 % (tables where random reaches the level within three expected
    tests left out of that level, as uninformative)."""
    by = {(r["problem"], r["searcher"], r["seed"]): r for r in ok if _family(r["problem"]) == family}
    out: dict[str, Any] = {}
    for a, b in COMPARE:
        keys = sorted({(p, s) for p, n, s in by if n == a} & {(p, s) for p, n, s in by if n == b})
        if not keys:
            continue
        row: dict[str, Any] = {"final": paired([by[(p, a, s)]["curve"][-1] for p, s in keys],
                                               [by[(p, b, s)]["curve"][-1] for p, s in keys], higher_is_better=True)}
        for f in LEVELS:
            informative = [(p, s) for p, s in keys if not flags[p][f"{f:.2f}"]["uninformative"]]
            left_out = sorted({p for p, _ in keys} - {p for p, _ in informative})
            if not informative:
                row[f"tests_to_{f:.2f}"] = {"left_out_uninformative": left_out}
                continue
            row[f"tests_to_{f:.2f}"] = {**paired([tests_to_reach(by[(p, a, s)]["curve"], f) for p, s in informative],
                                                 [tests_to_reach(by[(p, b, s)]["curve"], f) for p, s in informative],
                                                 higher_is_better=False, horizon=TESTS),
                                        "left_out_uninformative": left_out}
        out[f"{a}_vs_{b}"] = row
    return out


def claims(stats: dict[str, Any]) -> dict[str, Any]:
    """Paper 001 §8.2 restated with intervals: (1) random needs >= 2x the tests of probabilistic
    for 50-90 % of peak; (2) the trivial-failures ablation is worse."""
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
            "claim_1": "random needs >= 2x the tests of probabilistic (median) to reach 50/70/90 % of peak; "
                       "holds when the 95 % interval of the ratio of medians (exact or a lower bound where random's "
                       "median is censored at 50) lies at or above 2",
            "claim_1_levels": levels,
            "claim_2": "the trivial-failures ablation is worse than probabilistic; holds when probabilistic is "
                       "better with the interval of the difference excluding 0",
            "claim_2_metrics": trivial,
            "claim_2_holds": any(v["verdict"] == "A better" for v in trivial.values())
                             and not any(v["verdict"] == "B better" for v in trivial.values()),
        }
    return out


def _family(label: str) -> str:
    return "kernel_tuner" if label.startswith("kernel_tuner") else "opencl"


def run(seeds: int, jobs: int, only_problems: list[str] | None, only_searchers: list[str] | None,
        skip: list[str], merge: bool) -> None:
    import multiprocessing as mp

    _init(only_problems)
    plan = []
    for label, problem in _PROBLEMS.items():
        for name in searcher_names(problem.space, only_searchers):
            if name not in skip:
                plan += [(label, name, seed) for seed in range(seeds)]
    print(f"{len(plan)} runs over {len(_PROBLEMS)} problems", flush=True)
    start, results = time.time(), []
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs, initializer=_init, initargs=(only_problems,)) if jobs > 1 else _Inline() as pool:
        for i, res in enumerate(pool.imap_unordered(one_run, plan)):
            results.append(res)
            if "error" in res or i % 50 == 0:
                print(f"{i + 1}/{len(plan)} {time.time() - start:.0f}s {res['problem']} {res['searcher']} "
                      f"{res.get('error', res.get('curve', [0])[-1])}", flush=True)
    if merge and RAW.exists():  # keep runs of other searchers/problems recorded before (e.g. a slow searcher run apart)
        fresh = {(r["problem"], r["searcher"], r["seed"]) for r in results}
        with gzip.open(RAW, "rt") as fh:
            results += [r for r in json.load(fh) if (r["problem"], r["searcher"], r["seed"]) not in fresh]
    RAW.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(RAW, "wt") as fh:
        json.dump(results, fh)
    seeds_run = max(1 + max(r["seed"] for r in results), seeds)
    report(results, seeds_run, time.time() - start)


class _Inline:
    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Any, items: list[Any]) -> Any:
        return map(fn, items)


def report(results: list[dict[str, Any]], seeds: int, wall_s: float) -> None:
    from collections import defaultdict

    ok = [r for r in results if "error" not in r]
    errors = [r for r in results if "error" in r]
    if any(r["problem"] not in _PROBLEMS for r in ok):  # merged runs of problems this call did not load
        _init(None)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:  # OpenCL problems and Kernel Tuner tables apart: never pooled
        for g in dict.fromkeys((_family(r["problem"]), r["problem"].split("/")[0], r["problem"])):
            groups[g][r["searcher"]].append(r)
    summary = {g: {name: summarise(rs, curves="/" not in g) for name, rs in by.items()} for g, by in groups.items()}
    flags = {label: uninformative_levels(_qualities(label), FRACTIONS) for label in _PROBLEMS}
    stats: dict[str, Any] = {f: comparisons(ok, f, flags) for f in ("opencl", "kernel_tuner") if f in groups}
    payload = {
        "benchmark": "paper 001 Fig. 11/12: normalised best-so-far and tests to reach a fraction of peak",
        "tests": TESTS, "seeds": seeds, "wall_s": round(wall_s, 1),
        "sum_of_run_wall_s": round(sum(r.get("wall_s", 0.0) for r in ok), 1),
        "normalisation": "table best run time / best-so-far run time (0 before a first success); the table best is "
                         "the exhaustive optimum of each problem/architecture or Kernel Tuner file",
        "opencl_tables": "recorded once, uncapped, on this machine's pocl CPU device (bench/results/"
                         "probabilistic_tables); architectures applied by searchlab.adapters.knobs.apply_arch",
        "machine": f"2 shared CPU cores, other engineers' jobs running at the same time (load average "
                   f"{_load()}); replays are look-ups, so no number here is a timing",
        "statistics": "paired over (table, seed); 95 % percentile-bootstrap intervals (4000 resamples, seed 0); "
                      "two-sided Wilcoxon signed-rank p (scipy, zero differences dropped); tests-to-reach censored "
                      "at 50 (a run that never reached the level counts as 51 in the paired tests; medians above "
                      "50 read '> 50'); a table is left out of a level where random search needs <= 3 expected "
                      "tests to reach it ((N+1)/(K+1), N testable configurations, K at or above the level)",
        "failed_share": "share of the 50 tests that did not succeed, known-infeasible proposals included "
                        "(infeasible_share: those alone; only searchers walking the decision-DAG view propose them)",
        "problems": {label: {**_describe(label), "levels": flags[label]} for label in _PROBLEMS},
        "comparisons": stats,
        "claims": claims(stats),
        "summary": summary,
        "errors": errors,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "probabilistic.json"
    out.write_text(json.dumps(payload, indent=1))
    print(f"wrote {out}")
    plot(summary, RESULTS / "probabilistic.png")
    print(json.dumps(payload["claims"], indent=1))


def _load() -> str:
    try:
        return " / ".join(f"{v:.1f}" for v in os.getloadavg()) + " (1/5/15 min, at report time)"
    except OSError:
        return "unknown"


def _qualities(label: str) -> list[float]:
    """Fraction of peak of every testable configuration of a table (0: it fails)."""
    from searchlab.core.records import Direction, Status

    problem = _PROBLEMS[label]
    peak = problem.known_optimum
    out = []
    for c, m in problem.table.rows.items():
        if problem.space.check(c) is not None:
            continue
        ok = m.status is Status.OK and m.objective
        out.append(0.0 if not ok else peak / m.objective if problem.direction is Direction.MINIMIZE
                   else m.objective / peak)
    return out


def _describe(label: str) -> dict[str, Any]:
    from searchlab.core.records import Status

    problem = _PROBLEMS[label]
    rows = problem.table.rows
    feasible = [m for c, m in rows.items() if problem.space.check(c) is None]
    return {"configurations": len(feasible), "failed_share": round(sum(m.status is not Status.OK for m in feasible)
                                                                   / max(1, len(feasible)), 3),
            "optimum": problem.known_optimum}


def plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    groups = [g for g in ("opencl", "kernel_tuner") if g in summary]
    fig, axes = plt.subplots(len(groups), 2, figsize=(13, 4.2 * len(groups)), squeeze=False)
    for row, g in enumerate(groups):
        ax, ax2 = axes[row]
        names = [n for n in PAPER if n in summary[g]] + sorted(n for n in summary[g] if n not in PAPER)
        for i, name in enumerate(names):
            s = summary[g][name]
            x = np.arange(1, TESTS + 1)
            style = {"lw": 2.2 if name in PAPER else 1.0, "alpha": 1.0 if name in PAPER else 0.6, "color": f"C{i % 10}"}
            ax.plot(x, s["mean"], label=name, **style)
            if name in PAPER:
                ax.fill_between(x, s["p10"], s["p90"], color=style["color"], alpha=0.15)
            fr = [float(f) for f in s["tests_to_reach"]]
            med = [s["tests_to_reach"][f]["p50"] for f in s["tests_to_reach"]]
            lo = [s["tests_to_reach"][f]["p30"] for f in s["tests_to_reach"]]
            hi = [s["tests_to_reach"][f]["p70"] for f in s["tests_to_reach"]]
            num = lambda v, above: v if isinstance(v, (int, float)) else above
            ax2.plot(fr, [num(m, np.nan) for m in med], marker="o", **style)
            if name in PAPER:
                ax2.fill_between(fr, [num(v, np.nan) for v in lo], [num(v, TESTS + 5) for v in hi],
                                 color=style["color"], alpha=0.15)
        ax.set(title=f"Fig. 11 ({g}): normalised best so far, mean and 10/90th pct",
               xlabel="tests", ylabel="fraction of peak", ylim=(0, 1.02))
        ax2.set(title=f"Fig. 12 ({g}): tests to reach a fraction of peak (median, 30/70th pct)",
                xlabel="fraction of peak", ylabel="tests", ylim=(0, TESTS + 5))
        ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="measure every configuration of the OpenCL problems (uncapped)")
    rec.add_argument("problems", nargs="*", default=list(OPENCL))
    rec.add_argument("--core", type=int, default=0)
    go = sub.add_parser("run", help="replay every searcher x seed on every table (Fig. 11/12)")
    go.add_argument("--seeds", type=int, default=11)
    go.add_argument("--jobs", type=int, default=1)
    go.add_argument("--problems", nargs="*", help="label prefixes, e.g. fir kernel_tuner/convolution_A100")
    go.add_argument("--searchers", nargs="*", help="names from searchlab.searchers.SCHEMAS (default: all on knobs)")
    go.add_argument("--skip", nargs="*", default=[], help="searchers to leave out (e.g. a slow one, run apart)")
    go.add_argument("--merge", action="store_true", help=f"keep other runs already in {RAW.name}")
    sub.add_parser("report", help=f"rewrite the JSON and PNG from {RAW.name}")
    args = parser.parse_args(argv)
    if args.cmd == "record":
        record(args.problems, args.core)
    elif args.cmd == "report":
        _init(None)
        with gzip.open(RAW, "rt") as fh:
            results = json.load(fh)
        report(results, 1 + max(r["seed"] for r in results), 0.0)
    else:
        run(args.seeds, args.jobs, args.problems, args.searchers, args.skip, args.merge)


if __name__ == "__main__":
    main()
