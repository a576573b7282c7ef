"""TAG vs Monte-Carlo vs DP on DFT ruletrees (paper 002 §5, Figure 8(b)), on a measured table.

For each size n = 2^t, every ruletree any searcher proposes is timed *once* (the
``problem=dft`` evaluation: numpy plan, checked against numpy.fft, median of repeats) and
kept in a table; every later proposal of the same tree, by any searcher or seed, replays
that measurement. DP (one run: it is deterministic given the table) and TAG and MC (many
seeds) are then compared on identical numbers. Time = the recorded evaluation times
(plan build + check + warm-up + timed repeats) plus each searcher's own ask/tell time.

Per seed: evaluations and time for TAG/MC to reach DP's best value (and 95 % of it), and
the best found when the run has spent DP's total time. A run stops once it has reached
DP's best *and* spent DP's time, or after ``--budget`` evaluations.

    OPENBLAS_NUM_THREADS=1 python bench/dag_search.py --sizes 10 11 12 13 14 15 16 --seeds 10

Writes bench/results/dag_search.json and bench/results/dag_search.png (``--out`` elsewhere;
bench/results/dag_search_long.json is the same at 2^10-2^12 with ``--budget 1000``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread: the machine is shared

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.adapters.grammar import DftProblem
from searchlab.records import Config, Measurement, Result
from searchlab.searchers import DpSearcher, McSearcher, RandomSearcher, Searcher, TagSearcher, UctSearcher

RESULTS = Path(__file__).parent / "results"


class Table:
    """Ruletree key -> its one measurement, timed on first request."""

    def __init__(self, problem: DftProblem) -> None:
        self.problem = problem
        self.rows: dict[str, Measurement] = {}
        self.timing_s = 0.0

    def __call__(self, config: Config) -> Measurement:
        key = str(config["word"])
        if key not in self.rows:
            start = time.perf_counter()
            self.rows[key] = self.problem.evaluate(config)
            self.timing_s += time.perf_counter() - start
        return self.rows[key]


@dataclass
class Trace:
    """One run: per evaluation, the best full-size value so far and the time spent so far."""

    best: list[float] = field(default_factory=list)
    time_s: list[float] = field(default_factory=list)

    def first(self, target: float) -> int | None:
        return next((i for i, b in enumerate(self.best) if b >= target), None)

    def best_at(self, seconds: float) -> float:
        within = [b for b, t in zip(self.best, self.time_s) if t <= seconds]
        return within[-1] if within else 0.0


def run(searcher: Searcher, table: Table, budget: int, stop: Callable[[Trace], bool] | None = None) -> Trace:
    trace, spent, best = Trace(), 0.0, 0.0
    while len(trace.best) < budget:
        start = time.perf_counter()
        batch = searcher.ask(1)
        overhead = time.perf_counter() - start
        if not batch:
            break
        measurement = table(batch[0].config)
        start = time.perf_counter()
        searcher.tell(Result(batch[0], measurement))
        spent += overhead + time.perf_counter() - start + measurement.compile_s + measurement.run_s
        if measurement.objective is not None and not measurement.is_subproblem:
            best = max(best, measurement.objective)
        trace.best.append(best)
        trace.time_s.append(spent)
        if stop is not None and stop(trace):
            break
    return trace


def summary(values: list[float | None]) -> dict[str, Any]:
    """Median and spread; runs that never got there count as +inf (a median can be censored)."""
    data = [np.inf if v is None else float(v) for v in values]
    reached = [v for v in data if np.isfinite(v)]
    pct = np.percentile(data, [25, 75], method="nearest") if data else [np.nan] * 2
    return {"median": _num(statistics.median(data)) if data else None, "p25": _num(pct[0]), "p75": _num(pct[1]),
            "min": _num(min(data)) if data else None, "max": _num(max(data)) if data else None,
            "reached": len(reached), "runs": len(data)}


def _num(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def spread(problem: DftProblem, table: Table, sample: int) -> dict[str, Any]:
    """Run-time spread among uniformly random ruletrees (and over everything timed)."""
    rng = np.random.default_rng(0)
    values = [table(problem.space.sample(rng)).objective for _ in range(sample)]
    ok = [v for v in values if v is not None]
    full = [m.objective for m in table.rows.values() if m.objective is not None and not m.is_subproblem]
    return {"uniform_sample": len(ok), "sample_min": min(ok), "sample_max": max(ok),
            "sample_ratio": max(ok) / min(ok), "table_min": min(full), "table_max": max(full),
            "table_ratio": max(full) / min(full)}


SEARCHERS: dict[str, Callable[[DftProblem, int], Searcher]] = {
    "tag": lambda p, s: TagSearcher(p.space, direction=p.direction, seed=s),
    "mc": lambda p, s: McSearcher(p.space, direction=p.direction, seed=s),
    "tag_canonical": lambda p, s: TagSearcher(p.space, direction=p.direction, seed=s, arcs="canonical"),
    "uct": lambda p, s: UctSearcher(p.space, direction=p.direction, seed=s),
    "random": lambda p, s: RandomSearcher(p.space, direction=p.direction, seed=s),
}


def bench_size(t: int, args: argparse.Namespace) -> dict[str, Any]:
    problem = DftProblem(size=2**t, repeats=args.repeats, warmup=1, max_codelet=args.max_codelet)
    problem.setup(problem.device)
    table = Table(problem)
    started = time.perf_counter()
    dp = run(DpSearcher(problem.space, direction=problem.direction), table, 10**6)
    dp_best, dp_time = dp.best[-1], dp.time_s[-1]
    dp_plan = max((m for m in table.rows.values() if not m.is_subproblem), key=lambda m: m.objective or 0.0)
    out: dict[str, Any] = {
        "n": 2**t, "ruletrees": problem.space.count_sinks(),
        "dp": {"evaluations": len(dp.best), "time_s": dp_time, "best_mflops": dp_best,
               "plan": dp_plan.extra["ruletree"]},
        "searchers": {},
    }

    def stop(trace: Trace) -> bool:
        return trace.best[-1] >= dp_best and trace.time_s[-1] >= dp_time

    for name in args.searchers:
        runs: list[dict[str, Any]] = []
        for seed in range(args.seeds):
            trace = run(SEARCHERS[name](problem, seed), table, args.budget, stop)
            i, j = trace.first(dp_best), trace.first(0.95 * dp_best)
            runs.append({"seed": seed, "evaluations": len(trace.best), "final_best": trace.best[-1],
                         "evals_to_dp": None if i is None else i + 1,
                         "time_to_dp_s": None if i is None else trace.time_s[i],
                         "evals_to_95": None if j is None else j + 1,
                         "best_at_dp_time": trace.best_at(dp_time),
                         "curve": {"evals": list(range(1, len(trace.best) + 1))[:: max(1, len(trace.best) // 60)],
                                   "best": trace.best[:: max(1, len(trace.best) // 60)],
                                   "time_s": trace.time_s[:: max(1, len(trace.best) // 60)]}})
        out["searchers"][name] = {
            "evals_to_dp": summary([r["evals_to_dp"] for r in runs]),
            "time_to_dp_s": summary([r["time_to_dp_s"] for r in runs]),
            "evals_to_95": summary([r["evals_to_95"] for r in runs]),
            "best_at_dp_time_over_dp": summary([r["best_at_dp_time"] / dp_best for r in runs]),
            "final_best_over_dp": summary([r["final_best"] / dp_best for r in runs]),
            "beats_dp": sum(r["final_best"] > dp_best for r in runs),
            "runs": runs,
        }
        print(f"  2^{t} {name}: evals to DP best median {out['searchers'][name]['evals_to_dp']['median']} "
              f"(reached {out['searchers'][name]['evals_to_dp']['reached']}/{args.seeds}), DP {len(dp.best)} evals",
              flush=True)
    out["spread"] = spread(problem, table, args.spread_sample)
    out["table"] = {"timed": len(table.rows), "timing_s": table.timing_s, "bench_s": time.perf_counter() - started}
    return out


def _band(ax: Any, t: list[int], stats: list[dict[str, Any]], color: str | None, label: str) -> None:
    def get(key: str) -> list[float]:
        return [np.nan if x[key] is None else x[key] for x in stats]

    ax.plot(t, get("median"), "o-", color=color, label=label)
    ax.fill_between(t, get("p25"), get("p75"), color=color, alpha=0.2)


def plot(results: dict[str, Any], path: Path) -> None:
    """Four panels per size: evaluations to DP's best (median, p25-p75; a censored median is
    not drawn), share of seeds reaching it, best at DP's time and at the budget / DP's best."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    t = [int(np.log2(s["n"])) for s in sizes]
    colors = {"tag": "C0", "mc": "C1", "tag_canonical": "C2", "uct": "C3", "random": "C4"}
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.3))
    axes[0].plot(t, [s["dp"]["evaluations"] for s in sizes], "k-s", label="DP (its whole run)")
    width = 0.8 / max(1, len(results["searchers"]))
    for k, name in enumerate(results["searchers"]):
        color = colors.get(name)
        _band(axes[0], t, [s["searchers"][name]["evals_to_dp"] for s in sizes], color, name)
        share = [s["searchers"][name]["evals_to_dp"]["reached"] / s["searchers"][name]["evals_to_dp"]["runs"]
                 for s in sizes]
        axes[1].bar([x + (k - (len(results["searchers"]) - 1) / 2) * width for x in t], share, width,
                    color=color, label=name)
        _band(axes[2], t, [s["searchers"][name]["best_at_dp_time_over_dp"] for s in sizes], color, name)
        _band(axes[3], t, [s["searchers"][name]["final_best_over_dp"] for s in sizes], color, name)
    axes[0].set_yscale("log")
    axes[0].set_title("evaluations to reach DP's best value")
    axes[1].set_title(f"share of seeds reaching it within {results['budget']} evaluations")
    axes[2].set_title("best at DP's total time / DP's best")
    axes[3].set_title("best at the end of the run / DP's best")
    for ax in axes:
        ax.set_xlabel("log2 n")
        ax.legend(fontsize=8)
    for ax in axes[2:]:
        ax.axhline(1.0, color="k", lw=1)
    fig.suptitle(f"DFT ruletrees, measured table, {results['seeds']} seeds per searcher: median and p25-p75 "
                 "(numpy plans; shared 2-core machine)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(range(10, 17)), help="log2 of the DFT sizes")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=300, help="evaluations per TAG/MC run at most")
    parser.add_argument("--searchers", nargs="+", default=["tag", "mc"], choices=sorted(SEARCHERS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-codelet", type=int, default=32)
    parser.add_argument("--spread-sample", type=int, default=100)
    parser.add_argument("--max-minutes", type=float, default=60.0, help="skip the remaining sizes after this")
    parser.add_argument("--out", type=Path, default=RESULTS / "dag_search.json")
    parser.add_argument("--plot-only", action="store_true", help="redraw the PNG from the JSON")
    args = parser.parse_args()
    if args.plot_only:
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        return
    started = time.perf_counter()
    results: dict[str, Any] = {
        "what": "TAG vs MC vs DP on DFT ruletrees (paper 002 Fig. 8b), replayed on a lazily measured table",
        "command": "python bench/dag_search.py " + " ".join(
            f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in vars(args).items() if k != "out"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "note": "2 cores shared with other developers' jobs; OPENBLAS_NUM_THREADS=1"},
        "seeds": args.seeds, "budget": args.budget, "searchers": args.searchers, "sizes": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for t in args.sizes:
        if (time.perf_counter() - started) / 60 > args.max_minutes:
            results.setdefault("skipped_sizes", []).append(2**t)
            continue
        print(f"DFT 2^{t}", flush=True)
        results["sizes"].append(bench_size(t, args))
        results["elapsed_s"] = time.perf_counter() - started
        args.out.write_text(json.dumps(results, indent=1))
        plot(results, args.out.with_suffix(".png"))
    print(json.dumps({s["n"]: {name: s["searchers"][name]["evals_to_dp"]["median"] for name in args.searchers}
                      | {"dp": s["dp"]["evaluations"]} for s in results["sizes"]}))


if __name__ == "__main__":
    main()
