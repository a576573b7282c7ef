"""The markdown table of bench/dag_heldout.py results (docs/grammar.md).

    python bench/dag_heldout_table.py bench/results/dag_heldout.json [more.json ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from typing import Any


def _cell(entry: dict[str, Any], key: str) -> str:
    lo, hi = entry[key]["median_ci95"]
    return f"{entry[key]['median']:.2f} [{lo:.2f}, {hi:.2f}]"


def _test(tests: dict[str, Any], n: int, other: str, key: str) -> str:
    t = tests.get(f"n={n}:tag_scaled_vs_{other}:{key}")
    if t is None:
        return "—"
    return f"{t['wins']}-{t['losses']}, p = {t['p']:.2g} ({t['p_holm']:.2g})"


def rows(results: list[dict[str, Any]]) -> list[str]:
    """One row per size; Holm's adjustment redone over the tests of all the files together."""
    from dag_heldout import holm

    pooled = {k: v for res in results for k, v in res["tests"].items()}
    adjusted = holm({k: v["p"] for k, v in pooled.items()})
    for res in results:
        res["tests"] = {k: v | {"p_holm": adjusted[k]} for k, v in res["tests"].items()}
    names = ["tag_scaled", "mc", "random"]
    out = ["| n | seeds x evaluations | best at the end ÷ best any run found, median [95 % CI]: " + " / ".join(names)
           + " | anytime area (mean best-so-far ÷ best): " + " / ".join(names)
           + " | tag_scaled vs MC, wins-losses, p (Holm): end / area | tag_scaled vs random: end / area |",
           "|---|---|---|---|---|---|"]
    for res in results:
        for size in res["sizes"]:
            n, s = size["n"], size["searchers"]
            present = [x for x in names if x in s]
            out.append(f"| {n} | {size['seeds']} x {size['budget']} | "
                       + " / ".join(_cell(s[x], "final") for x in present) + " | "
                       + " / ".join(_cell(s[x], "area") for x in present) + " | "
                       + f"{_test(res['tests'], n, 'mc', 'final')}; {_test(res['tests'], n, 'mc', 'area')} | "
                       + f"{_test(res['tests'], n, 'random', 'final')}; {_test(res['tests'], n, 'random', 'area')} |")
    return out


if __name__ == "__main__":
    print("\n".join(rows([json.loads(Path(p).read_text()) for p in sys.argv[1:]])))
