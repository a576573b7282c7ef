"""Kernel Tuner's strategies as searchlab searchers (searchlab/searchers/_kernel_tuner, issue 23 item 5).

The shared contract for every ``kt_*`` searcher, then the bridge's own promises on a small real
Kernel Tuner table (convolution on an A100, 768 members, 450 recorded): counting, no
known-infeasible proposal, no thread left behind, seeds, restarts, and the settings problem.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("kernel_tuner")

from searchlab import registry
from searchlab.adapters.knobs import KernelTunerCache
from searchlab.api import Outcome, optimize
from searchlab.core.records import Status
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import (
    KtBasinhoppingSearcher,
    KtDiffEvoSearcher,
    KtDualAnnealingSearcher,
    KtFireflyAlgorithmSearcher,
    KtGeneticAlgorithmSearcher,
    KtGreedyIlsSearcher,
    KtGreedyMlsSearcher,
    KtPsoSearcher,
    KtRandomSampleSearcher,
    KtSimulatedAnnealingSearcher,
)
from tests.contract import SearcherContract


class TestKtGeneticAlgorithmContract(SearcherContract):
    searcher_cls = KtGeneticAlgorithmSearcher


class TestKtPsoContract(SearcherContract):
    searcher_cls = KtPsoSearcher


class TestKtSimulatedAnnealingContract(SearcherContract):
    searcher_cls = KtSimulatedAnnealingSearcher


class TestKtDualAnnealingContract(SearcherContract):
    searcher_cls = KtDualAnnealingSearcher


class TestKtGreedyIlsContract(SearcherContract):
    searcher_cls = KtGreedyIlsSearcher


class TestKtDiffEvoContract(SearcherContract):
    searcher_cls = KtDiffEvoSearcher


class TestKtFireflyAlgorithmContract(SearcherContract):
    searcher_cls = KtFireflyAlgorithmSearcher


class TestKtRandomSampleContract(SearcherContract):
    searcher_cls = KtRandomSampleSearcher


class TestKtGreedyMlsContract(SearcherContract):
    searcher_cls = KtGreedyMlsSearcher


class TestKtBasinhoppingContract(SearcherContract):
    searcher_cls = KtBasinhoppingSearcher


ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "kt_convolution_A100_small.json.gz"
REQUIRED = ("kt_genetic_algorithm", "kt_pso", "kt_simulated_annealing", "kt_dual_annealing", "kt_greedy_ils",
            "kt_diff_evo", "kt_firefly_algorithm", "kt_random_sample")


def _bridge_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "searchlab-kernel-tuner"]


@pytest.fixture()
def new_threads() -> Any:
    """Bridge threads started during the test and still alive (others' leftovers are not this test's)."""
    before = set(_bridge_threads())
    return lambda: [t for t in _bridge_threads() if t not in before]


def _replay(name: str, budget: int, seed: int = 0, **options: Any) -> tuple[Outcome, Any, KernelTunerCache]:
    problem = KernelTunerCache(path=str(SMALL))
    searcher = registry.searcher_class(name)(problem.space, direction=problem.direction, seed=seed, **options)
    return optimize(problem, searcher, Budget(evaluations=budget)), searcher, problem


@pytest.mark.parametrize("name", REQUIRED)
def test_a_replay_counts_exactly_the_budget_proposes_nothing_infeasible_and_leaves_no_thread(
        name: str, new_threads: Any) -> None:
    outcome, searcher, problem = _replay(name, 60)
    proposals = [r.candidate.proposal for r in outcome.results]
    assert len(outcome.results) == 60 == len(set(proposals))  # each one a new evaluation
    assert all(problem.space.check(r.config) is None for r in outcome.results)
    assert not any(r.measurement.status is Status.INFEASIBLE for r in outcome.results)
    assert searcher.done and not new_threads()  # joined when the budget was spent, no gc needed


@pytest.mark.parametrize("name", REQUIRED)
def test_same_seed_same_trajectory_other_seed_another(name: str) -> None:
    runs = [[r.config for r in _replay(name, 40, seed)[0].results] for seed in (5, 5, 6)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_runs_on_one_space_object_propose_what_runs_on_fresh_ones_do() -> None:
    """The solved Kernel Tuner search space is kept per space object (a replay study's seeds
    share one table); what a run leaves in it must not steer the next run."""
    from searchlab.searchers._kernel_tuner import space as kt_space

    problem = KernelTunerCache(path=str(SMALL))

    def run(seed: int) -> list[Any]:
        searcher = KtGeneticAlgorithmSearcher(problem.space, direction=problem.direction, seed=seed)
        return [r.config for r in optimize(problem, searcher, Budget(evaluations=150)).results]

    shared = [run(seed) for seed in (1, 2, 1)]
    fresh = []
    for seed in (1, 2, 1):
        kt_space._BUILT.clear()
        fresh.append(run(seed))
    assert shared == fresh and shared[0] == shared[2]
    assert id(problem.space) in kt_space._BUILT  # and it was kept


def _kernel_tuner_own_run(strategy: str, budget: int, global_seed: int, tmp: Path) -> list[tuple[Any, ...]]:
    """The distinct configurations Kernel Tuner 1.5's own simulation run visits, in order (its
    ``tune_kernel`` on the table, restricted to the recorded configurations as bench/peers_kt.py does)."""
    import gzip
    import warnings

    from constraint import FunctionConstraint
    from kernel_tuner import util
    from kernel_tuner.interface import tune_kernel

    path = tmp / "cache.json"
    path.write_text(gzip.open(SMALL, "rt").read())
    cache = util.read_cache(str(path), open_cache=False)
    names = cache["tune_params_keys"]
    recorded = {tuple(e[n] for n in names) for e in cache["cache"].values()}
    random.seed(global_seed)
    np.random.seed(global_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(**util.infer_args_from_cache(cache), cache=str(path), simulation_mode=True,
                                 restrictions=[FunctionConstraint(lambda *v: v in recorded)], strategy=strategy,
                                 strategy_options={"max_fevals": budget}, quiet=True)
    return list(dict.fromkeys(tuple(r[n] for n in names) for r in results))


@pytest.mark.parametrize("strategy", ["genetic_algorithm", "pso", "simulated_annealing", "dual_annealing",
                                      "greedy_ils", "firefly_algorithm", "random_sample", "basinhopping"])
def test_the_bridge_proposes_what_kernel_tuner_s_own_run_visits(strategy: str, tmp_path: Path) -> None:
    """Same global random states, same space: the same configurations in the same order, up to the
    budget or to where Kernel Tuner's run ends (the bridge then restarts). Not diff_evo: Kernel
    Tuner's own run draws its first population from an unseeded Latin hypercube."""
    seed = 4
    first = int(np.random.default_rng(seed).integers(2**32))  # the bridge's first run's seed
    theirs = _kernel_tuner_own_run(strategy, 40, first, tmp_path)
    outcome, _, problem = _replay(f"kt_{strategy}", 40, seed)
    ours = [tuple(r.config[n] for n in problem.space.names) for r in outcome.results]
    assert len(theirs) >= 10 and ours[:len(theirs)] == theirs


