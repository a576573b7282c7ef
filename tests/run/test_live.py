"""The live view (searchlab.run.live): a run as an Optuna study, written as evaluations finish.

Each test reads the study back with Optuna itself and compares it with the run's ``results.db``, the record of truth.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest

from searchlab.core.problem import DeviceNeed
from searchlab.core.records import Candidate, Config, Direction, Measurement, Result
from searchlab.errors import ConfigError
from searchlab.run.live import LiveStudy, Tee, check_live, dashboard_command, storage_for


def run(run_dir: Path, *overrides: str) -> dict[str, Any]:
    """The run as the command line composes and prepares it (a resume's overrides say what changes), in process."""
    from hydra import compose, initialize_config_dir

    from searchlab.cli.config import register_configs
    from searchlab.core.groups import CONF_DIR
    from searchlab.run.lifecycle import execute

    register_configs()
    words = ["executor=serial", "progress=off", *overrides]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=words)
    return execute(cfg, run_dir, overrides=words, quiet=True)


def _study(storage: Path | str, name: str | None = None) -> Any:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    backend: Any = str(storage) if "://" in str(storage) else JournalStorage(JournalFileBackend(str(storage)))
    names = [s.study_name for s in optuna.get_all_study_summaries(backend)]
    return optuna.load_study(study_name=name or names[0], storage=backend)


def _records(run_dir: Path) -> list[tuple[str, float | None, str]]:
    with sqlite3.connect(run_dir / "results.db") as db:
        return db.execute("SELECT config, objective, failure_mode FROM evaluations WHERE candidate_id >= 0 "
                          "ORDER BY id").fetchall()


def test_the_setting_is_checked_once_and_says_where_the_view_goes(tmp_path: Path) -> None:
    assert [check_live(v) for v in (None, "auto", True, "on", False, "0")] == ["auto", "auto", "true", "true",
                                                                               "false", "false"]
    assert check_live("sqlite:///x.db") == "sqlite:///x.db"
    for bad, why in (("sqlite:///:memory:", "in-memory"), ("sqlite://", "in-memory"), (str(tmp_path), "auto, true")):
        with pytest.raises(ConfigError, match=why):
            check_live(bad)

    class Problem:
        device_need = DeviceNeed.OPENCL

    class Table:
        device_need = DeviceNeed.NONE

    class Command(Table):  # no device, but it measures a program under the shared protocol
        def __init__(self, measure: object = None) -> None: ...

    run_dir = tmp_path / "day" / "run"
    run_dir.mkdir(parents=True)
    assert storage_for("auto", run_dir, cast(Any, Table())) is None
    assert storage_for("false", run_dir, cast(Any, Problem())) is None
    assert storage_for("auto", run_dir, cast(Any, Problem())) == str(run_dir / "live.log")
    assert storage_for("auto", run_dir, cast(Any, Command())) == str(run_dir / "live.log")
    assert storage_for("true", run_dir, cast(Any, Table())) == str(run_dir / "live.log")
    (run_dir.parent / "multirun.yaml").write_text("{}")  # a Hydra sweep's directory: one storage for every job
    assert storage_for("true", run_dir, cast(Any, Table())) == str(run_dir.parent / "live.log")
    assert storage_for("views.log", run_dir, cast(Any, Table())) == str(Path("views.log").resolve())
    assert dashboard_command("/a b/live.log").endswith("--host 127.0.0.1 --port 8080 '/a b/live.log'")


def test_a_run_is_a_study_equal_to_its_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    summary = run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=12", "live=true")
    study = _study(run_dir / "live.log")
    records = _records(run_dir)
    assert study.study_name == "run" and len(study.trials) == len(records) == 12
    for trial, (config, objective, mode) in zip(study.trials, records):  # in recorded order, value and state alike
        assert trial.params == dict(Config.from_json(config)) and trial.value == objective
        assert trial.state.name == ("COMPLETE" if objective is not None else "FAIL")
        assert trial.user_attrs["failure_mode"] == mode and trial.user_attrs["device"] == "host"
    assert [t.user_attrs["evaluation"] for t in study.trials] == list(range(1, 13))
    attrs = study.user_attrs
    assert attrs["run_dir"] == str(run_dir) and attrs["problem"] == "synthetic_knobs" and attrs["searcher"] == "random"
    assert attrs["status"] == "finished" and attrs["verdict"] == summary["verdict"]
    assert study.best_value == summary["best_measured"]["objective"]


