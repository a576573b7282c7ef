"""``problem=searcher_settings`` (issue 23, item 2): scores computed by hand on two tiny tables,
determinism, refused settings, and the best configuration round-tripping through the CLI."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Annotated, Any

import pytest

from searchlab import registry
from searchlab.core.records import Config
from searchlab.core.store import read_run
from searchlab.errors import ConfigError, EvaluationError
from searchlab.searchers import ProposalLike, Searcher, Tunable

ROOT = Path(__file__).resolve().parents[2]


class OrderedProbe(Searcher):
    """Measures x=start first, then the other x in ascending order: its score is computable by hand."""

    def __init__(self, space: Any, *, start: Annotated[int, Tunable(0, 3)] = 0,
                 label: Annotated[str, Tunable(choices=("a", "b"))] = "a", **kwargs: Any) -> None:
        if label == "b" and start == 2:
            raise ConfigError("searcher.start=2 with label=b: refused (a constraint between settings)")
        super().__init__(space, **kwargs)
        self.order = [start] + [x for x in space.knob("x").values if x != start]

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out = []
        while self.order and len(out) < n:
            out.append(Config({"x": self.order.pop(0)}))
        return out

    def _done(self) -> bool:
        return not self.order


def kt_table(path: Path, times: dict[int, float], device: str) -> Path:
    cache = {str(x): {"x": x, "time": t, "compile_time": 1.0, "benchmark_time": 1.0} for x, t in times.items()}
    with gzip.open(path, "wt") as fh:
        json.dump({"device_name": device, "kernel_name": "k", "tune_params": {"x": sorted(times)},
                   "tune_params_keys": ["x"], "objective": "time", "cache": cache}, fh)
    return path


@pytest.fixture()
def tables(tmp_path: Path) -> list[str]:
    up = kt_table(tmp_path / "k_up.json.gz", {x: x + 1.0 for x in range(4)}, "up")  # optimum at x=0
    down = kt_table(tmp_path / "k_down.json.gz", {x: 4.0 - x for x in range(4)}, "down")  # optimum at x=3
    return [str(up), str(down)]


@pytest.fixture()
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = registry.entry_points
    fake = EntryPoint("ordered_probe", "tests.tuning.test_tuner_settings:OrderedProbe", "searchlab.searchers")
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [*real(group=group), *([fake] if group == "searchlab.searchers" else [])])
    registry.refresh()
    yield
    monkeypatch.undo()
    registry.refresh()


# By hand, budget 4 (fraction of the optimum 1.0 after each evaluation, then the mean):
#   start=0: up 1,1,1,1 -> 1;            down (times 4,3,2,1) 1/4,1/3,1/2,1 -> 0.520833
#   start=1: up 1/2,1,1,1 -> 0.875;      down (3,4,2,1) 1/3,1/3,1/2,1 -> 0.541667
#   start=3: up (4,1,..) 1/4,1,1,1 -> 0.8125; down 1,1,1,1 -> 1
HAND = {0: (1.0 + 0.5208333333) / 2, 1: (0.875 + 0.5416666667) / 2, 3: (0.8125 + 1.0) / 2}


def test_scores_equal_the_hand_computed_ones(tables: list[str], probe: None) -> None:
    from searchlab.tuning import SearcherSettings

    problem = SearcherSettings("ordered_probe", tables, seeds=2, budget=4)
    assert [k.name for k in problem.space.knobs] == ["label", "start"]
    for start, expected in HAND.items():
        m = problem.evaluate(Config({"start": start, "label": "a"}))
        assert m.objective == pytest.approx(expected, abs=1e-8)
        assert m.extra["replays"] == 4
    assert problem.describe_config(Config({"label": "a", "start": 3})) == \
        "searcher=ordered_probe searcher.label=a searcher.start=3"


def test_refused_settings_fail_as_invalid(tables: list[str], probe: None) -> None:
    from searchlab.tuning import SearcherSettings

    problem = SearcherSettings("ordered_probe", tables, seeds=1, budget=4)
    with pytest.raises(EvaluationError, match="start=2 with label=b"):
        problem.evaluate(Config({"start": 2, "label": "b"}))


def test_options_pick_a_subset_and_methodology_scores(tmp_path: Path, tables: list[str], probe: None) -> None:
    from searchlab.tuning import SearcherSettings

    with pytest.raises(ConfigError, match="random baseline reaches the optimum"):  # 4 rows: KT's score is undefined
        SearcherSettings("ordered_probe", tables, seeds=1, budget=4, score="methodology")
    wide = kt_table(tmp_path / "wide.json.gz", {x: 1.0 + (x - 20) ** 2 for x in range(40)}, "wide")
    problem = SearcherSettings("ordered_probe", [str(wide)], seeds=1, budget=30, options=["start"], score="methodology")
    assert [k.name for k in problem.space.knobs] == ["start"]
    assert problem.objective_name == "kt_score"
    near, far = (problem.evaluate(Config({"start": s})).objective for s in (3, 0))
    assert near is not None and far is not None and near > far  # starting nearer the optimum scores higher


@pytest.mark.parametrize("kwargs, needle", [
    ({"searcher": "nope"}, "nope"), ({"searcher": "random"}, "no tunable settings"), ({"seeds": 0}, "problem.seeds=0"),
    ({"budget": -1}, "problem.budget=-1"), ({"score": "auc"}, "problem.score='auc'"), ({"options": ["x"]}, "not tunable"),
    ({"train": []}, "at least one"), ({"train": ["missing.json.gz"]}, "missing.json.gz"),
])
def test_bad_settings_problems_are_refused(tables: list[str], probe: None, kwargs: dict[str, Any], needle: str) -> None:
    from searchlab.tuning import SearcherSettings

    args: dict[str, Any] = {"searcher": "ordered_probe", "train": tables, "seeds": 1, "budget": 4, **kwargs}
    with pytest.raises(ConfigError, match=needle):
        SearcherSettings(**args)


def _cli(cwd: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-m", "searchlab", *args, "progress=off", "plot=false"], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stderr.splitlines() + out.stdout.splitlines() if "summary: " in x)
    path = Path(line.split("summary: ")[-1].strip())
    return {**json.loads(path.read_text()), "run_config": read_run(path.parent)[0]["config"]}


def test_the_best_settings_round_trip_through_the_cli(tmp_path: Path) -> None:
    """Tune genetic's crossover on one table with exhaustive search over it, then run genetic with the
    printed overrides: the tuned run's trajectory gives, by hand, the score the settings problem recorded."""
    table = kt_table(tmp_path / "k_up.json.gz", {x: x + 1.0 for x in range(4)}, "up")
    summary = _cli(tmp_path, "problem=searcher_settings", "problem.searcher=genetic", f"problem.train=[{table}]",
                   "problem.seeds=1", "problem.budget=3", "problem.options=[method,popsize]", "searcher=exhaustive",
                   "budget.evaluations=12")
    report = summary["report"]
    overrides = report["tuned_overrides"]
    assert summary["best"]["description"] == " ".join(report["search_best_overrides"])
    assert overrides[0] == "searcher=genetic" and report["default_score"] is not None
    assert report["tuned_is_default"] == (report["search_best_score"] <= report["default_score"])
    run = _cli(tmp_path, "problem=kernel_tuner_cache", f"problem.path={table}", *overrides, "seed=0",
               "budget.evaluations=3")
    best = report["default_settings"] if report["tuned_is_default"] else dict(summary["best"]["config"])
    assert {k: run["run_config"]["searcher"][k] for k in best} == best
    curve, value = [], float("inf")
    points = {int(n): v for n, v in run["trajectory"]}
    for n in range(1, 4):
        value = points.get(n, value)
        curve.append(1.0 / value)  # optimum 1.0, minimised time
    assert report["tuned_score"] == pytest.approx(sum(curve) / 3, abs=1e-9)


