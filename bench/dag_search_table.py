"""The wall-clock comparison of bench/dag_search.py as a markdown table (issue 26, item 3).

Reads the JSON that ``bench/dag_search.py`` wrote and prints one row per size: DP's run
(evaluations, wall seconds), each searcher's evaluations and wall seconds to DP's quality
(median and its 95 % order-statistic interval over seeds; "—" where too few seeds reached
it), the best at DP's own wall time and at the end (÷ DP's best), the best plans
re-measured interleaved against DP's, the TAG-vs-MC Mann-Whitney p-values with Holm's
correction over every test in the file, and the run's best plan against FFTW_MEASURE.

    python bench/dag_search_table.py bench/results/dag_search_20seeds_2026-11-26.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search_parts import summary

from searchlab.study.analysis.stats import holm


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _med(s: dict[str, Any], digits: int = 2) -> str:
    lo, hi = s.get("median_ci95") or (None, None)
    return f"{_f(s.get('median'), digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def tenth(searcher: dict[str, Any], dp: dict[str, Any]) -> dict[str, Any]:
    """Best so far at a tenth of DP's wall time ÷ DP's best, per seed (paper 002 Fig. 8(b):
    TAG reaches DP's quality in about a tenth of DP's time); read from each run's stored
    curve (every k-th evaluation, so a lower bound by at most k - 1 evaluations)."""
    at = dp["time_s"] / 10
    values = []
    for run in searcher["runs"]:
        c = run["curve"]
        within = [b for b, t in zip(c["best"], c["time_s"]) if t <= at]
        values.append((within[-1] if within else 0.0) / dp["best_mflops"])
    return summary(values)


def rows(results: dict[str, Any]) -> list[str]:
    names = list(results["searchers"])
    raw = {
        f"{s['n']}:{k}": float(t["p_value"])
        for s in results["sizes"]
        for k, t in s["tests"].items()
        if t.get("p_value") is not None
    }
    adjusted = dict(zip(raw, holm(list(raw.values()))))
    head = (
        "| n | DP: evaluations, wall s | evaluations to DP (-3 %), median: "
        + " / ".join(names)
        + " | wall s to DP, median [95 % CI]: "
        + " / ".join(names)
        + f" | seeds reaching DP (of {results['seeds']}) | best at DP's wall time ÷ DP: "
        + " / ".join(names)
        + " | best at a tenth of DP's wall time ÷ DP: "
        + " / ".join(names)
        + " | best at the end ÷ DP: "
        + " / ".join(names)
        + " | re-measured best plan ÷ DP's plan [95 % CI]: "
        + " / ".join(n for n in names if n != "random")
        + " | TAG vs MC, p (Holm): at DP's time / at the end | best plan ÷ FFTW_MEASURE [95 % CI] (plan) |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in results["sizes"]:
        dp = next(iter(s["dp"].values()))
        srch = s["searchers"]
        cells = [
            f"{s['n']}" + ("" if s.get("budget") == results["budget"] else f" (budget {s.get('budget')})"),
            f"{dp['evaluations']}, {dp['time_s']:.2f} s",
            " / ".join(_f(srch[n]["evals_to_dp"]["median"], 0) for n in srch),
            " / ".join(_med(srch[n]["time_to_dp_s"]) for n in srch),
            " / ".join(str(srch[n]["evals_to_dp"]["reached"]) for n in srch),
            " / ".join(_med(srch[n]["best_at_dp_time_over_dp"]) for n in srch),
            " / ".join(_med(tenth(srch[n], dp)) for n in srch),
            " / ".join(_med(srch[n]["final_best_over_dp"]) for n in srch),
            " / ".join(
                f"{_f(c['over_reference_median'])} [{_f(c['over_reference_ci95'][0])}, {_f(c['over_reference_ci95'][1])}]"
                for n, c in s["confirm"].items()
                if n in srch and n != "random"
            ),
            " / ".join(
                f"{_f(raw.get(key), 3)} ({_f(adjusted.get(key), 2)})"
                for key in (f"{s['n']}:tag_vs_mc:best_at_dp_time", f"{s['n']}:tag_vs_mc:final_best")
            ),
            _fftw(s["versus_fftw"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _fftw(v: dict[str, Any]) -> str:
    lo, hi = v["ours_over_fftw_ci95"]
    plan = v["describe"].split(" = ", 1)[-1]
    return f"{v['ours_over_fftw_median']:.2f} [{lo:.2f}, {hi:.2f}] ({plan})"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results" / "dag_search.json"
    results = json.loads(path.read_text())
    print("\n".join(rows(results)))
    speed = []
    for s in results["sizes"]:
        dp_t = next(iter(s["dp"].values()))["time_s"]
        t = s["searchers"].get("tag", {}).get("time_to_dp_s", {}).get("median")
        verdict = "TAG did not reach DP in most seeds" if t is None else f"DP time ÷ TAG time {dp_t / t:.2f}"
        speed.append(f"{s['n']}: {verdict}")
    print("\n" + "; ".join(speed))


if __name__ == "__main__":
    main()
