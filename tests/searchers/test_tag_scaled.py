"""searcher=tag_scaled (issue 38): threshold ascent with a quantile threshold, exploration capped by
plays per arm, and a prior for unplayed arms; the paper's TAG stays as it was."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import pytest

from searchlab import registry
from searchlab.adapters.synthetic import SyntheticDag
from searchlab.api import optimize
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import TagScaledSearcher, TagSearcher, tunable_ranges
from searchlab.searchers._bandit.tag import threshold_ascent
from searchlab.searchers._bandit.tag_scaled import ascent_terms
from searchlab.testing import SearcherContract


class TestTagScaledContract(SearcherContract):
    searcher_cls = TagScaledSearcher


class TestTagScaledCanonicalContract(SearcherContract):
    searcher_cls = TagScaledSearcher
    options: ClassVar[dict[str, Any]] = {"arcs": "canonical", "exploration": 5.0, "quantile": 0.5}


def test_registered_and_tunable() -> None:
    assert registry.searcher_class("tag_scaled") is TagScaledSearcher
    assert {"exploration", "quantile"} <= set(registry.searchers()["tag_scaled"].schema.__dataclass_fields__)
    assert sorted(tunable_ranges(TagScaledSearcher)) == ["exploration", "quantile"]


def test_the_terms_with_the_papers_alpha_are_the_papers_index() -> None:
    losses = [[1.0, 4.0, 9.0], [2.0, 3.0], [0.5, 7.0, 8.0, 9.5]]
    counts = [4, 2, 5]  # more plays than losses: failures or pending plays
    alpha = math.log(2 * sum(counts) * len(counts) / 0.1)
    terms = ascent_terms(losses, counts, 4, alpha)
    assert terms.scores == pytest.approx(threshold_ascent(losses, counts, 4, 0.1))
    assert terms.good == (1, 2, 1) and terms.threshold == 4


def test_unplayed_arms_get_a_finite_prior_that_a_good_arm_beats_when_exploration_is_small() -> None:
    losses, counts = [[1.0, 2.0, 3.0], [7.0, 8.0, 9.0], []], [3, 3, 0]
    paper = ascent_terms(losses, counts, 3, 5.0)
    assert paper.scores[2] == math.inf  # the paper: every unplayed arm first
    small = ascent_terms(losses, counts, 3, 0.01, prior=True)
    assert math.isfinite(small.scores[2]) and small.scores[0] > small.scores[2] > small.scores[1]
    big = ascent_terms(losses, counts, 3, 10.0, prior=True)
    assert big.scores[2] > big.scores[0]  # with the paper's size of alpha the prior still explores first


def test_alpha_is_capped_by_plays_per_arm_and_the_threshold_is_a_quantile() -> None:
    tag = TagScaledSearcher(SyntheticDag().space, seed=0, exploration=0.5, quantile=0.25)
    outcome = optimize(SyntheticDag(), tag, Budget(evaluations=60))
    assert len(outcome.results) == 60
    root = tag.graph.root
    arms = tag._arms(root)
    terms = tag.terms(root, arms)
    n, k = sum(terms.counts), len(terms.counts)
    assert terms.alpha == pytest.approx(min(math.log(2 * n * k / 0.1), 0.5 * n / k))
    pooled = sum(len(tag.stats(c)[1]) for _, c in arms if c in tag._played[root])
    assert terms.threshold == min(30, math.ceil(0.25 * pooled))


def test_its_root_counts_follow_rewards_more_than_the_papers() -> None:
    """On the synthetic DAG the paper's TAG spreads its plays over the root arms almost evenly;
    the variant (small exploration) concentrates them (a larger max/mean count)."""
    def spread(searcher: Any) -> float:
        optimize(SyntheticDag(), searcher, Budget(evaluations=150))
        counts = [searcher.stats(c)[0] for c in searcher._played[searcher.graph.root]]
        return max(counts) / (sum(counts) / len(counts))

    paper = sorted(spread(TagSearcher(SyntheticDag().space, seed=s)) for s in range(5))[2]
    scaled = sorted(spread(TagScaledSearcher(SyntheticDag().space, seed=s, exploration=0.05)) for s in range(5))[2]
    assert scaled > paper


@pytest.mark.parametrize("kwargs", [{"exploration": 0.0}, {"exploration": -1.0}, {"quantile": 0.0}, {"quantile": 1.5},
                                    {"delta": 0.0}, {"s": 0}, {"exploration": True}, {"arcs": "some"}])
def test_bad_options_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        TagScaledSearcher(SyntheticDag().space, **kwargs)


@pytest.mark.parametrize("cls", [TagSearcher, TagScaledSearcher])
def test_on_decision_sees_every_bandit_decision_and_changes_none(cls: type) -> None:
    """The diagnostic hook (bench/tag_study.py): called before each decision with the vertex and its open arms,
    where the public views (played, stats, evaluations) agree with the search; the run is the same without it."""
    problem = SyntheticDag()

    def run(hook: bool) -> tuple[list[Any], list[tuple[Any, int, int]]]:
        searcher = cls(problem.space, direction=problem.direction, seed=3)
        seen: list[tuple[Any, int, int]] = []
        if hook:
            def decide(vertex: Any, arms: Any) -> None:
                assert list(arms) == searcher.arms(vertex) and arms
                seen.append((vertex, len(arms), searcher.evaluations))

            searcher.on_decision = decide
        outcome = optimize(problem, searcher, Budget(evaluations=25))
        return [r.config for r in outcome.results], seen

    plain, _ = run(False)
    hooked, seen = run(True)
    assert hooked == plain
    assert seen and seen[0][0] == problem.space.root and seen[0][2] == 0
    assert max(e for _, _, e in seen) == 24  # the last descent happens before the 25th evaluation is proposed
