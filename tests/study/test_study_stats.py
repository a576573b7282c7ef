"""Study statistics against hand-computed cases: bootstrap bands, Wilcoxon, Holm, rank-biserial,
and the Kernel Tuner methodology's score (definitions: searchlab/study/analysis/stats.py, _methodology.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from searchlab.study.analysis import methodology as KT
from searchlab.study.analysis import stats as S
from searchlab.study.analysis.aggregate import aggregate
from searchlab.study.analysis.collect import collect_runs
from tests.study.test_study_data import make_run

NAN = math.nan


def test_bootstrap_band_of_two_runs_spans_their_values() -> None:
    # resampled means of {0, 2} are 0 (1/4), 1 (1/2), 2 (1/4): the 95 % band is [0, 2]; a column that never varies: [1, 1]
    mean, lo, hi = S.bootstrap_band(np.array([[0.0, 1.0], [2.0, 1.0]]))
    assert mean.tolist() == [1.0, 1.0]
    assert lo.tolist() == [0.0, 1.0] and hi.tolist() == [2.0, 1.0]


def test_bootstrap_band_is_seeded_and_shrinks_like_the_standard_error() -> None:
    runs = np.random.default_rng(0).normal(size=(400, 3))
    a = S.bootstrap_band(runs, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a, S.bootstrap_band(runs, seed=1)))
    assert not np.array_equal(a[1], S.bootstrap_band(runs, seed=2)[1])
    half = (a[2] - a[1]) / 2  # ~ 1.96 / sqrt(400) = 0.098 for unit-variance runs
    assert half == pytest.approx(1.96 * runs.std(axis=0) / 20, rel=0.15)
    one = S.bootstrap_band(runs[:1])
    assert np.array_equal(one[1], one[2])


def test_rank_biserial_by_hand() -> None:
    assert S.rank_biserial([1, 2, 3]) == 1.0
    assert S.rank_biserial([-1, -2]) == -1.0
    assert S.rank_biserial([2, -1]) == pytest.approx((2 - 1) / 3)  # ranks |2| -> 2, |-1| -> 1
    assert S.rank_biserial([1, 2, -3, 0]) == 0.0  # zero dropped; R+ = 1 + 2 = R- = 3
    assert S.rank_biserial([0, 0]) == 0.0


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04: 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04)
    assert S.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert S.holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    out = S.holm([0.02, NAN])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1])


def test_wilcoxon_exact_p_values_by_hand() -> None:
    # n non-zero differences all of one sign: two-sided exact p = 2 / 2^n; a zero difference is dropped
    assert S.wilcoxon_pair([1, 2, 3, 4, 5], [0] * 5) == (0.0, pytest.approx(2 / 32))
    assert S.wilcoxon_pair([0, 1, 2, 3, 4, 5], [0, 0, 0, 0, 0, 0])[1] == pytest.approx(2 / 32)
    assert S.wilcoxon_pair([1, 1], [1, 1])[1] == 1.0  # nothing differs


def _values(n: int) -> dict[str, dict[tuple[object, ...], float]]:
    keys = [("p", s) for s in range(n)]
    return {"a": {k: 1.0 + 0.1 * i for i, k in enumerate(keys)}, "b": {k: 0.5 for k in keys},
            "c": {k: 0.5 for k in keys}}


def test_compare_all_holm_turns_a_raw_win_into_no_difference() -> None:
    # 6 seeds: a > b and a > c in every pair, raw p = 2/64 each; b = c: p = 1
    # Holm over 3 pairs: 3 * 2/64 = 0.09375 for both wins -> no difference at 0.05
    six = {(c.a, c.b): c for c in S.compare_all("p", "auc", _values(6))}
    assert six["a", "b"].p_value == pytest.approx(2 / 64) and six["a", "b"].p_holm == pytest.approx(3 * 2 / 64)
    assert six["a", "b"].verdict == "no difference" and six["b", "c"].p_holm == 1.0
    assert (six["a", "b"].pairs, six["a", "b"].a_better, six["b", "c"].ties) == (6, 6, 6)
    # 8 seeds: raw 2/256, Holm 3 * 2/256 = 0.0234: a beats b and c, with effect 1
    eight = {(c.a, c.b): c for c in S.compare_all("p", "auc", _values(8))}
    assert eight["a", "c"].p_holm == pytest.approx(3 * 2 / 256)
    assert eight["a", "c"].verdict == "a beats c" and eight["a", "c"].effect == 1.0
    assert eight["b", "c"].verdict == "no difference"


def test_compare_all_pairs_only_common_finite_keys() -> None:
    values = {"a": {1: 1.0, 2: 2.0, 3: NAN}, "b": {1: 0.0, 3: 1.0, 4: 5.0}}
    (c,) = S.compare_all("x", "final", values)
    assert c.pairs == 1 and c.mean_difference == 1.0
    assert S.compare_all("x", "final", {"a": {1: 1.0}, "b": {2: 1.0}})[0].verdict == "no difference"


# --- Kernel Tuner methodology (values 1..10, minimised) -----------------------------------------
TABLE = np.array([7, 1, 10, 3, NAN, 5, 2, 9, 4, 8, 6], dtype=float)  # NaN: an invalid configuration


def test_methodology_cutoff_by_hand() -> None:
    # median 5.5, optimum 1: target(0.95) = 1 + 4.5 * 0.05 = 1.225; worst-first 10..1 first reaches it at
    # i = 9 (the optimum), stepped back to i = 8: ceil(8 / (11 - 8)) = 3 evaluations
    target, fevals = KT.cutoff_point(TABLE, True, 0.95)
    assert target == pytest.approx(1.225) and fevals == 3
    # target(0.01) = 5.455: value 5 at i = 5 -> ceil(5 / 6) = 1
    assert KT.cutoff_point(TABLE, True, 0.01)[1] == 1
    assert KT.score_range(TABLE, True) == KT.ScoreRange(1, 3, pytest.approx(1.225))


def test_methodology_random_curve_is_the_expected_rank_by_hand() -> None:
    # M draws: worst-first position round(M * 11 / (M + 1)): 5.5 -> 6 (half to even), 7.33 -> 7, 8.25 -> 8
    assert KT.random_curve(TABLE, True, np.array([1, 2, 3])).tolist() == [4.0, 3.0, 2.0]
    # maximised: the same positions counted from the smallest value
    assert KT.random_curve(TABLE, False, np.array([1, 3])).tolist() == [7.0, 9.0]


def test_methodology_score_by_hand() -> None:
    # two runs; positions in 1..10: eval 1: (1, 2) -> median 1.5 -> 2 -> value 3; eval 2: (1, 0) -> 0.5 -> 0 -> 1
    best = np.array([[2.0, 2.0, 1.0, 1.0], [3.0, 1.0, 1.0, 1.0]])
    score, curve, rng = KT.methodology_score(TABLE, True, best)
    assert curve.tolist() == pytest.approx([(3 - 4) / (1 - 4), 1.0, 1.0])
    assert score == pytest.approx(7 / 9) and (rng.start, rng.end) == (1, 3)
    # a run with no valid result yet is left out of the median
    curve = KT.searcher_curve(TABLE, np.array([[NAN, 5.0, 1.0], [4.0, 4.0, 4.0]]), np.array([1, 2, 3]))
    assert curve.tolist() == [4.0, 5.0, 3.0]  # eval 2: positions 4, 3 -> 3.5 -> 4 (value 5); eval 3: 0, 3 -> 1.5 -> 2


def test_study_compares_per_problem_and_pooled_over_problem_and_seed_pairs(tmp_path: Path) -> None:
    """a beats b on every run of two problems: 3 seeds per problem cannot show it (p = 2/8), the 6
    pooled (problem, seed) pairs can (p = 2/64 = 0.031, one pair of searchers so Holm changes nothing)."""
    for problem in ("p", "q"):
        for seed in range(3):
            make_run(tmp_path / f"{problem}a{seed}", [4, 1 + 0.1 * seed], problem=problem, searcher="a", seed=seed,
                     fingerprint=problem)
            make_run(tmp_path / f"{problem}b{seed}", [4, 2 + 0.1 * seed], problem=problem, searcher="b", seed=seed,
                     fingerprint=problem)
    data = aggregate(*collect_runs([tmp_path]))
    by = {(c.scope, c.metric): c for c in data.comparisons}
    assert set(by) == {(s, m) for s in ("p", "q", "(all problems)") for m in ("auc", "final")}
    assert by["p", "final"].pairs == 3 and by["p", "final"].p_value == pytest.approx(0.25)
    assert by["p", "final"].verdict == "no difference"
    pooled = by["(all problems)", "final"]
    assert (pooled.pairs, pooled.a_better, pooled.effect) == (6, 6, 1.0)
    assert pooled.p_holm == pytest.approx(2 / 64) and pooled.verdict == "a beats b"
    # final fraction of peak, optimum 1: a ends at 1/(1 + 0.1 s), b at 1/(2 + 0.1 s)
    assert pooled.mean_difference == pytest.approx(np.mean([1 / (1 + 0.1 * s) - 1 / (2 + 0.1 * s) for s in range(3)]))


def test_wilcoxon_exact_with_ties_matches_scipys_permutations_and_the_approximation_takes_over() -> None:
    from scipy.stats import PermutationMethod, wilcoxon

    # non-zero |d| ranks 1.5, 1.5, 3.5, 3.5, 5 (doubled: 3, 3, 7, 7, 10; total 30); R+ = 13.5 -> 27;
    # P(T >= 27) = P(complement <= 3) = 3/32 ({}, either 3): two-sided 6/32
    assert S.wilcoxon_pair([0, 1, 2, 2, 3, -1], [0] * 6) == (1.5, pytest.approx(6 / 32))
    rng = np.random.default_rng(3)
    d = np.round(rng.normal(0.3, 1, 12), 1)  # ties by rounding
    ours = S.wilcoxon_pair(d, np.zeros_like(d))[1]
    theirs = wilcoxon(d, method=PermutationMethod()).pvalue  # 2^12 sign patterns: enumerated exactly
    assert ours == pytest.approx(theirs, abs=1e-9)
    big = rng.normal(0.2, 1, 200)
    assert S.wilcoxon_pair(big, np.zeros(200))[1] == pytest.approx(wilcoxon(big, method="approx").pvalue)


def test_average_ranks_match_scipy() -> None:
    from scipy.stats import rankdata

    assert S.average_ranks([3, 1, 3, 2]).tolist() == [3.5, 1.0, 3.5, 2.0]
    x = np.round(np.random.default_rng(5).normal(size=300), 1)
    assert np.array_equal(S.average_ranks(x), rankdata(x))
