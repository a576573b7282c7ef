"""The AUC-bandit portfolio (OpenTuner's AUCBanditMetaTechnique): contract, credit, members."""

from __future__ import annotations

import logging
import random
from typing import ClassVar

import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticKnobs
from searchlab.api import optimize
from searchlab.core.records import Candidate, Measurement, Result
from searchlab.errors import ConfigError, IncompatibleError
from searchlab.run.loop import Budget
from searchlab.searchers import PortfolioSearcher
from searchlab.searchers._portfolio import AucBandit
from tests.contract import SearcherContract

FAST = ["optuna_tpe", "greedy_ils", "genetic", "random"]


class TestPortfolioContract(SearcherContract):
    searcher_cls = PortfolioSearcher
    options: ClassVar[dict[str, object]] = {"members": FAST}


class TestPortfolioNoSharingContract(SearcherContract):
    searcher_cls = PortfolioSearcher
    options: ClassVar[dict[str, object]] = {"members": ["simulated_annealing", "optuna_random"], "share": False}


def _slow_auc(history: list[tuple[int, bool]], key: int) -> float:
    """OpenTuner's ``exploitation_term_slow``: the definition the O(1) form must match."""
    score, pos = 0.0, 0
    for k, value in history:
        if k == key:
            pos += 1
            score += pos if value else 0
    return score * 2.0 / (pos * (pos + 1.0)) if pos else 0.0


def test_auc_credit_matches_the_definition_with_a_sliding_window() -> None:
    bandit = AucBandit(3, c=0.05, window=25)
    rng = random.Random(0)
    for _ in range(200):
        key = rng.randrange(3)
        bandit.on_result(key, rng.random() < (0.5 if key == 1 else 0.1))
        window = list(bandit.history)
        assert len(window) <= 25
        for k in range(3):
            assert bandit.exploitation(k) == pytest.approx(_slow_auc(window, k))
    assert bandit.exploration(0) < float("inf") and AucBandit(2).exploration(0) == float("inf")


def test_recent_successes_weigh_more() -> None:
    early, late = AucBandit(1), AucBandit(1)
    for i in range(10):
        early.on_result(0, i == 0)
        late.on_result(0, i == 9)
    assert late.exploitation(0) > early.exploitation(0)


def test_members_are_seeded_from_the_portfolio_seed_and_ids_map_both_ways() -> None:
    problem = SyntheticKnobs()
    searcher = PortfolioSearcher(problem.space, members=FAST, seed=11)
    outcome = optimize(problem, searcher, Budget(evaluations=40))
    again = PortfolioSearcher(problem.space, members=FAST, seed=11)
    assert [m.seed for m in again.members] == [m.seed for m in searcher.members]
    assert len({m.seed for m in searcher.members}) == len(FAST)
    for result in outcome.results:  # the proposer holds the result under its own candidate
        member = searcher.members[searcher.names.index(result.candidate.meta["member"])]
        assert [h.measurement for h in member.history if h.config == result.config] == [result.measurement]
    for member in searcher.members:  # sharing: every member learnt every result, under its own ids
        assert {h.config for h in member.history} >= {r.config for r in outcome.results}
        assert len({h.id for h in member.history}) == len(member.history)
        assert not member.pending
    assert sum(searcher.bandit.uses) == len(outcome.results)  # one credit per result, to the proposer


def test_credit_goes_to_the_member_that_found_a_new_best() -> None:
    problem = SyntheticKnobs()
    searcher = PortfolioSearcher(problem.space, members=["random", "optuna_random"], seed=0, share=False)
    batch = searcher.ask(2)
    member = {c.id: c.meta["member"] for c in batch}
    searcher.tell(Result(batch[0], Measurement.ok(5.0)))
    searcher.tell(Result(batch[1], Measurement.ok(9.0)))  # not a new best (minimising)
    credited = searcher.names.index(member[batch[0].id])
    assert searcher.bandit.auc_sum[credited] == 1 and searcher.bandit.auc_sum[1 - credited] == 0
    assert searcher.bandit.uses == [1, 1]


def test_member_that_cannot_handle_the_space_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        searcher = PortfolioSearcher(SyntheticDag().space, members=["genetic", "optuna_tpe"], seed=0)
    assert searcher.names == ["optuna_tpe"]
    assert "skipping member genetic" in caplog.text


def test_refuses_when_no_member_fits_and_names_the_reasons() -> None:
    with pytest.raises(IncompatibleError, match="no member can work.*'genetic' works on knobs"):
        PortfolioSearcher(SyntheticDag().space, members=["genetic", "greedy_ils"])


def test_bad_members_are_refused() -> None:
    space = SyntheticKnobs().space
    with pytest.raises(ConfigError, match="'nope' is not a searcher"):
        PortfolioSearcher(space, members=["random", "nope"])
    with pytest.raises(ConfigError, match="'portfolio' is not a searcher"):
        PortfolioSearcher(space, members=["portfolio"])
    with pytest.raises(ConfigError, match="not members"):
        PortfolioSearcher(space, members=["random"], options={"genetic": {"popsize": 4}})


def test_member_options_reach_the_member() -> None:
    searcher = PortfolioSearcher(SyntheticKnobs().space, members=["genetic", "random"], options={"genetic": {"popsize": 6}})
    assert searcher.members[0].popsize == 6  # type: ignore[attr-defined]


def test_a_configuration_is_evaluated_once_even_when_two_members_propose_it() -> None:
    from searchlab.core.spaces import KnobSpace, OrdinalKnob

    space = KnobSpace((OrdinalKnob("a", (1, 2, 3)),))
    searcher = PortfolioSearcher(space, members=["exhaustive", "random"], seed=0, share=False)
    proposals = []
    while not searcher.done:
        batch = searcher.ask(2)
        if not batch:
            break
        proposals += [c.proposal for c in batch]
        for c in batch:
            searcher.tell(Result(c, Measurement.ok(float(c.config["a"]))))  # type: ignore[arg-type]
    assert sorted(int(p["a"]) for p in proposals) == [1, 2, 3]  # type: ignore[arg-type]
    assert all(not m.pending for m in searcher.members)


def test_replayed_results_restore_member_state_and_credit() -> None:
    problem = SyntheticKnobs()
    first = PortfolioSearcher(problem.space, members=FAST, seed=2)
    outcome = optimize(problem, first, Budget(evaluations=20))
    second = PortfolioSearcher(problem.space, members=FAST, seed=2)
    for result in outcome.results:
        second.replay(Result(Candidate(result.id, result.config, result.candidate.proposal, result.candidate.meta),
                             result.measurement))
    assert second.bandit.uses == first.bandit.uses
    assert [len(m.history) for m in second.members] == [len(m.history) for m in first.members]
    fresh = second.ask(2)
    assert fresh and all(c.proposal not in {r.config for r in outcome.results} for c in fresh)
