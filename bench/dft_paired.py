"""Searchers' DFT plans against each other and one fixed FFTW reference, in the same rounds (issue 38, item 3).

Why besides bench/dft_fftw.py: there, every seed plans FFTW afresh, and FFTW_MEASURE picks between near-equal
plans by noise; at 2^16 its plan ran at 8.8-17.4 pseudo-Gflop/s from one seed to the next on this machine
(2026-11-28), so a ratio "ours / FFTW" moved with FFTW's luck as much as with ours, and two searchers run
minutes apart were compared through different denominators.

Here, per size: each searcher (``--searchers``) searches ``--budget`` evaluations for each seed (live, every
plan checked and timed under the search protocol, as in bench/dft_fftw.py); then ``--fftw-plans`` FFTW plans
are made (``--flag``, wisdom forgotten before each), and **every distinct plan found and every FFTW plan are
timed in the same ``--rounds`` rounds**, in an order rotated every round. Reported per run: its plan's Mflop/s
(median over rounds) and its ratio to the **fastest** FFTW plan (the best of several FFTW_MEASURE plannings),
per round, median with its 95 % order-statistic interval; per pair of searchers: the paired (same seed) ratio
of their plans, median over seeds with its interval, and Wilcoxon's signed-rank p-value over seeds. Nothing is
picked: every seed is reported. Run it under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
from dataclasses import dataclass
from typing import Any, Literal

from bench.harness import Benchmark, Context, UsageError

NAMES = ("auto", "dp_tag", "tag_scaled", "tag", "mc")


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (65536,)
    searchers: tuple[str, ...] = ("auto", "tag_scaled")  # of NAMES
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    budget: int = 150
    rounds: int = 9
    fftw_plans: int = 3
    flag: Literal["estimate", "measure", "patient"] = "measure"
    batch_s: float = 0.0005


def search(problem: Any, name: str, seed: int, budget: int) -> str:
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import AutoSearcher, DpTagSearcher, McSearcher, TagScaledSearcher, TagSearcher

    cls = {"auto": AutoSearcher, "dp_tag": DpTagSearcher, "tag_scaled": TagScaledSearcher, "tag": TagSearcher,
           "mc": McSearcher}[name]
    outcome = optimize(problem, cls(problem.space, direction=problem.direction, seed=seed), Budget(evaluations=budget))
    if outcome.best is None:
        raise SystemExit(f"dft_paired: {name} seed {seed}: no plan succeeded")
    return str(outcome.best.config["word"])


def one_size(n: int, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_PROTOCOL, DftProblem
    from searchlab.adapters.grammar.library import FftwPlan
    from searchlab.core.measure import median_ci
    from searchlab.core.records import Config

    problem = DftProblem(size=n, measure=SEARCH_PROTOCOL, batch_s=o.batch_s)
    problem.setup(problem.device)
    words = {(name, seed): search(problem, name, seed, o.budget) for name in o.searchers for seed in o.seeds}
    times: dict[str, list[float]] = {w: [] for w in sorted(set(words.values()))}
    with contextlib.ExitStack() as stack:
        fftw = [stack.enter_context(FftwPlan(n, o.flag, problem.seed, problem.max_codelet))
                for _ in range(o.fftw_plans)]
        times |= {f"fftw{i}": [] for i in range(o.fftw_plans)}
        keys = list(times)
        for r in range(o.rounds):
            shift = r % len(keys)
            for key in keys[shift:] + keys[:shift]:
                if key.startswith("fftw"):
                    plan = fftw[int(key[4:])]
                    seconds = plan.measure(problem.protocol, problem.batch_s, problem.clock, problem.pin).median
                else:
                    m = problem.evaluate(Config(word=key))
                    if m.objective is None:
                        raise SystemExit(f"dft_paired: {key}: {m.message}")
                    seconds = float(m.sensors["time_median_s"])
                times[key].append(seconds)
        mflops = fftw[0].mflops
    ref = min((k for k in times if k.startswith("fftw")), key=lambda k: statistics.median(times[k]))
    runs = []
    for (name, seed), word in words.items():
        ratios = [f / w for f, w in zip(times[ref], times[word])]
        runs.append({"searcher": name, "seed": seed, "word": word, "describe": problem.describe_config(Config(word=word)),
                     "mflops": mflops(statistics.median(times[word])), "over_fftw": statistics.median(ratios),
                     "over_fftw_ci95": list(median_ci(ratios))})
    return {"n": n, "fftw": {k: mflops(statistics.median(v)) for k, v in times.items() if k.startswith("fftw")},
            "reference": ref, "runs": runs, "pairs": pairs(runs, times, o)}


def pairs(runs: list[dict[str, Any]], times: dict[str, list[float]], o: Options) -> dict[str, Any]:
    """a's plan's speed over b's, per seed (median over the shared rounds); over seeds: median, interval, Wilcoxon."""
    from scipy.stats import wilcoxon

    from searchlab.core.measure import median_ci

    by = {(r["searcher"], r["seed"]): r for r in runs}
    out: dict[str, Any] = {}
    for i, a in enumerate(o.searchers):
        for b in o.searchers[i + 1:]:
            ratios = [statistics.median(t2 / t1 for t1, t2 in zip(times[by[a, s]["word"]], times[by[b, s]["word"]]))
                      for s in o.seeds]
            diff = [x - 1 for x in ratios]
            p = 1.0 if all(d == 0 for d in diff) else float(wilcoxon(diff).pvalue)
            out[f"{a}_over_{b}"] = {"per_seed": ratios, "median": statistics.median(ratios),
                                    "ci95": list(median_ci(ratios)), "wins": sum(d > 0 for d in diff),
                                    "losses": sum(d < 0 for d in diff), "wilcoxon_p": p}
    return out


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_PROTOCOL

    unknown = sorted(set(o.searchers) - set(NAMES))
    if unknown:
        raise UsageError(f"dft_paired: unknown searchers {unknown} (known: {', '.join(NAMES)})")
    ctx.used_seeds(o.seeds)
    results: dict[str, Any] = {"what": (__doc__ or "").splitlines()[0], "budget": o.budget, "rounds": o.rounds,
                               "protocol": dataclasses.asdict(SEARCH_PROTOCOL) | {"batch_s": o.batch_s},
                               "flag": o.flag, "sizes": []}
    for n in o.sizes:
        res = one_size(n, o)
        results["sizes"].append(res)
        ctx.log(f"n={n}: FFTW plans {[round(v) for v in res['fftw'].values()]} Mflop/s")
        for r in res["runs"]:
            lo, hi = r["over_fftw_ci95"]
            ctx.log(f"  {r['searcher']} seed {r['seed']}: {r['mflops']:.0f} Mflop/s, {r['over_fftw']:.3f} "
                    f"[{lo:.3f}, {hi:.3f}] of the fastest FFTW plan  {r['describe']}")
        for k, v in res["pairs"].items():
            ctx.log(f"  {k}: {v['median']:.3f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}], {v['wins']}-{v['losses']}, "
                    f"p {v['wilcoxon_p']:.3g}")
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("dft_paired", "searchers' DFT plans and several FFTW_MEASURE plans timed in the same rounds: "
                      "ratios to the fastest FFTW plan, paired ratios between searchers", Options, run,
                      cited_by=("docs/grammar.md",))