def test_the_strategy_s_draws_leave_searchlab_s_global_random_states_alone() -> None:
    random.seed(11)
    np.random.seed(11)
    _replay("kt_genetic_algorithm", 30)
    after = (random.random(), float(np.random.random()))
    random.seed(11)
    np.random.seed(11)
    assert after == (random.random(), float(np.random.random()))


def test_the_budget_ends_the_strategy_before_it_ends_itself(new_threads: Any) -> None:
    outcome, searcher, _ = _replay("kt_genetic_algorithm", 30)  # 90 generations of 26 would go on
    assert len(outcome.results) == 30 and searcher.starts == 1 and not new_threads()


def test_a_strategy_that_ends_before_the_budget_is_restarted_with_a_fresh_seed(new_threads: Any) -> None:
    outcome, searcher, _ = _replay("kt_genetic_algorithm", 40, popsize=4, maxiter=2)
    proposals = [r.candidate.proposal for r in outcome.results]
    assert searcher.starts >= 3 and len(proposals) == 40 == len(set(proposals))
    assert not new_threads()


def test_repeats_are_answered_from_the_results_and_never_measured_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.searchers._kernel_tuner import runner

    asked: list[int] = []
    handed: list[int] = []
    original = runner.BridgeRunner._hand_over

    def count(self: Any, configs: list[Any]) -> None:
        handed.append(len(configs))
        original(self, configs)

    def run(self: Any, space: Any, options: Any) -> Any:
        space = list(space)
        asked.append(len(space))
        return original_run(self, space, options)

    original_run = runner.BridgeRunner.run
    monkeypatch.setattr(runner.BridgeRunner, "_hand_over", count)
    monkeypatch.setattr(runner.BridgeRunner, "run", run)
    outcome, _, _ = _replay("kt_simulated_annealing", 50)
    assert sum(asked) > sum(handed) + 10  # the walk revisits configurations ...
    assert sum(handed) == len(outcome.results) == 50  # ... that are not measured or counted again


def test_closing_mid_run_ends_the_thread_and_so_does_discarding_the_searcher(new_threads: Any) -> None:
    problem = KernelTunerCache(path=str(SMALL))
    for stop in ("close", "discard"):
        searcher = KtPsoSearcher(problem.space, seed=0)
        batch = searcher.ask(5)
        searcher.tell(SearcherContract._measure(problem, batch[0]))
        assert len(new_threads()) == 1  # blocked, waiting for the other results
        if stop == "close":
            searcher.close()
        else:
            del searcher, batch  # no reference cycle holds it: no gc.collect() needed
        assert not new_threads(), stop


