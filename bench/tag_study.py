"""Why TAG plays (almost) uniformly: per vertex, arm counts and Threshold Ascent's two terms (issue 38).

Runs the paper's TAG (``tag``, paper 002 §3.1: alpha = ln(2nk/δ), s = 30, unplayed arms +∞) and the variant
``tag_scaled`` on measured DFT tables (bench/common.py: each plan measured once under the search protocol and
replayed, so both searchers see the same numbers), and logs every bandit decision through the searchers'
public ``on_decision`` hook: evaluation number, depth of the vertex in the descent, its k arms, plays n,
alpha, the threshold count s_v against the rewards pooled, whether an unplayed arm was forced, and the chosen
arm's exploitation term s_i/n_i and exploration term (alpha + sqrt(2 s_i alpha + alpha²))/n_i (for ``tag``
computed beside its own index, which decides). At the end of each run: the arm counts of every vertex with two
or more played arms, and how far they are from uniform (max/mean count, normalised entropy). The report is
the figure (SVG).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.common.dft import Table, dft_problem, drive
from bench.harness import Benchmark, Context

COLORS = {"tag": "C0", "tag_scaled": "C1"}


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (4096, 32768)
    seeds: int = 5
    budget: int = 150
    exploration: float | None = None  # tag_scaled's (default: its own)
    quantile: float | None = None


class DecisionLog:
    """The ``on_decision`` hook of one searcher: each decision's terms; depth restarts at the root."""

    def __init__(self, searcher: Any) -> None:
        self.searcher, self.entries, self.depth = searcher, list[dict[str, Any]](), 0
        searcher.on_decision = self

    def terms(self, vertex: Any, arms: Sequence[Any]) -> Any:
        from searchlab.searchers import ascent_terms

        s = self.searcher
        if hasattr(s, "terms"):  # tag_scaled: the terms its index is made of
            return s.terms(vertex, arms)
        played = set(s.played(vertex))
        stats = [s.stats(c) if c in played else (0, []) for _, c in arms]
        counts = [n for n, _ in stats]
        n, k = sum(counts), len(counts)
        alpha = math.log(2 * n * k / s.delta) if n > 0 else 0.0
        return ascent_terms([x for _, x in stats], counts, s.s, alpha)

    def __call__(self, vertex: Any, arms: Sequence[Any]) -> None:
        t = self.terms(vertex, arms)
        self.depth = 0 if vertex == self.searcher.graph.root else self.depth + 1
        i = max(range(len(t.scores)), key=t.scores.__getitem__)
        self.entries.append({"eval": self.searcher.evaluations, "depth": self.depth, "k": len(t.counts),
                             "n": sum(t.counts), "alpha": t.alpha, "threshold": t.threshold,
                             "unplayed": sum(c == 0 for c in t.counts), "forced": t.counts[i] == 0,
                             "exploit": t.exploit[i], "explore": t.explore[i],
                             "good_all": sum(t.good) >= sum(t.counts) - 0.5})


def arm_counts(searcher: Any, vertices: Sequence[Any]) -> list[dict[str, Any]]:
    """Every vertex of Ĝ with >= 2 played arms: its arm counts (descending) and how uniform they are."""
    out = []
    for v in vertices:
        counts = sorted((searcher.stats(c)[0] for c in searcher.played(v)), reverse=True)
        if len(counts) < 2:
            continue
        total = sum(counts)
        p = [c / total for c in counts if c]
        entropy = -sum(x * math.log(x) for x in p) / math.log(len(counts))
        out.append({"root": v == searcher.graph.root, "arms": len(searcher.arms(v)) or len(counts),
                    "played": len(counts), "n": total, "counts": counts,
                    "max_over_mean": counts[0] / (total / len(counts)), "entropy": entropy})
    return out


