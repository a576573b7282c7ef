"""Grammars as derivation DAGs (paper 002 §2): loading, node sharing, exact counts, errors,
and a user objective plugged in through a Hydra ``_target_``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from searchlab.adapters.grammar import Grammar, GrammarProblem, StringGraph, TreeGraph, load_grammar
from searchlab.adapters.grammar.problem import Word
from searchlab.api import optimize
from searchlab.core.records import Config, Direction, Status
from searchlab.errors import ConfigError, InvalidConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import ExhaustiveSearcher, RandomSearcher, TagSearcher


def grammar(productions: Any, nonterminals: str = "S A B", terminals: str = "a b c", **extra: Any) -> Grammar:
    return Grammar.from_mapping({"start": "S", "nonterminals": nonterminals, "terminals": terminals,
                                 "productions": productions, **extra})


def score_a(word: Word, bonus: float = 0.0) -> float:
    """A user objective: number of 'a' terminals (plus a keyword option)."""
    return word.terminals.count("a") + bonus


# -- paper 002 Figure 1 -------------------------------------------------------------------------
def test_figure1_string_grammar_has_six_forms_and_two_sinks() -> None:
    graph = StringGraph(load_grammar("figure1.yaml"))
    assert graph.n_forms == 6
    assert graph.count_sinks() == 2
    assert sorted(graph.key(w) for w in graph.iter_words()) == ["a b", "a c"]
    # derivation orders meet: "A B" -> "a B" -> "a b" and "A B" -> "A b" -> "a b" share the sink
    ab = graph.node("a b")
    parents = [f for f in (graph.node("a B"), graph.node("A b")) if ab in [c for _, c in graph.children(f)]]
    assert len(parents) == 2
    assert graph.count_sinks(graph.node("a B")) == 2 and graph.count_sinks(graph.node("A b")) == 1


def test_uniform_word_is_uniform_over_sinks_in_string_mode() -> None:
    graph = StringGraph(load_grammar("figure1.yaml"))
    rng = np.random.default_rng(0)
    words = [graph.key(graph.uniform_word(rng)[1]) for _ in range(400)]
    assert 150 < words.count("a b") < 250
    path, word = graph.uniform_word(rng)
    assert graph.follow(path) == word


# -- tree mode ------------------------------------------------------------------------------
def test_tree_forms_are_shared_between_derivation_orders() -> None:
    graph = TreeGraph(grammar(["S -> A B", "A -> a | c", "B -> b | a"]))
    both = {c for _, c in graph.children(graph.root)}
    assert len(both) == 1  # S has one rule
    (form,) = both
    grandchildren = [c for _, c in graph.children(form)]
    assert len(grandchildren) == 4  # rewrite A (2 ways) or B (2 ways)
    a_then_b = dict(graph.children(graph.follow(["0:A->a"], form)))
    b_then_a = dict(graph.children(graph.follow(["1:B->b"], form)))
    assert set(a_then_b.values()) & set(b_then_a.values()) == {graph.node("S(A(a),B(b))")}
    assert graph.count_sinks() == 4


def test_counts_are_exact_without_enumerating_and_match_enumeration() -> None:
    graph = TreeGraph(load_grammar("schedule.yaml"))
    words = [graph.key(w) for w in graph.iter_words()]
    assert graph.count_sinks() == len(words) == len(set(words)) == 936
    form = graph.follow([":Kernel->Loop Loop Body"])
    assert graph.count_sinks(form) == sum(1 for _ in graph.iter_words(form)) == 12 * 12 * 6


def test_keys_round_trip_and_bad_keys_are_refused() -> None:
    graph = TreeGraph(load_grammar("schedule.yaml"))
    rng = np.random.default_rng(1)
    for _ in range(20):
        path, word = graph.uniform_word(rng)
        assert graph.node(graph.key(word)) == word
        assert graph.follow(path) == word
    for bad in ("Kernel(Loop,Body", "Kernel(Body,Loop)", "Nope", "Loop(Tile,unroll1)", "Kernel(Loop)x"):
        with pytest.raises(InvalidConfigError):
            graph.node(bad)
    with pytest.raises(InvalidConfigError, match="not a word"):
        graph.validate(Config(word="Kernel(Loop,Body)"))


def test_subwords_only_when_asked() -> None:
    g = load_grammar("schedule.yaml")
    with pytest.raises(InvalidConfigError, match="start symbol"):
        TreeGraph(g).node("Vec(vec4)")
    sub = TreeGraph(g, subwords=True)
    sub.validate(Config(word="Vec(vec4)"))
    assert sub.subproblems()[-1] == "Kernel"
    assert sub.compose("Body", "Body->Vec fused", ["Vec(vec8)"]) == "Body(Vec(vec8),fused)"


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("productions", "match"), [
    (["S -> A", "A -> B", "B -> A | b"], "cyclic: A -> B -> A"),
    (["S -> A B", "A -> a", "B -> B b"], "cyclic: B -> B"),
    (["S -> A | a", "A -> B", "B -> a"], "unreachable from 'S': \\['b', 'c'\\]"),
    (["S -> a | A", "A -> B b", "B -> A a"], "cyclic"),
    (["S -> a | B", "A -> a", "B -> b B c"], "cyclic"),
    (["S -> A", "A -> B"], "no words"),
    (["S -> a | A B", "A -> a", "B -> b"], "unreachable|unproductive"),
    (["S -> d"], "undeclared symbols \\['d'\\]"),
    (["a -> b"], "needs a nonterminal"),
    (["S -> a", "S -> a"], "listed twice"),
])
def test_bad_grammars_raise_config_errors(productions: list[str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        grammar(productions)


def test_unproductive_and_unreachable_symbols_are_named() -> None:
    with pytest.raises(ConfigError, match=r"unproductive nonterminals \['B'\]"):
        grammar(["S -> a b c | A", "A -> a | B"], nonterminals="S A B")
    with pytest.raises(ConfigError, match=r"unreachable from 'S': \['B'\]"):
        grammar(["S -> a b c", "B -> b"], nonterminals="S B")


def test_string_mode_errors() -> None:
    with pytest.raises(ConfigError, match="cyclic"):
        StringGraph(grammar(["S -> A", "A -> B", "B -> A | a b c"], mode="string"))
    with pytest.raises(ConfigError, match="no words"):
        StringGraph(grammar(["S -> A", "A -> a B"], terminals="a", mode="string"))
    with pytest.raises(ConfigError, match="unreachable"):
        StringGraph(grammar(["S -> A", "A -> a"], nonterminals="S A B", mode="string"))
    with pytest.raises(ConfigError, match="max_forms=3"):
        StringGraph(load_grammar("schedule.yaml").__class__.from_mapping(
            {**_spec("schedule.yaml"), "mode": "string"}), max_forms=3)


def _spec(name: str) -> dict[str, Any]:
    import yaml

    return dict(yaml.safe_load((Path("searchlab/adapters/grammar/examples") / name).read_text()))


def test_yaml_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_grammar(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("start: S\nterminals: [a]\nnonterminals: [S]\nproductions: ['S a']\n")
    with pytest.raises(ConfigError, match="is not a rule"):
        load_grammar(bad)
    bad.write_text("start: S\nterminals: [a]\nnonterminals: [S]\nproductions: ['S -> a']\nrules: 1\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        load_grammar(bad)


# -- the problem: a user grammar and objective from a config --------------------------------------
def test_user_grammar_and_objective_from_hydra_config(tmp_path: Path) -> None:
    from searchlab.run.execution import build_problem

    path = tmp_path / "mine.yaml"
    path.write_text("start: S\nnonterminals: [S, X]\nterminals: [a, b]\n"
                    "productions: ['S -> X X X', 'X -> a | b | a b']\n")
    problem = build_problem({"_target_": "searchlab.adapters.grammar.GrammarProblem", "grammar": str(path),
                             "objective": {"_target_": f"{__name__}.score_a", "_partial_": True, "bonus": 0.5}})
    assert problem.space.size() == 27
    outcome = optimize(problem, ExhaustiveSearcher(problem.space, direction=problem.direction),
                       Budget(evaluations=100))
    assert len(outcome.results) == 27
    assert outcome.best is not None and outcome.best.objective == 3.5  # "a a a" (or with "a b" parts)


def test_objective_as_dotted_name_minimised_and_failures_recorded() -> None:
    problem = GrammarProblem("schedule.yaml", objective="searchlab.adapters.grammar.objectives.length", direction="minimize")
    assert problem.direction is Direction.MINIMIZE
    outcome = optimize(problem, RandomSearcher(problem.space, direction=problem.direction, seed=0),
                       Budget(evaluations=30))
    assert outcome.best is not None and outcome.best.objective == 4.0  # Loop(Tile,unrollX) Body(Vec,fused)

    def broken(word: Word) -> float:
        raise RuntimeError("boom")

    failing = GrammarProblem("schedule.yaml", objective=broken)
    result = optimize(failing, TagSearcher(failing.space, direction=failing.direction, seed=0),
                      Budget(evaluations=3)).results[0]
    assert result.status is Status.FAILED and "boom" in result.measurement.message
    with pytest.raises(ConfigError, match="cannot import"):
        GrammarProblem("schedule.yaml", objective="nowhere.nothing")
    with pytest.raises(ConfigError, match="direction"):
        GrammarProblem("schedule.yaml", direction="up")


def test_subproblem_words_are_marked() -> None:
    problem = GrammarProblem("schedule.yaml", subproblems=True)
    assert "subproblems" in problem.capabilities
    sub = problem.evaluate(Config(word="Vec(vec4)"))
    assert sub.extra["subproblem"] == "Vec" and sub.is_subproblem
    full = problem.evaluate(Config(word="Kernel(Loop(Tile(tile8),unroll1),Body(Vec(vec4),fused))"))
    assert not full.is_subproblem