def test_a_run_stopped_before_its_budget_closes_the_thread(new_threads: Any) -> None:
    problem = KernelTunerCache(path=str(SMALL))
    searcher = KtGreedyIlsSearcher(problem.space, seed=0)
    outcome = optimize(problem, searcher, Budget(evaluations=100, target=1e9))  # stops at the first result
    assert len(outcome.results) == 1
    assert not new_threads()  # the search loop closed the searcher (Searcher.close), not the budget
    searcher.close()  # and a second close is harmless
    assert not new_threads()


def test_max_fevals_is_the_run_s_budget_not_an_option() -> None:
    from searchlab.searchers._schema import options

    for name in REQUIRED:
        assert "max_fevals" not in {o.name for o in options(registry.searcher_class(name))}
    outcome, searcher, _ = _replay("kt_random_sample", 25)
    assert len(outcome.results) == 25 and searcher.starts == 1  # Kernel Tuner sampled exactly max_fevals = 25


# hyper.py (Kernel Tuner 1.5, "Tuning the Tuner", arXiv 2509.26300): the values it tunes each option over.
HYPER = {
    "kt_pso": {"popsize": range(2, 51, 2), "maxiter": range(10, 200, 10), "c1": np.arange(1.0, 3.75, 0.25),
               "c2": np.arange(0.5, 2.25, 0.25)},
    "kt_firefly_algorithm": {"popsize": [10, 20, 30], "maxiter": [50, 100, 150], "B0": [0.5, 1.0, 1.5],
                             "gamma": [0.1, 0.25, 0.5], "alpha": [0.1, 0.2, 0.3]},
    "kt_greedy_ils": {"neighbor": ["Hamming", "adjacent"], "restart": [True, False], "no_improvement": [10, 25, 50, 75],
                      "random_walk": [0.1, 0.2, 0.3, 0.4, 0.5]},
    "kt_dual_annealing": {"method": ["COBYLA", "L-BFGS-B", "SLSQP", "CG", "Powell", "Nelder-Mead", "BFGS",
                                     "trust-constr"]},
    "kt_diff_evo": {"method": ["best1bin", "rand1bin", "best2bin", "rand2bin", "best1exp", "rand1exp", "best2exp",
                               "rand2exp", "currenttobest1bin", "currenttobest1exp", "randtobest1bin", "randtobest1exp"],
                    "popsize": range(2, 51, 2), "popsize_times_dimensions": [True, False],
                    "F": np.arange(0.1, 2.05, 0.1), "CR": np.arange(0.05, 1.025, 0.05)},
    "kt_genetic_algorithm": {"method": ["single_point", "two_point", "uniform", "disruptive_uniform"],
                             "popsize": range(2, 51, 2), "maxiter": range(10, 200, 10),
                             "mutation_chance": range(5, 100, 5)},
    "kt_simulated_annealing": {"T": np.arange(0.1, 2.05, 0.1), "T_min": np.arange(0.0001, 0.1, 0.001),
                               "alpha": [0.9925, 0.995, 0.9975], "maxiter": range(1, 10)},
    "kt_greedy_mls": {"neighbor": ["Hamming", "adjacent"], "restart": [True, False], "randomize": [True, False]},
}


@pytest.mark.parametrize("name", sorted(HYPER))
def test_tunable_ranges_cover_hyper_py_and_the_defaults(name: str) -> None:
    from searchlab.searchers._schema import option_defaults
    from searchlab.searchers._tunable import tunable_ranges

    cls = registry.searcher_class(name)
    ranges, defaults = tunable_ranges(cls), option_defaults(cls)
    assert sorted(ranges) == sorted(HYPER[name])
    for option, values in HYPER[name].items():
        for value in values:
            value = round(float(value), 6) if isinstance(value, np.floating) else value
            assert ranges[option].contains(value), (option, value, ranges[option])
        assert ranges[option].contains(defaults[option]), (option, defaults[option])


def test_without_kernel_tuner_the_constructor_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "kernel_tuner" else real(n, *a))
    problem = KernelTunerCache(path=str(SMALL))
    with pytest.raises(ConfigError, match=r"searcher=kt_pso needs Kernel Tuner.*pip install 'searchlab\[bench\]'"):
        KtPsoSearcher(problem.space)


def test_searcher_settings_tunes_kt_pso_end_to_end(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-m", "searchlab", "problem=searcher_settings", "problem.searcher=kt_pso",
                          f"problem.train=[{SMALL}]", "problem.seeds=1", "problem.budget=12",
                          "problem.options=[c1,c2]", "searcher=random", "budget.evaluations=2", "seed=0",
                          "progress=off", "plot=false"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stderr.splitlines() + out.stdout.splitlines() if "summary: " in x)
    summary = json.loads(Path(line.split("summary: ")[-1].strip()).read_text())
    assert summary["evaluations"] == 2
    assert 0 < summary["best"]["objective"] <= 1  # a mean fraction of the table's optimum
    assert set(summary["best"]["config"]) == {"c1", "c2"}