def by_depth(logs: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in logs:
        groups[min(e["depth"], 3)].append(e)
    out = {}
    for d, es in sorted(groups.items()):
        played = [e for e in es if not e["forced"]]
        ratio = [e["explore"] / e["exploit"] for e in played if e["exploit"] > 0]
        out[f"{d}+" if d == 3 else str(d)] = {
            "decisions": len(es), "forced_unplayed": sum(e["forced"] for e in es) / len(es),
            "all_rewards_good": sum(e["good_all"] for e in played) / max(1, len(played)),
            "median_k": statistics.median(e["k"] for e in es), "median_n": statistics.median(e["n"] for e in es),
            "median_alpha": statistics.median(e["alpha"] for e in es),
            "median_explore_over_exploit": statistics.median(ratio) if ratio else None}
    return out


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.searchers import TagScaledSearcher, TagSearcher

    opts: dict[str, Any] = {k: v for k, v in (("exploration", o.exploration), ("quantile", o.quantile)) if v is not None}
    ctx.used_seeds(range(o.seeds))
    results: dict[str, Any] = {"what": "per-vertex arm counts and threshold-ascent terms, tag vs tag_scaled",
                               "budget": o.budget, "seeds": o.seeds, "tag_scaled": opts, "sizes": []}
    for n in o.sizes:
        table = Table(dft_problem(n, "strided"), "cpu")
        size: dict[str, Any] = {"n": n, "searchers": {}}
        classes: dict[str, Any] = {"tag": TagSearcher, "tag_scaled": TagScaledSearcher}
        for name, cls in classes.items():
            runs: list[dict[str, Any]] = []
            for seed in range(o.seeds):
                s = cls(table.problem.space, direction=table.problem.direction, seed=seed,
                        **(opts if name == "tag_scaled" else {}))
                log = DecisionLog(s)
                trace = drive(s, table, o.budget)
                runs.append({"seed": seed, "final_best": trace.best[-1], "log": log.entries,
                             "vertices": arm_counts(s, _reached(s))})
            size["searchers"][name] = {"by_depth": by_depth([e for r in runs for e in r["log"]]), "runs": runs}
            ctx.log(f"n={n} {name}: {size['searchers'][name]['by_depth']}")
        results["sizes"].append(size)
        ctx.checkpoint(results)
    return results


def _reached(searcher: Any) -> list[Any]:
    """Every vertex of Ĝ: the root and, depth first, the children played below it."""
    out, todo, seen = [], [searcher.graph.root], set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        out.append(v)
        todo.extend(searcher.played(v))
    return out


def _depth_per_eval(runs: list[Mapping[str, Any]]) -> tuple[list[int], list[float]]:
    """Median over runs of the deepest decision of each evaluation's descent."""
    per: dict[int, list[int]] = defaultdict(list)
    for r in runs:
        deepest: dict[int, int] = defaultdict(int)
        for e in r["log"]:
            deepest[e["eval"]] = max(deepest[e["eval"]], e["depth"])
        for ev, d in deepest.items():
            per[ev].append(d)
    xs = sorted(per)
    return xs, [sorted(per[x])[len(per[x]) // 2] for x in xs]


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    """Root arm plays, forced pulls and all-good shares by depth, exploration ÷ exploitation, descent depth."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = results["sizes"][-1]
    fig, axes = plt.subplots(1, 4, figsize=(22, 4.6))
    for name, data in size["searchers"].items():
        c, off = COLORS.get(name), 0.0 if name == "tag" else 0.4
        root = next((v for v in data["runs"][0]["vertices"] if v["root"]), None)
        if root:
            axes[0].bar([i + off for i in range(len(root["counts"]))], root["counts"], width=0.4, color=c,
                        label=f"{name} ({root['played']} of {root['arms']} arms)")
        depths = list(data["by_depth"])
        x = range(len(depths))
        axes[1].bar([i + off for i in x], [data["by_depth"][d]["forced_unplayed"] for d in depths], width=0.2,
                    color=c, label=f"{name}: unplayed arm pulled")
        axes[1].bar([i + off + 0.2 for i in x], [data["by_depth"][d]["all_rewards_good"] for d in depths], width=0.2,
                    color=c, alpha=0.45, hatch="//", label=f"{name}: every reward 'good' (s_v >= L_v)")
        axes[1].set_xticks([i + 0.3 for i in x], [f"depth {d}" for d in depths])
        pts = [(e["eval"], e["explore"] / e["exploit"]) for r in data["runs"] for e in r["log"]
               if e["depth"] == 0 and not e["forced"] and e["exploit"] > 0]
        if pts:
            axes[2].scatter(*zip(*pts), s=4, color=c, alpha=0.3, label=name)
        axes[3].plot(*_depth_per_eval(data["runs"]), color=c, label=name)
    axes[0].set_title(f"n={size['n']}, seed 0: plays per root arm at the end", fontsize=9)
    axes[0].set_xlabel("arm (sorted by plays)")
    axes[1].set_title("share of decisions, by depth (all seeds)", fontsize=9)
    axes[2].set_title("root: chosen arm's exploration ÷ exploitation term", fontsize=9)
    axes[2].set_yscale("log")
    axes[2].axhline(1.0, color="k", lw=1)
    axes[2].set_xlabel("evaluation")
    axes[3].set_title("deepest decision of each descent (median over seeds)", fontsize=9)
    axes[3].set_xlabel("evaluation")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"TAG (paper 002 §3.1) vs tag_scaled on the DFT library, {results['seeds']} seeds, "
                 f"{results['budget']} evaluations", fontsize=10)
    fig.tight_layout()
    ctx.save_figure(fig)


BENCHMARK = Benchmark("tag_study", "why TAG plays uniformly: per-vertex arm counts and threshold ascent's terms, "
                      "tag vs tag_scaled", Options, run, report, cited_by=("docs/grammar.md",))
