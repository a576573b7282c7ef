"""Default versus tuned in a study (searchlab.study.analysis.tuned): pooling over folds and the paired table.

The expected numbers are computed here by hand from the recorded losses (known optimum 1, minimised:
fraction of the optimum = 1 / best so far), not taken from the code under test.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from searchlab.study.analysis.aggregate import aggregate
from searchlab.study.analysis.collect import collect_runs
from searchlab.study.analysis.tuned import ALL, TunedRow, defaults_of, pool, tuned_table
from tests.study.test_study_data import make_run


def test_defaults_are_the_untuned_entries_with_the_same_overrides() -> None:
    specs = {"g": ("genetic", None), "g_t": (["searcher=genetic"], {"evaluations": 3}),
             "sa_t": (["searcher=simulated_annealing"], {"evaluations": 3}),
             "g2": (["searcher=genetic", "searcher.popsize=4"], None)}
    pairs, notes = defaults_of(specs)
    assert pairs == {"g_t": "g"}
    assert len(notes) == 1 and notes[0].startswith("sa_t: no untuned searcher")


def test_pool_relabels_only_tuned_searchers(tmp_path: Path) -> None:
    make_run(tmp_path / "t0", [2, 1], searcher="t", seed=0, searcher_cfg={"_target_": "x.t", "k": 1})
    make_run(tmp_path / "t1", [2, 1], searcher="t", seed=1, searcher_cfg={"_target_": "x.t", "k": 2})
    make_run(tmp_path / "u0", [2, 1], searcher="u", seed=0, searcher_cfg={"_target_": "x.u", "k": 1})
    make_run(tmp_path / "u1", [2, 1], searcher="u", seed=1, searcher_cfg={"_target_": "x.u", "k": 2})
    runs, _ = collect_runs([tmp_path])
    assert sorted(r.searcher for r in runs) == ["t[k=1]", "t[k=2]", "u[k=1]", "u[k=2]"]
    assert sorted(r.searcher for r in pool(runs, ["t"])) == ["t", "t", "u[k=1]", "u[k=2]"]


def _study(root: Path) -> list[TunedRow]:
    """Two problems x three seeds; the tuned row (two folds' settings) is better on every pair."""
    for problem in ("p", "q"):
        for seed in range(3):
            make_run(root / f"{problem}d{seed}", [4, 2 + seed, 2], problem=problem, searcher="d", seed=seed)
            make_run(root / f"{problem}t{seed}", [2, 1, 1], problem=problem, searcher="t", seed=seed,
                     searcher_cfg={"_target_": "x.t", "fold": problem})
    runs, notes = collect_runs([root])
    data = aggregate(pool(runs, ["t"]), notes)
    return tuned_table(data, {"t": "d"})


def test_the_table_pairs_by_problem_and_seed_and_pools_the_folds(tmp_path: Path) -> None:
    rows = {(r.scope, r.metric): r for r in _study(tmp_path)}
    assert set(rows) == {(s, m) for s in ("p", "q", ALL) for m in ("fraction", "final")}
    pooled = rows[(ALL, "fraction")]
    assert pooled.pairs == 6
    # default, seed s: best so far 4, min(4, 2 + s), 2 -> fractions 1/4, 1/min(4, 2+s), 1/2
    default = [(0.25 + 1 / min(4, 2 + s) + 0.5) / 3 for s in range(3)]
    tuned = (0.5 + 1 + 1) / 3
    assert math.isclose(pooled.default_mean, sum(default) / 3)
    assert math.isclose(pooled.tuned_mean, tuned)
    assert math.isclose(pooled.difference, tuned - sum(default) / 3)
    assert pooled.low <= pooled.difference <= pooled.high
    final = rows[(ALL, "final")]
    assert math.isclose(final.default_mean, 0.5) and math.isclose(final.tuned_mean, 1.0)
    # six pairs, all in the tuned row's favour: the exact two-sided signed-rank p is 2 / 2**6
    assert math.isclose(final.p_value, 2 / 64)
    assert final.verdict == "tuned better"
    assert rows[("p", "final")].pairs == 3 and rows[("p", "final")].verdict == "no difference"  # p = 0.25


@pytest.mark.parametrize("difference, low, high, p_holm, verdict", [
    (0.1, 0.05, 0.15, 0.01, "tuned better"),
    (-0.1, -0.15, -0.05, 0.01, "tuned worse"),
    (0.1, -0.01, 0.2, 0.01, "no difference"),  # interval holds 0
    (0.1, 0.05, 0.15, 0.2, "no difference"),  # not significant after Holm
])
def test_verdicts(difference: float, low: float, high: float, p_holm: float, verdict: str) -> None:
    row = TunedRow(ALL, "final", "t", "d", 40, 0.5, 0.5 + difference, difference, low, high, p_holm, p_holm)
    assert row.verdict == verdict


def test_the_verdict_line_names_each_outcome(tmp_path: Path) -> None:
    from searchlab.study.analysis.tuned import verdict_line

    line = verdict_line(_study(tmp_path))
    assert line is not None and line.startswith("Default versus tuned on test problems only ((all problems)")
    assert "6 pairs each, Holm over 1" in line and "tuned better for 1 (t +" in line
