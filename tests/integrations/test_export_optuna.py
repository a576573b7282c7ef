"""``python -m searchlab.export optuna|csv|parquet`` of a single run (issue 36, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with failures (synthetic_knobs' hidden constraints) and successes."""
    tmp = tmp_path_factory.mktemp("run")
    out = _run(tmp, "-m", "searchlab", "problem=synthetic_knobs", "searcher=random", "budget.evaluations=15",
               "executor=serial", "progress=off", "plot=false", "hydra.run.dir=run")
    assert out.returncode == 0, out.stderr[-2000:]
    return tmp / "run"


def test_every_evaluation_is_a_trial_that_load_study_opens(run_dir: Path, tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    out = _run(tmp_path, "-m", "searchlab.export", "optuna", str(run_dir), "--storage", storage, "--study-name", "r")
    assert out.returncode == 0, out.stderr
    study = optuna.load_study(study_name="r", storage=storage)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert len(study.trials) == summary["evaluations"] == 15
    states = [t.state.name for t in study.trials]
    assert states.count("COMPLETE") == summary["status_counts"].get("ok", 0) >= 1
    assert "FAIL" in states  # synthetic_knobs' hidden constraints
    failed = next(t for t in study.trials if t.state.name == "FAIL")
    assert failed.user_attrs["failure_mode"] != "none" and failed.user_attrs["device"] == "host"
    done = next(t for t in study.trials if t.state.name == "COMPLETE")
    assert done.user_attrs["samples"] and done.user_attrs["status"] == "ok"
    assert study.best_value == pytest.approx(summary["best"]["objective"])
    assert study.user_attrs["objective"] == "time_ms"


def test_an_existing_study_or_a_bad_storage_is_one_line(run_dir: Path, tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    assert _run(tmp_path, "-m", "searchlab.export", "optuna", str(run_dir), "--storage", storage).returncode == 0
    again = _run(tmp_path, "-m", "searchlab.export", "optuna", str(run_dir), "--storage", storage)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1 and "exists" in again.stderr
    (name,) = optuna.get_all_study_names(storage)
    assert len(optuna.load_study(study_name=name, storage=storage).trials) == 15  # not doubled
    bad = _run(tmp_path, "-m", "searchlab.export", "optuna", str(run_dir), "--storage", "nosuchdb://x")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--storage" in bad.stderr
    missing = _run(tmp_path, "-m", "searchlab.export", "optuna", str(run_dir))
    assert missing.returncode == 2 and "--storage" in missing.stderr


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_csv_and_parquet_of_a_single_run(run_dir: Path, tmp_path: Path, kind: str) -> None:
    import pandas as pd

    target = tmp_path / f"evaluations.{kind}"
    out = _run(tmp_path, "-m", "searchlab.export", kind, str(run_dir), "-o", str(target))
    assert out.returncode == 0, out.stderr
    frame = pd.read_csv(target) if kind == "csv" else pd.read_parquet(target)
    assert len(frame) == 15 and {"status", "failure_mode", "time_ms", "param_block_x"} <= set(frame.columns)
