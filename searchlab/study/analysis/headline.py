"""The study report's opening verdict (issue 27, item 3): who is ahead, by how much, and whether it holds.

Why a headline: the tables and matrices below answer every question, but a reader's first question is
"which searcher should I use here, and can I trust that?". Per problem, at a quarter, half and all of the
budget, the searcher with the highest mean fraction of peak and its lead over the runner-up; then the
paired test of the final fraction (``_stats.py``) between the two. An exact two-sided Wilcoxon signed-rank
test on n pairs cannot give p below 2 / 2**n however large the lead (all pairs agreeing), so with fewer
pairs than :func:`pairs_needed` the headline says the lead cannot be tested yet and how many seeds would
be needed, instead of a bare "no difference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import searchlab.study.analysis.metrics as M
from searchlab.study.analysis.aggregate import StudyData
from searchlab.study.analysis.stats import ALPHA, Comparison


@dataclass(frozen=True)
class Headline:
    problem: str
    text: str  # the leader, its lead at each checkpoint, and whether it holds


def pairs_needed(comparisons: int = 1, alpha: float = ALPHA) -> int:
    """Fewest pairs for which an exact two-sided Wilcoxon test can reach ``p < alpha`` after Holm over
    ``comparisons`` tests: the smallest possible p is 2 / 2**n (every pair agrees), times ``comparisons``."""
    n = 1
    while comparisons * 2.0 / 2**n >= alpha:
        n += 1
    return n


def _fractions(data: StudyData, problem: str, checkpoints: list[int]) -> dict[str, np.ndarray]:
    """Mean fraction of peak per searcher at each checkpoint (a run that stopped keeps its best)."""
    per: dict[str, list[np.ndarray]] = {}
    for run in data.runs:
        if run.problem != problem:
            continue
        inst = data.instances[run.instance]
        best = M.extend(M.best_so_far(run.losses), checkpoints[-1])
        frac = M.fraction_of_peak(best, inst.reference_loss, run.direction)
        per.setdefault(run.searcher, []).append(np.array([frac[c - 1] for c in checkpoints]))
    return {s: np.mean(v, axis=0) for s, v in per.items()}


def _number(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else "undefined"


def _holds(table: list[Comparison], leader: str, second: str) -> str:
    c = next((c for c in table if {c.a, c.b} == {leader, second}), None)
    if c is None:
        return "No paired test: the two never ran on the same seeds."
    needed = pairs_needed(len(table))
    holm = f" with Holm over {len(table)} comparisons" if len(table) > 1 else ""
    if c.verdict != "no difference":
        winner = c.verdict.split(" beats ")[0]
        word = "The lead holds" if winner == leader else "The final ranking is reversed"
        return f"{word}: {c.verdict} (Wilcoxon p(Holm) = {c.p_holm:.2g}, {c.pairs} paired seeds)."
    if c.pairs < needed:
        return (f"Whether it holds cannot be tested yet: {c.pairs} paired seeds, and an exact two-sided Wilcoxon "
                f"signed-rank test needs at least {needed} pairs for p < {ALPHA}{holm}; run {needed} or more seeds.")
    return (f"The lead does not hold: no difference (Wilcoxon p(Holm) = {c.p_holm:.2g}, {c.pairs} paired seeds); "
            f"it is inside the noise.")


def headline(data: StudyData, problem: str) -> Headline | None:
    """The verdict for one problem, or None when it has no runs."""
    runs = [r for r in data.runs if r.problem == problem]
    if not runs:
        return None
    budget = max(r.evaluations for r in runs)
    checkpoints = sorted({max(1, math.ceil(budget * q)) for q in (0.25, 0.5, 1.0)})
    means = _fractions(data, problem, checkpoints)
    if len(means) < 2:
        return Headline(problem, f"{problem}: one searcher ({next(iter(means))}), nothing to compare.")
    parts = []
    for i, cp in enumerate(checkpoints):
        ranked = sorted(means, key=lambda s: -np.nan_to_num(means[s][i], nan=-np.inf))
        lead, second = ranked[0], ranked[1]
        gap = means[lead][i] - means[second][i]
        tied = _number(gap) in ("0.00", "-0.00")  # a lead too small to print is a tie (issue 35)
        parts.append(f"after {cp}: {lead} and {second} tie at {_number(means[lead][i])}" if tied else
                     f"after {cp}: {lead} leads {second} by {_number(gap)} of peak "
                     f"({_number(means[lead][i])} vs {_number(means[second][i])})")
    table = [c for c in data.comparisons if c.scope == problem and c.metric == "final"]
    ahead = (f"{lead} and {second} are tied at the end of the budget" if tied
             else f"{lead} is ahead at the end of the budget")
    text = (f"{problem}: {ahead} ({budget} evaluations). "
            f"Mean fraction of peak {'; '.join(parts)}. "
            f"{_holds(table, lead, second).replace('The lead does not hold: no', 'No') if tied else _holds(table, lead, second)}")
    return Headline(problem, text)


def headlines(data: StudyData) -> list[Headline]:
    from searchlab.study.analysis.aggregate import ALL

    problems = [p for p in dict.fromkeys(r["problem"] for r in data.rows) if p != ALL]
    return [h for p in problems if (h := headline(data, p)) is not None]
