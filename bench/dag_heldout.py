"""tag_scaled (or ``--focus``) against MC, random and the paper's TAG on held-out DFT sizes (issue 38, item 2).

The sizes 2^10, 2^16, 2^20, 3000, 10^5 and 10007 were not used to choose tag_scaled's settings (those came from
4096, 32768, 6000, 50000 and 2^18: docs/grammar.md). Per size every plan any run proposes is measured once
(bench/common.py's table, the search protocol, thread CPU clock, pinned) and replayed to every later run, so
all searchers and seeds see the same numbers; runs are paired by seed. Per run: the best Mflop/s after the
budget and the mean of the best-so-far over the budget (the anytime area), both ÷ the best plan any run found
at that size. Tests: two-sided Wilcoxon signed-rank over the seeds (paired), the focus searcher against each
other on both measures, Holm-corrected over every test of the run. The report is the markdown table of
docs/grammar.md (``<out>_table.md``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.common.dft import Table, dft_problem, drive
from bench.harness import Benchmark, Context, UsageError
from searchlab.core.measure import median_ci
from searchlab.study.analysis.stats import holm

NAMES = ("tag_scaled", "mc", "random", "tag", "dp_tag")


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (1024, 3000, 10007, 65536, 100_000)
    seeds: int = 20
    budget: int = 150
    searchers: tuple[str, ...] = ("tag_scaled", "mc", "random", "tag")  # of NAMES
    big: int = 2**20  # from this size: big_seeds, big_budget, big_searchers
    big_seeds: int = 10
    big_budget: int = 60
    big_searchers: tuple[str, ...] = ("tag_scaled", "mc")
    focus: str = "tag_scaled"  # the searcher every other one is tested against


def _searcher(name: str, problem: Any, seed: int) -> Any:
    from searchlab.searchers import DpTagSearcher, McSearcher, RandomSearcher, TagScaledSearcher, TagSearcher

    classes = {"tag_scaled": TagScaledSearcher, "mc": McSearcher, "random": RandomSearcher, "tag": TagSearcher,
               "dp_tag": DpTagSearcher}
    return classes[name](problem.space, direction=problem.direction, seed=seed)


def one_size(ctx: Context, n: int, seeds: int, budget: int, searchers: tuple[str, ...]) -> dict[str, Any]:
    started = time.perf_counter()
    table = Table(dft_problem(n, "strided"), "cpu")
    runs: dict[str, list[dict[str, Any]]] = {}
    for name in searchers:
        runs[name] = []
        for seed in range(seeds):
            s = _searcher(name, table.problem, seed)
            s.set_budget(budget)
            tr = drive(s, table, budget)
            best = tr.best + [tr.best[-1]] * (budget - len(tr.best))
            runs[name].append({"seed": seed, "final": best[-1], "area": sum(best) / budget, "word": tr.best_word,
                               "overhead_s": tr.overhead_s, "curve": best})
        ctx.log(f"n={n} {name}: median final {statistics.median(r['final'] for r in runs[name]):.0f} Mflop/s")
    top = max(r["final"] for rs in runs.values() for r in rs)
    out: dict[str, Any] = {"n": n, "seeds": seeds, "budget": budget, "best_mflops": top, "searchers": {}}
    for name, rs in runs.items():
        entry: dict[str, Any] = {"runs": [{k: v for k, v in r.items() if k != "curve"} for r in rs]}
        for key in ("final", "area"):
            values = [r[key] / top for r in rs]
            entry[key] = {"median": statistics.median(values), "median_ci95": list(median_ci(values))}
        entry["curve_median"] = [statistics.median(r["curve"][i] for r in rs) / top for i in range(budget)]
        out["searchers"][name] = entry
    out["timed_plans"], out["timing_cpu_s"] = len(table.rows), table.timing_s
    out["bench_s"], out["raw"] = time.perf_counter() - started, runs
    return out


def tests(sizes: list[dict[str, Any]], focus: str) -> dict[str, Any]:
    """The focus searcher against every other, per size and measure: paired Wilcoxon, Holm over all."""
    from scipy.stats import wilcoxon

    raw: dict[str, dict[str, Any]] = {}
    for size in sizes:
        mine = size["raw"].get(focus)
        for name, rs in size["raw"].items():
            if name == focus or mine is None:
                continue
            for key in ("final", "area"):
                a, b = [r[key] for r in mine], [r[key] for r in rs]
                diff = [x - y for x, y in zip(a, b)]
                p = 1.0 if all(d == 0 for d in diff) else float(wilcoxon(a, b, zero_method="zsplit").pvalue)
                raw[f"n={size['n']}:{focus}_vs_{name}:{key}"] = {
                    "p": p, "median_difference_over_best": statistics.median(diff) / size["best_mflops"],
                    "wins": sum(d > 0 for d in diff), "losses": sum(d < 0 for d in diff), "seeds": len(diff)}
    adjusted = dict(zip(raw, holm([v["p"] for v in raw.values()])))
    return {k: v | {"p_holm": adjusted[k]} for k, v in raw.items()}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    unknown = sorted(set(o.searchers + o.big_searchers + (o.focus,)) - set(NAMES))
    if unknown:
        raise UsageError(f"dag_heldout: unknown searchers {unknown} (known: {', '.join(NAMES)})")
    ctx.used_seeds(range(max(o.seeds, o.big_seeds)))
    sizes: list[dict[str, Any]] = []
    results: dict[str, Any] = {"what": (__doc__ or "").splitlines()[0], "focus": o.focus, "sizes": []}
    for n in o.sizes:
        big = n >= o.big
        sizes.append(one_size(ctx, n, o.big_seeds if big else o.seeds, o.big_budget if big else o.budget,
                              o.big_searchers if big else o.searchers))
        results["tests"] = tests(sizes, o.focus)
        results["sizes"] = [{k: v for k, v in s.items() if k != "raw"} for s in sizes]
        ctx.checkpoint(results)
    for key, t in results["tests"].items():
        ctx.log(f"{key}: {t['wins']}-{t['losses']} of {t['seeds']}, median diff {t['median_difference_over_best']:+.3f}"
                f", p {t['p']:.3g}, Holm {t['p_holm']:.3g}")
    return results


def _cell(entry: Mapping[str, Any], key: str) -> str:
    lo, hi = entry[key]["median_ci95"]
    return f"{entry[key]['median']:.2f} [{lo:.2f}, {hi:.2f}]"


def _test(tests_: Mapping[str, Any], focus: str, n: int, other: str, key: str) -> str:
    t = tests_.get(f"n={n}:{focus}_vs_{other}:{key}")
    return "—" if t is None else f"{t['wins']}-{t['losses']}, p = {t['p']:.2g} ({t['p_holm']:.2g})"


def rows(results: Mapping[str, Any]) -> list[str]:
    """One row per size (the table of docs/grammar.md)."""
    focus = results.get("focus", "tag_scaled")
    names = [focus, *(n for n in ("mc", "random") if n != focus)]
    out = ["| n | seeds x evaluations | best at the end ÷ best any run found, median [95 % CI]: " + " / ".join(names)
           + " | anytime area (mean best-so-far ÷ best): " + " / ".join(names)
           + f" | {focus} vs MC, wins-losses, p (Holm): end / area | {focus} vs random: end / area |",
           "|---|---|---|---|---|---|"]
    t = results["tests"]
    for size in results["sizes"]:
        n, s = size["n"], size["searchers"]
        present = [x for x in names if x in s]
        out.append(f"| {n} | {size['seeds']} x {size['budget']} | " + " / ".join(_cell(s[x], "final") for x in present)
                   + " | " + " / ".join(_cell(s[x], "area") for x in present) + " | "
                   + f"{_test(t, focus, n, 'mc', 'final')}; {_test(t, focus, n, 'mc', 'area')} | "
                   + f"{_test(t, focus, n, 'random', 'final')}; {_test(t, focus, n, 'random', 'area')} |")
    return out


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    table = "\n".join(rows(results)) + "\n"
    ctx.artefact("_table.md").write_text(table, encoding="utf-8")
    print(table)


BENCHMARK = Benchmark("dag_heldout", "tag_scaled (or --focus) vs MC, random, TAG on held-out DFT sizes, paired, "
                      "Wilcoxon + Holm", Options, run, report, cited_by=("docs/grammar.md",))
