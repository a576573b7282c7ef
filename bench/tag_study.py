"""Why TAG plays (almost) uniformly: per vertex, arm counts and Threshold Ascent's two terms (issue 38).

Runs the paper's TAG (``tag``, paper 002 §3.1: alpha = ln(2nk/δ), s = 30, unplayed arms +∞) and the
variant ``tag_scaled`` on measured DFT tables (bench/dag_search_parts.Table: each plan measured once
under the bench protocol and replayed, so both searchers see the same numbers), and logs every
bandit decision: evaluation number, depth of the vertex in the descent, its k arms, plays n, alpha, the
threshold count s_v against the rewards pooled L_v, whether an unplayed arm was forced, and the
chosen arm's exploitation term s_i/n_i and exploration term (alpha + sqrt(2 s_i alpha + alpha²))/n_i. At the
end of each run: the arm counts of every vertex with two or more played arms, and how far they are
from uniform (max/mean count, normalised entropy).

    /work/bin/cpuslot python bench/tag_study.py --sizes 4096 32768 --seeds 5
    # writes bench/results/tag_study.json and .png
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search import problem
from dag_search_parts import Table, run

from searchlab.core.spaces import Arc, Node
from searchlab.searchers import TagScaledSearcher, TagSearcher
from searchlab.searchers._bandit.tag_scaled import ArmTerms, ascent_terms

RESULTS = Path(__file__).parent / "results"


class _Log:
    """Mixin: record each decision's terms; depth restarts at the root."""

    log: list[dict[str, Any]]
    depth: int

    def record(self, vertex: Node, root: Node, t: ArmTerms, evaluations: int) -> None:
        self.depth = 0 if vertex == root else self.depth + 1
        scores = t.scores
        i = max(range(len(scores)), key=scores.__getitem__)
        pooled = t.counts and sum(t.counts)
        self.log.append({"eval": evaluations, "depth": self.depth, "k": len(t.counts), "n": pooled,
                         "alpha": t.alpha, "threshold": t.threshold, "unplayed": sum(c == 0 for c in t.counts),
                         "forced": t.counts[i] == 0, "exploit": t.exploit[i], "explore": t.explore[i],
                         "good_all": sum(t.good) >= sum(t.counts) - 0.5})


class LoggedTag(_Log, TagSearcher):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log, self.depth = [], 0

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        played = self._played[vertex]
        stats = [self.stats(c) if c in played else (0, []) for _, c in arms]
        counts = [n for n, _ in stats]
        n, k = sum(counts), len(counts)
        alpha = math.log(2 * n * k / self.delta) if n > 0 else 0.0
        self.record(vertex, self.graph.root, ascent_terms([x for _, x in stats], counts, self.s, alpha),
                    self._next_eval)
        return super()._index(vertex, arms)  # the paper's own index decides


class LoggedScaled(_Log, TagScaledSearcher):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log, self.depth = [], 0

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        t = self.terms(vertex, arms)
        self.record(vertex, self.graph.root, t, self._next_eval)
        return t.scores


def arm_counts(searcher: Any) -> list[dict[str, Any]]:
    """Every vertex of Ĝ with >= 2 played arms: its depth-free stats and arm counts (descending)."""
    out = []
    for v, children in searcher._played.items():
        counts = sorted((searcher.stats(c)[0] for c in children), reverse=True)
        if len(counts) < 2:
            continue
        total = sum(counts)
        p = [c / total for c in counts if c]
        entropy = -sum(x * math.log(x) for x in p) / math.log(len(counts))
        out.append({"root": v == searcher.graph.root, "arms": len(searcher._arms(v)) or len(counts),
                    "played": len(counts), "n": total, "counts": counts, "max_over_mean": counts[0] / (total / len(counts)),
                    "entropy": entropy})
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 32768])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--exploration", type=float, default=None, help="tag_scaled's (default: its own)")
    parser.add_argument("--quantile", type=float, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "tag_study.json")
    args = parser.parse_args()
    opts = {k: v for k, v in (("exploration", args.exploration), ("quantile", args.quantile)) if v is not None}
    out: dict[str, Any] = {"what": "per-vertex arm counts and threshold-ascent terms, tag vs tag_scaled",
                           "budget": args.budget, "seeds": args.seeds, "tag_scaled": opts, "sizes": []}
    for n in args.sizes:
        table = Table(problem(n, "strided"), "cpu")
        size: dict[str, Any] = {"n": n, "searchers": {}}
        for name, cls in (("tag", LoggedTag), ("tag_scaled", LoggedScaled)):
            runs = []
            for seed in range(args.seeds):
                s = cls(table.problem.space, direction=table.problem.direction, seed=seed,
                        **(opts if name == "tag_scaled" else {}))
                trace = run(s, table, args.budget)
                runs.append({"seed": seed, "final_best": trace.best[-1], "log": s.log, "vertices": arm_counts(s)})
            size["searchers"][name] = {"by_depth": by_depth([e for r in runs for e in r["log"]]), "runs": runs}
            print(n, name, json.dumps(size["searchers"][name]["by_depth"]), flush=True)
        out["sizes"].append(size)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out))
    from tag_study_plot import plot

    plot(out, args.out.with_suffix(".png"))


if __name__ == "__main__":
    main()
