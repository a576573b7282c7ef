"""The threshold tuners of paper 003 (Algs. 1-8 and futhark autotune) on threshold
problems with known, noise-free costs (numpy only), plus the shared searcher contract.

``ModelProgram`` behaves like the OpenCL programs of ``searchlab.adapters.futhark`` (same chains,
same predicate evaluation and log lines, per-iteration instrumentation) but its version
times come from a cost model, so every assertion about optima and run counts is exact.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from searchlab.adapters.futhark._chains import Chain, Level, Step, chain_thresholds, choose, comparison_line, threshold_names
from searchlab.api import optimize
from searchlab.core.problem import Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import ThresholdDataset, ThresholdTree
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import (
    ActiveSearcher,
    BinarySearcher,
    CmaIndexSearcher,
    ExhaustiveSearcher,
    FutharkAutotuneSearcher,
    InstrumentedSearcher,
    Searcher,
    SimpleSearcher,
)
from searchlab.searchers._threshold.common import THRESHOLD_MAX, TreeModel, parse_comparisons, tree_behaviours
from tests import contract
from tests.contract import SearcherContract

CHAIN = Chain("mm", (Level("outer", "v1"), Level("intra", "v2"), Level("outer", "v3"), Level("intra", "v4")), "v5")
# Version time as a function of the iteration's size s: crossing lines (Fig. 3.4), the more
# outer-parallel versions paying a larger fixed cost and less per element. Best: v5 for
# s <= 2, v4 for s = 4, v3 for 8 <= s <= 32 (s² >= 64), v1 from s = 64 on; v2 never.
COSTS: dict[str, Callable[[int], float]] = {
    "v1": lambda s: 40.0 + 0.2 * s,
    "v2": lambda s: 20.0 + 1.0 * s,
    "v3": lambda s: 8.0 + 0.9 * s,
    "v4": lambda s: 4.0 + 1.5 * s,
    "v5": lambda s: 1.0 + 3.0 * s,
}
# v2 beats v3 from s = 40 on (v1 beats both): large datasets prefer the intra version at
# its node, small ones do not — an empty intersection for Alg. 2's heuristic.
CONFLICT = {**COSTS, "v2": lambda s: 20.0 + 0.6 * s}


def steps(sizes: Sequence[int]) -> list[Step]:
    """E_par per level for iterations of the given sizes (outer: s, s*s; intra: 8 and s)."""
    return [Step((s, 8, s * s, s), (True, True, True, True)) for s in sizes]


class ModelProgram(Problem):
    """One chain, datasets of loop iterations; evaluate = the cost model, with Futhark's
    comparison log and per-iteration instrumentation."""

    name = "model_program"
    capabilities = frozenset({"instrumentation", "datasets", "validation"})
    deterministic = True

    def __init__(self, datasets: Sequence[tuple[str, Sequence[int], bool]] = (
            ("small", (2, 1), True), ("mid", (16, 8, 4, 2), True), ("big", (64, 32, 16), True),
            ("val", (32, 24), False)), costs: dict[str, Callable[[int], float]] | None = None) -> None:
        super().__init__()
        self.costs = costs or COSTS
        self.names = threshold_names([CHAIN])["mm"]
        self.sets = {n: (steps(sizes), train) for n, sizes, train in datasets}
        values = []
        for n, (st, train) in self.sets.items():
            per = {t: tuple(s.epar[i] for s in st) for i, t in enumerate(self.names)}
            values.append(ThresholdDataset(n, {t: v[:1] if len(set(v)) == 1 else v for t, v in per.items()}, train))
        self._space = ThresholdTree(chain_thresholds([CHAIN]), tuple(values))

    @property
    def space(self) -> ThresholdTree:
        return self._space

    def run(self, config: Config, name: str) -> tuple[float, list[str], list[dict[str, Any]]]:
        total, log, records = 0.0, list[str](), list[dict[str, Any]]()
        for i, step in enumerate(self.sets[name][0]):
            index, made = choose(CHAIN, self.names, {k: int(v) for k, v in config.items()}, step)  # type: ignore[arg-type]
            version = CHAIN.versions[index]
            t = self.costs[version](step.epar[0])
            total += t
            log.extend(comparison_line(*c) for c in made)
            records.append({"construct": "mm", "iteration": i, "version": version,
                            "comparisons": [list(c) for c in made], "time_s": t})
        return total + 1.0, log, records  # 1.0: work outside the construct

    def evaluate(self, config: Config) -> Measurement:
        runs = {n: self.run(config, n) for n, (_, train) in self.sets.items() if train}
        log = [line for n, r in runs.items() for line in (f"# dataset {n}", *r[1])]
        return Measurement.ok(sum(r[0] for r in runs.values()), datasets={n: r[0] for n, r in runs.items()},
                              log=tuple(log), extra={"instrumentation": {n: r[2] for n, r in runs.items()}})


def simple_model(costs: dict[str, Callable[[int], float]] | None = None) -> ModelProgram:
    """Every dataset compares each threshold once: the simple case of §2.1."""
    return ModelProgram((("a", (1,), True), ("b", (4,), True), ("c", (20,), True), ("d", (90,), True),
                         ("e", (200,), True), ("v", (50,), False)), costs)


def optimum(problem: ModelProgram) -> float:
    """Brute force over the whole plateau product."""
    return min(problem.evaluate(c).objective or math.inf for c in problem.space.enumerate())


def run(problem: Problem, searcher: Searcher, budget: int = 2000) -> tuple[list[Any], Any]:
    outcome = optimize(problem, searcher, Budget(evaluations=budget))
    finals = [r for r in outcome.results if r.candidate.meta.get("final")]
    return list(outcome.results), finals[-1] if finals else outcome.best


# -- the shared contract, on the synthetic problems and on the model program -----------------
class WithModel(SearcherContract):
    @pytest.fixture(params=[*sorted(contract.PROBLEMS), "model_program"])
    def problem(self, request: pytest.FixtureRequest) -> Problem:
        return ModelProgram() if request.param == "model_program" else contract.PROBLEMS[request.param]()


class TestSimpleContract(WithModel):
    searcher_cls = SimpleSearcher


class TestBinaryContract(WithModel):
    searcher_cls = BinarySearcher


class TestActiveContract(WithModel):
    searcher_cls = ActiveSearcher


class TestCmaIndexContract(WithModel):
    searcher_cls = CmaIndexSearcher
    options = {"max_generations": 5}


class TestInstrumentedContract(WithModel):
    searcher_cls = InstrumentedSearcher

    def make(self, problem: Problem, seed: int = 0) -> Searcher:
        # The constructor sees a space, not the problem's capabilities: a missing capability
        # is refused by ``incompatibility(space, capabilities)`` (the CLI's check), so the
        # contract's "constructor raises" expectation cannot hold for ``requires``.
        if InstrumentedSearcher.incompatibility(problem.space, problem.capabilities):
            pytest.skip(f"instrumented needs instrumentation; {problem.name} has none")
        return super().make(problem, seed)


class TestFutharkAutotuneContract(WithModel):
    searcher_cls = FutharkAutotuneSearcher


# -- the tree model ---------------------------------------------------------------------------
def test_model_paths_match_the_program() -> None:
    problem = ModelProgram()
    model = TreeModel(problem.space)
    for config in itertools.islice(problem.space.enumerate(), 0, None, 37):
        for d in model.train:
            records = problem.run(config, d.name)[2]
            predicted = [model.leaves(config, d, model.roots[0], i)[0] for i in range(len(records))]
            actual = [(r["comparisons"][-1][0], r["comparisons"][-1][2]) for r in records]
            assert predicted == actual


def test_behaviours_are_the_distinct_signatures() -> None:
    problem = ModelProgram()
    model = TreeModel(problem.space)
    distinct = {tuple(model.signature(c, d) for d in model.train) for c in problem.space.enumerate()}
    behaviours = tree_behaviours(model, model.roots[0])
    sigs = {tuple(model.signature(Config({n: model.reps[n][k] for n, k in b.items()}), d) for d in model.train)
            for b in behaviours}
    assert len(behaviours) == len(sigs) == len(distinct) < problem.space.size()


def test_parse_comparisons_groups_by_dataset() -> None:
    log = ["# dataset a", "Compared main.x <= 4: true.", "noise", "# dataset b", "Compared main.y <= -2: false."]
    assert parse_comparisons(log) == {"a": [("main.x", 4)], "b": [("main.y", -2)]}


# -- Alg. 2: one benchmark per code version ------------------------------------------------------
def test_simple_one_benchmark_per_version_and_optimal() -> None:
    problem = simple_model()
    searcher = SimpleSearcher(problem.space, seed=0)
    results, final = run(problem, searcher)
    tuning = [r for r in results if not r.candidate.meta.get("final")]
    assert len(tuning) == len(CHAIN.versions)
    assert final.objective == pytest.approx(optimum(problem))
    assert final.config[problem.names[0]] == THRESHOLD_MAX or final.config[problem.names[0]] in (1, 4, 20, 90, 200)


def test_simple_tie_break_on_empty_intersection() -> None:
    """Dataset d (s = 90) prefers v2 to v3 at the intra node (E = 8 for all), the others do
    not: the ranges [1, 8] and [9, ∞] do not intersect; both ends are composed, not run."""
    problem = simple_model(CONFLICT)
    searcher = SimpleSearcher(problem.space, seed=0)
    results, _ = run(problem, searcher)
    decision = next(t for t in searcher.trace if t["threshold"] == problem.names[1])
    assert decision["strategy"] == "alg2-tie-break" and decision["range"] == [9, 8]
    assert decision["value"] == (8 if decision["costs"][0] <= decision["costs"][1] else THRESHOLD_MAX)
    assert len([r for r in results if not r.candidate.meta.get("final")]) == len(CHAIN.versions)


def test_simple_refuses_bad_option() -> None:
    with pytest.raises(ConfigError, match="tie_break"):
        SimpleSearcher(simple_model().space, tie_break="yes")  # type: ignore[arg-type]


# -- Alg. 8: complete information ---------------------------------------------------------------
def test_instrumented_finds_the_optimum_with_one_run_per_version() -> None:
    problem = ModelProgram()
    searcher = InstrumentedSearcher(problem.space, seed=0)
    results, final = run(problem, searcher)
    tuning = [r for r in results if not r.candidate.meta.get("final")]
    assert len(tuning) <= len(CHAIN.versions)
    assert final.objective == pytest.approx(optimum(problem))


def test_exhaustive_tree_aware_finds_the_optimum_with_fewer_runs() -> None:
    problem = ModelProgram()
    results, _ = run(problem, ExhaustiveSearcher(problem.space, seed=0))
    assert len(results) < problem.space.size()
    assert min(r.objective for r in results) == pytest.approx(optimum(problem))


# -- Alg. 5 ---------------------------------------------------------------------------------------
def test_binary_follows_alg5() -> None:
    problem = ModelProgram()
    searcher = BinarySearcher(problem.space, seed=0)
    run(problem, searcher)
    loop = [t for t in searcher.trace if t["strategy"] == "alg5"]
    assert loop, "the model's outer thresholds are loop-based"
    for t in loop:
        m = TreeModel(problem.space).m[t["threshold"]]
        assert t["tried"][0] == m  # starts at ∞
        assert len(t["tried"]) <= math.ceil(math.log2(m + 1)) + 1
        assert t["tried"][1] == m - (1 + m) // 2  # the midpoint of [v_m .. v_1], listed from ∞ down
        assert t["index"] in t["tried"]


# -- Algs. 6 + 7 -----------------------------------------------------------------------------------
def test_active_converges_to_a_labelled_local_minimum() -> None:
    problem = ModelProgram()
    searcher = ActiveSearcher(problem.space, seed=1)
    run(problem, searcher)
    for t in (t for t in searcher.trace if t["strategy"] == "alg6+7"):
        assert t["index"] in t["tried"] and len(set(t["tried"][:3])) == len(t["tried"][:3])
    again = ActiveSearcher(problem.space, seed=1)
    run(problem, again)
    assert again.trace == searcher.trace


def test_active_refuses_bad_initial() -> None:
    with pytest.raises(ConfigError, match="initial"):
        ActiveSearcher(ModelProgram().space, initial=0)


# -- CMA-ES over indices -------------------------------------------------------------------------
def test_cma_index_improves_on_all_false_and_stops() -> None:
    problem = ModelProgram()
    searcher = CmaIndexSearcher(problem.space, seed=0, max_generations=15)
    results, final = run(problem, searcher)
    all_false = problem.evaluate(problem.space.all_false()).objective
    assert final.objective < all_false
    assert len(results) <= 15 * 7 + 1  # popsize 4 + floor(3 ln 4) = 8 at most per generation, minus repeats


@pytest.mark.parametrize("bad", [{"sigma": 0.0}, {"popsize": 1}, {"max_generations": 0}])
def test_cma_index_refuses_bad_options(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        CmaIndexSearcher(ModelProgram().space, **bad)


# -- futhark autotune ---------------------------------------------------------------------------
def test_futhark_autotune_binary_searches_logged_values() -> None:
    problem = simple_model()
    searcher = FutharkAutotuneSearcher(problem.space, seed=0)
    results, final = run(problem, searcher)
    assert not searcher.unique and len(results) > len({r.config for r in results})  # no cache, like the tool
    order = [t["threshold"] for t in searcher.trace]
    assert order == list(reversed(problem.names))  # deepest first (tuningPaths)
    for t in searcher.trace:
        assert t["value"] in {1, THRESHOLD_MAX} | {v for d in problem.space.datasets
                                                   for v in d.values.get(t["threshold"], ())}
    assert final.objective <= problem.evaluate(problem.space.all_false()).objective