def test_a_resume_adds_only_what_the_study_lacks(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=5", "live=false")
    assert not (run_dir / "live.log").exists()  # off: nothing written
    run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=8", f"resume={run_dir}", "live=true")
    study = _study(run_dir / "live.log")  # the first session's 5 added on resume, then 3 new ones
    assert [t.user_attrs["evaluation"] for t in study.trials] == list(range(1, 9))
    run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=10", f"resume={run_dir}", "live=true")
    study = _study(run_dir / "live.log")
    assert len(study.trials) == len(_records(run_dir)) == 10 and len({t.user_attrs["evaluation"] for t in study.trials}) == 10


def test_confirm_results_reach_the_study_as_they_come(tmp_path: Path) -> None:
    spec = tmp_path / "command.yaml"
    spec.write_text("knobs: {n: [1, 2, 3]}\nrun: ['true']\ndefault: {n: 2}\nobjective: {kind: wall_time}\n"
                    "measure: {min_runs: 3, max_runs: 3, min_time_s: 0.0, target_rel_ci: 0.0, warmup: 0}\n")
    run_dir = tmp_path / "run"
    summary = run(run_dir, "problem=command", f"problem.spec={spec}", "searcher=exhaustive", "budget.evaluations=3",
                  "confirm.k=2", "confirm.rounds=2", "confirm.max_rounds=4", "live=true")
    study = _study(run_dir / "live.log")
    confirm = study.user_attrs["confirm"]
    with sqlite3.connect(run_dir / "results.db") as db:
        measured = db.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_id < 0").fetchone()[0]
    assert measured > 0 and sum(e["rounds"] for e in confirm) == measured
    assert [e["config"] for e in confirm if e["default"]] == [{"n": 2}]
    assert study.user_attrs["recommended"] == summary["recommended"]["config"] and len(study.trials) == 3


def test_a_view_that_cannot_be_written_is_one_warning_and_the_run_goes_on(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    summary = run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=6",
                  f"live=sqlite:///{tmp_path}/no/such/dir/views.db")
    warnings = [line for line in capsys.readouterr().err.splitlines() if "live view" in line]
    assert len(warnings) == 1 and "warning" in warnings[0] and "results.db keeps every evaluation" in warnings[0]
    assert summary["status"] == "finished" and len(_records(run_dir)) == 6


def test_the_store_comes_first_and_only_its_errors_are_the_runs(tmp_path: Path) -> None:
    order: list[str] = []

    class Store:
        def record(self, result: Result) -> None:
            order.append("store")

    view = LiveStudy.open(str(tmp_path / "v.log"), "v", direction=Direction.MINIMIZE)
    tee = Tee(Store(), view)
    result = Result(Candidate(0, Config({"x": 1}), Config({"x": 1})), Measurement.ok(1.0))
    tee.record(result)
    tee.close()
    assert order == ["store"] and view.written == 1 and view.failed is None

    class Full:
        def record(self, result: Result) -> None:
            raise OSError("disk full")

    with pytest.raises(OSError):
        Tee(Full(), LiveStudy.open(str(tmp_path / "w.log"), "w", direction=Direction.MINIMIZE)).record(result)


def test_a_sweeps_parallel_jobs_share_one_storage(tmp_path: Path) -> None:
    """Two joblib processes write one journal at once (its lock), one study per job, in the sweep's directory."""
    import subprocess
    import sys

    sweep = tmp_path / "sweep"
    out = subprocess.run([sys.executable, "-m", "searchlab", "-m", "problem=synthetic_knobs", "problem.delay_s=0.05",
                          "searcher=random", "seed=0,1", "budget.evaluations=10", "live=true", "progress=off",
                          "plot=false", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count(f"--port 8080 {sweep / 'live.log'}") + out.stderr.count(f"--port 8080 {sweep / 'live.log'}") == 2
    for job in sorted(p for p in sweep.iterdir() if p.is_dir()):
        study = _study(sweep / "live.log", job.name)
        assert len(study.trials) == len(_records(job)) == 10 and study.user_attrs["status"] == "finished"


def test_a_journal_torn_by_a_kill_is_mended_on_resume(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=4", "live=true")
    journal = run_dir / "live.log"
    with journal.open("ab") as fh:  # what a writer killed mid-append leaves
        fh.write(b'{"op_code": 4, "worker_id": "x", "study_id": 0, "datetime_st')
    run(run_dir, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=6", f"resume={run_dir}", "live=true")
    assert journal.read_bytes().endswith(b"\n")
    assert [t.user_attrs["evaluation"] for t in _study(journal).trials] == list(range(1, 7))
