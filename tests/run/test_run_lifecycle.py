"""The run lifecycle (issue 21, item 2): one Run for the CLI and the library, a frozen prepared
value, the config groups declared once, and old records naming moved modules still resumable."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from searchlab.cli.compose import compose, sweep
from searchlab.run.lifecycle import execute
from searchlab.run.prepare import prepare

BASE = ["problem=synthetic_knobs", "searcher=random", "executor=serial", "progress=off", "plot=false"]


def _evaluations(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_id >= 0").fetchone()[0])


def test_a_results_db_naming_the_old_executor_module_stays_resumable(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    execute(compose([*BASE, "budget.evaluations=4"]).cfg, run_dir, quiet=True)
    db = run_dir / "results.db"
    with sqlite3.connect(db) as conn:  # as recorded before issue 21 moved searchlab.execution
        stored = json.loads(conn.execute("SELECT config FROM runs").fetchone()[0])
        assert stored["executor"]["_target_"] == "searchlab.run.execution.SerialExecutor"
        stored["executor"]["_target_"] = "searchlab.execution.SerialExecutor"
        conn.execute("UPDATE runs SET config = ?", (json.dumps(stored),))
    resumed = compose([f"resume={run_dir}", "budget.evaluations=6", "progress=off"]).cfg
    summary = execute(resumed, run_dir, overrides=[f"resume={run_dir}", "budget.evaluations=6"], quiet=True)
    assert summary["evaluations"] == 6 and _evaluations(db) == 6
    assert "stopped at 6 of 6 evaluations" in summary["verdict"]  # the resume's budget, not the first run's


def test_an_unregistered_old_looking_target_is_still_refused(tmp_path: Path) -> None:
    from searchlab.recompose import UntrustedTargetError

    run_dir = tmp_path / "run"
    execute(compose([*BASE, "budget.evaluations=2"]).cfg, run_dir, quiet=True)
    with sqlite3.connect(run_dir / "results.db") as conn:
        stored = json.loads(conn.execute("SELECT config FROM runs").fetchone()[0])
        stored["executor"]["_target_"] = "searchlab.execution.os.system"
        conn.execute("UPDATE runs SET config = ?", (json.dumps(stored),))
    with pytest.raises(UntrustedTargetError):
        prepare(compose([f"resume={run_dir}"]).cfg, run_dir, overrides=[f"resume={run_dir}"])


def test_what_prepare_returns_is_frozen(tmp_path: Path) -> None:
    prepared = prepare(compose([*BASE, "budget.evaluations=2"]).cfg, tmp_path / "run")
    try:
        with pytest.raises(dataclasses.FrozenInstanceError):
            prepared.run_dir = tmp_path  # type: ignore[misc]
        assert not (tmp_path / "run").exists()  # prepared: nothing written
    finally:
        prepared.close()


def test_optimize_runs_in_memory_and_hands_every_result_to_the_store(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.adapters.synthetic.knobs import SyntheticKnobs
    from searchlab.api import optimize
    from searchlab.run.loop import Budget, StopReason
    from searchlab.searchers import RandomSearcher

    monkeypatch.chdir(tmp_path)
    problem = SyntheticKnobs()
    recorded = []

    class Store:
        def record(self, result: object) -> None:
            recorded.append(result)

    outcome = optimize(problem, RandomSearcher(problem.space, seed=0, direction=problem.direction),
                       Budget(evaluations=7), store=Store())
    assert outcome.reason is StopReason.EVALUATIONS and len(outcome.results) == 7
    assert recorded == list(outcome.results)
    assert not list(tmp_path.iterdir())  # no run directory, no results.db


def test_the_config_groups_are_declared_once() -> None:
    from searchlab import recompose, registry
    from searchlab.cli import helptext
    from searchlab.core import groups
    from searchlab.run import checks

    assert registry.KINDS == recompose.GROUPS == groups.REGISTERED == ("problem", "searcher", "executor")
    assert helptext.GROUPS == checks.CHECKED == groups.NAMES == ("problem", "searcher", "executor", "budget")
    assert set(registry.GROUPS) == {"problem", "searcher"}


def test_the_budget_schema_is_the_budgets_own_fields() -> None:
    from searchlab.cli.config import BudgetSchema
    from searchlab.run.loop import Budget

    def spec(cls: type) -> list[tuple[str, object]]:
        return [(f.name, f.default) for f in dataclasses.fields(cls)]

    assert spec(BudgetSchema) == spec(Budget)
    assert compose([*BASE, "budget.max_failure_rate=0.5"]).cfg.budget.max_failure_rate == 0.5


def test_a_replay_draws_its_noise_from_the_runs_seed() -> None:
    from searchlab.adapters.table.problem import TableProblem
    from searchlab.core.problem import Problem

    assert TableProblem.run_options({"noise_seed": None, "path": "t.json"}, 7) == {"noise_seed": 7, "path": "t.json"}
    assert TableProblem.run_options({"noise_seed": 3}, 7) == {"noise_seed": 3}
    assert Problem.run_options({"noise_seed": None}, 7) == {"noise_seed": None}  # other problems: as given


def test_a_sweep_expands_like_hydras_basic_sweeper() -> None:
    jobs = sweep(["searcher=random,exhaustive", "seed=0,1", "executor=serial"])
    assert jobs == [["searcher=random", "seed=0", "executor=serial"], ["searcher=random", "seed=1", "executor=serial"],
                    ["searcher=exhaustive", "seed=0", "executor=serial"],
                    ["searcher=exhaustive", "seed=1", "executor=serial"]]


def test_hydra_composes_each_job_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    from searchlab.cli import compose as compose_module
    from searchlab.cli.main import run_command

    calls = []
    load = ConfigLoaderImpl.load_configuration

    def counted(self: ConfigLoaderImpl, *args: object, **kwargs: object) -> object:
        calls.append(args)
        return load(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    monkeypatch.setattr(compose_module, "configure_logging", lambda job: None)  # leave pytest's logging alone
    monkeypatch.chdir(tmp_path)
    assert run_command([*BASE, "budget.evaluations=2"]) == 0
    assert len(calls) == 1  # was 2: a check composition, then Hydra's app composed again
    (run_dir,) = [p.parent for p in tmp_path.glob("outputs/*/*/results.db")]
    assert run_command([f"resume={run_dir}", "budget.evaluations=3", "progress=off"]) == 0
    assert len(calls) == 2
    assert run_command(["-m", "seed=0,1", *BASE, "budget.evaluations=2", f"hydra.sweep.dir={tmp_path / 'sweep'}"]) == 0
    assert len(calls) == 5  # one per job, and the sweep's own (Hydra's sweeper and launcher get the jobs composed)
    assert len(list((tmp_path / "sweep").glob("*/results.db"))) == 2
