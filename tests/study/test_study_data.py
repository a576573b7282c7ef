"""Study inputs: recorded runs (written through the real store) -> tables, collected runs, metrics rows.

``make_run`` writes a run's records with :class:`searchlab.core.store.RunStore`, as the loop
does, so the aggregation is checked on hand-chosen objective sequences.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.table import TableProblem, load_table
from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result
from searchlab.core.store import RunStore
from searchlab.errors import ConfigError
from searchlab.study import table_from_run
from searchlab.study.analysis.aggregate import aggregate
from searchlab.study.analysis.collect import collect_runs

DAG2 = {"_target_": "searchlab.adapters.synthetic.SyntheticDag", "arity": [2, 3], "seed": 0, "tail": 2.0, "noise": 0.0,
        "delay_s": 0.0}
Entry = Any  # a float objective, a FailureMode, or a Measurement


def make_run(run_dir: Path, entries: Sequence[Entry], *, problem: str = "p", searcher: str = "a", seed: int = 0,
             fingerprint: str = "f0", direction: str = "minimize", known: float | None = 1.0,
             problem_cfg: dict[str, Any] | None = None, searcher_cfg: dict[str, Any] | None = None,
             configs: Sequence[Config] | None = None, charged: float = 0.0, report: dict[str, Any] | None = None,
             stop: str = "evaluations") -> Path:
    store = RunStore.create(run_dir, {
        "problem": problem, "searcher": searcher, "seed": seed, "fingerprint": fingerprint, "direction": direction,
        "objective_name": "time", "known_optimum": known,
        "config": {"problem": problem_cfg or {"_target_": "x.P", "size": 1},
                   "searcher": searcher_cfg or {"_target_": f"x.{searcher}"}, "seed": seed},
        "devices": [{"name": "host"}]})
    for i, entry in enumerate(entries):
        if isinstance(entry, Measurement):
            m = entry
        elif isinstance(entry, FailureMode):
            m = Measurement.failed(entry, "by hand", run_s=charged)
        else:
            m = Measurement.ok(entry, run_s=charged)
        config = configs[i] if configs is not None else Config(x=i)
        store.record(Result(Candidate(i, config, config), m))
    store.finish(stop)
    store.close()
    summary: dict[str, Any] = {"report": report or {}, "wall_time_s": 0.5}
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir


C, R = FailureMode.COMPILE, FailureMode.RESOURCES


def hand_study(tmp_path: Path) -> list[Any]:
    """Searchers "a" and "random", two seeds each, known optimum 1 (minimised), 1 s per evaluation."""
    make_run(tmp_path / "a0", [4, C, 2, 1], searcher="a", seed=0, charged=1.0)
    make_run(tmp_path / "a1", [2, 2.5, R, 1.25], searcher="a", seed=1, charged=1.0)
    make_run(tmp_path / "r0", [C, C, 10, 5], searcher="random", seed=0, charged=1.0)
    make_run(tmp_path / "r1", [1, 3, 3, 3], searcher="random", seed=1, charged=1.0)
    runs, notes = collect_runs([tmp_path])
    return aggregate(runs, notes).rows  # type: ignore[no-any-return]


def test_metrics_rows_match_the_hand_computation(tmp_path: Path) -> None:
    rows = {r["searcher"]: r for r in hand_study(tmp_path)}
    a = rows["a"]
    # best so far: a0 [4,4,2,1] -> fractions [.25,.25,.5,1]; a1 [2,2,2,1.25] -> [.5,.5,.5,.8]
    assert a["reference"] == "known optimum" and a["reference_value"] == 1.0
    assert a["final_fraction_mean"] == pytest.approx(0.9)
    assert a["final_fraction_p10"] == pytest.approx(0.82) and a["final_fraction_p90"] == pytest.approx(0.98)
    assert a["success_optimum"] == 0.5 and a["success_70"] == 1.0 and a["success_90"] == 0.5
    assert (a["evals_to_50_p30"], a["evals_to_50_p50"], a["evals_to_50_p70"]) == pytest.approx((1.6, 2.0, 2.4))
    assert a["evals_to_90_p30"] == math.inf  # one run never reached 90 %: censored
    assert a["failed_share"] == 0.25 and a["failed_compile"] == 0.125 and a["failed_resources"] == 0.125
    # R from the random runs (failures floored at the worst success, 10): [5.5,5.5,5.5,3]; S = [3,3,2,1.125]
    expected = [(3 - 5.5) / (1 - 5.5), (3 - 5.5) / (1 - 5.5), (2 - 5.5) / (1 - 5.5), (1.125 - 3) / (1 - 3)]
    assert a["score_final"] == pytest.approx(expected[-1])
    assert a["score_mean"] == pytest.approx(sum(expected) / 4)
    # per run: a0 ends at 1 -> (1 - 3) / (1 - 3) = 1; a1 at 1.25 -> 0.875; the bootstrap of two values spans both
    assert (a["score_final_lo"], a["score_final_hi"]) == pytest.approx((0.875, 1.0))
    assert rows["random"]["score_final"] == pytest.approx(0.0, abs=1e-12)  # random against itself
    assert rows["random"]["failed_compile"] == 0.25 and rows["random"]["best_value"] == 1.0
    assert a["charged_s_mean"] == 4.0 and a["budget"] == 4


def test_time_curves_and_pooled_problems(tmp_path: Path) -> None:
    make_run(tmp_path / "x", [4, 2], problem="p", charged=1.0)
    make_run(tmp_path / "y", [C, 8], problem="q", fingerprint="f1", known=None, direction="maximize", charged=2.0)
    runs, notes = collect_runs([tmp_path])
    data = aggregate(runs, notes)
    curves = {(c.problem, c.searcher): c for c in data.curves}
    p = curves[("p", "a")]
    assert p.time_fractions is not None and p.time_fractions[0, 0] == 0.25 and p.time_fractions[0, -1] == 0.5
    q = curves[("q", "a")]  # maximised, no known optimum: the best seen (8) is the reference
    assert q.fractions.tolist() == [[0.0, 1.0]]
    assert {r["problem"] for r in data.rows} == {"p", "q", "(all problems)"}
    pooled = next(r for r in data.rows if r["problem"] == "(all problems)")
    assert pooled["runs"] == 2 and pooled["final_fraction_mean"] == pytest.approx(0.75)


def test_a_subproblem_measurement_is_never_a_best(tmp_path: Path) -> None:
    sub = Measurement.ok(0.5, extra={"subproblem": "DFT_2"})
    make_run(tmp_path / "s", [sub, 2.0, 1.0])
    rows = aggregate(*collect_runs([tmp_path])).rows
    assert rows[0]["best_value"] == 1.0 and rows[0]["final_fraction_mean"] == 1.0
    assert rows[0]["evals_to_50_p50"] == 2.0  # the sub-problem's 0.5 counts as an evaluation, not a best


def test_mixed_fingerprints_are_refused_with_the_difference_then_pooled_when_allowed(tmp_path: Path) -> None:
    make_run(tmp_path / "one", [2, 1], problem_cfg={"_target_": "x.P", "seed": 0}, fingerprint="f0")
    make_run(tmp_path / "two", [4, 2], problem_cfg={"_target_": "x.P", "seed": 1}, fingerprint="f1", known=2.0)
    with pytest.raises(ConfigError, match=r"problem 'p' has 2 fingerprints.*differ in problem\.seed") as err:
        collect_runs([tmp_path])
    assert str(tmp_path / "one") in str(err.value) and "--allow-mixed" in str(err.value)
    runs, notes = collect_runs([tmp_path], allow_mixed=True)
    rows = aggregate(runs, notes).rows
    assert rows[0]["instances"] == 2 and rows[0]["final_fraction_mean"] == 1.0  # each normalised on its own


def test_searchers_with_different_options_get_labelled_apart(tmp_path: Path) -> None:
    make_run(tmp_path / "e0", [1], searcher="exhaustive", searcher_cfg={"_target_": "E", "shuffle": False})
    make_run(tmp_path / "e1", [1], searcher="exhaustive", searcher_cfg={"_target_": "E", "shuffle": True})
    runs, _ = collect_runs([tmp_path])
    assert sorted(r.searcher for r in runs) == ["exhaustive[shuffle=False]", "exhaustive[shuffle=True]"]


def test_validation_reports_become_a_table_of_medians(tmp_path: Path) -> None:
    for seed, t in enumerate((1.0, 3.0, 2.0)):
        make_run(tmp_path / f"v{seed}", [t], seed=seed, report={"validation": {"best": {"n64": t, "n1024": 10 * t}}})
    data = aggregate(*collect_runs([tmp_path]))
    row = data.validation["p"][0]
    assert row["best.n64"] == 2.0 and row["best.n1024"] == 20.0 and row["runs"] == 3


def _words(arity: Sequence[int]) -> list[Config]:
    from searchlab.adapters.synthetic import SyntheticDag

    return list(SyntheticDag(arity=arity).space.enumerate())


def test_table_from_a_complete_run_replays_its_measurements(tmp_path: Path) -> None:
    words = _words([2, 3])
    make_run(tmp_path / "t", [float(i + 1) for i in range(6)], configs=words, problem_cfg=DAG2,
             direction="maximize", stop="exhausted")
    table = table_from_run(tmp_path / "t")
    assert len(table.rows) == 6 and table.best()[1].objective == 6.0
    assert load_table(tmp_path / "t" / "results.db").rows == table.rows  # searchlab.adapters.table' entry point
    problem = TableProblem(table)
    assert problem.evaluate(words[2]).objective == 3.0 and problem.known_optimum == 6.0


def test_table_from_an_incomplete_run_is_refused_unless_coverage_is_relaxed(tmp_path: Path) -> None:
    words = _words([2, 3])
    sub = Measurement.ok(100.0, extra={"subproblem": "s"})
    make_run(tmp_path / "t", [sub, 1.0, 2.0, 3.0], configs=[words[3], *words[:3]], problem_cfg=DAG2)
    with pytest.raises(ConfigError, match=r"not a complete table: 3 of 6 members .*searcher=exhaustive"):
        table_from_run(tmp_path / "t")
    table = table_from_run(tmp_path / "t", min_coverage=0.5)
    assert len(table.rows) == 3 and words[3] not in table.rows  # the sub-problem row is dropped
    assert TableProblem(table).evaluate(words[4]).failure_mode is FailureMode.INVALID
    with pytest.raises(ConfigError, match="no results.db"):
        table_from_run(tmp_path)


def test_threshold_tables_answer_for_every_value_of_a_recorded_plateau(tmp_path: Path) -> None:
    from searchlab.adapters.synthetic import SyntheticThresholds
    from searchlab.run.lifecycle import execute
    from searchlab.study.execution.grid import _compose_run

    cfg = _compose_run(["problem=synthetic_thresholds", "searcher=exhaustive", "executor=serial",
                        "budget.evaluations=100000", "progress=off"])
    if "tree_aware" in cfg["searcher"]:
        cfg["searcher"]["tree_aware"] = False  # every plateau combination, not the tree-wise shortcut
    execute(cfg, tmp_path / "exh", quiet=True)
    table = table_from_run(tmp_path / "exh")
    live, replay = SyntheticThresholds(), TableProblem(table)
    rng = __import__("numpy").random.default_rng(0)
    for _ in range(20):  # arbitrary threshold values, not the recorded representatives
        config = Config({n: int(rng.integers(1, 200_000)) for n in live.space.names})
        assert replay.evaluate(config).objective == pytest.approx(live.evaluate(config).objective)
    assert len(table.rows) == live.space.size()


def test_noisy_replays_are_scored_at_the_recorded_value(tmp_path: Path) -> None:
    from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result
    from searchlab.core.store import RecordWriter, RunRecord
    from searchlab.study.analysis.collect import read_run_data

    def run(name: str, direction: str, *measurements: Measurement) -> RunRecord:
        results = [Result(Candidate(i, Config(x=i), Config(x=i)), m) for i, m in enumerate(measurements)]
        return RunRecord(name, "p", "s", 0, {}, direction=direction, evaluations=RunRecord.encode(results))

    drawn = Measurement.ok(0.8, extra={"recorded_objective": 1.0, "drawn_sample": 3})
    with RecordWriter(tmp_path / "results.db") as writer:
        writer.write([run("min", "minimize", drawn, Measurement.failed(FailureMode.RUNTIME),
                          Measurement.ok(0.5, extra={"subproblem": "row 3"})),
                      run("max", "maximize", Measurement.ok(0.8))])
    scored = {r.path.name.split("#")[1]: r.losses.tolist() for r in read_run_data(tmp_path)}
    assert scored == {"min": [1.0, float("inf"), float("inf")], "max": [-0.8]}