def test_the_defaults_are_recommended_unless_the_search_beats_them() -> None:
    """Never worse than doing nothing: the search's best is recommended only where it scores
    above the defaults on the training set; at or below them the defaults are."""
    from searchlab.tuning.searcher_settings import recommendation

    best, defaults = {"popsize": 30}, {"popsize": 20}
    above = recommendation("genetic", best, 0.9, defaults, 0.8)
    assert above["tuned_overrides"] == ["searcher=genetic", "searcher.popsize=30"] and not above["tuned_is_default"]
    for score in (0.8, 0.7, None):
        kept = recommendation("genetic", best, score, defaults, 0.8)
        assert kept["tuned_overrides"] == ["searcher=genetic", "searcher.popsize=20"] and kept["tuned_score"] == 0.8
        assert kept["search_best_overrides"] == ["searcher=genetic", "searcher.popsize=30"]
    unknown = recommendation("genetic", best, 0.5, defaults, None)  # the defaults did not run: nothing to compare
    assert unknown["tuned_overrides"][1] == "searcher.popsize=30" and not unknown["tuned_is_default"]
    from searchlab.run.verdict import _decision

    words = {k: _decision({"report": r, "objective_name": "score"}, ("", 1.0)) for k, r in (("above", above),
                                                                                       ("kept", kept))}
    assert words["above"].startswith("recommended: searcher=genetic searcher.popsize=30, above the defaults")
    assert words["kept"].startswith("keep the defaults (searcher=genetic searcher.popsize=20)")
    assert "the search's best not scored" in words["kept"]  # the last loop case: the search's best had no score


def test_with_the_ray_executor_inner_replays_fan_out_and_give_the_same_scores(tables: list[str]) -> None:
    """executor=ray: each evaluation runs in an actor that sends its table x seed replays out as Ray tasks."""
    import ray

    from searchlab.api import optimize
    from searchlab.run.cluster import LOOPBACK, local_ray_environment
    from searchlab.run.execution._ray import RayExecutor
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher
    from searchlab.tuning import SearcherSettings

    problem = SearcherSettings("genetic", tables, seeds=2, budget=4, options=["method"])
    local_ray_environment()
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=128 * 1024**2,
             logging_level="ERROR", _node_ip_address=LOOPBACK)
    try:
        executor = RayExecutor(workers=1)
        executor.start(problem)
        try:
            outcome = optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=2), executor=executor)
        finally:
            executor.close()
    finally:
        ray.shutdown()
    assert len(outcome.results) == 2
    for result in outcome.results:
        assert result.measurement.extra["inner"] == "ray tasks"
        here = problem.evaluate(result.config)  # Ray is down now: in process
        assert here.extra["inner"] == "in process" and here.objective == result.objective
