"""Study grids end to end: replays as Ray tasks, a live ``-m`` sweep fed to the report, the CLI's errors."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from searchlab.core.store import read_run
from searchlab.study.execution.config import available, compose_study
from searchlab.study.execution.grid import _compose_run, run_study


def _cli(cwd: Path, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_every_study_config_composes() -> None:
    for name in available():
        cfg = compose_study(name, [])
        assert cfg.problems and cfg.searchers and cfg.mode in ("replay", "live")


@pytest.mark.ray
def test_replay_study_on_an_exhaustive_table(tmp_path: Path) -> None:
    cfg = compose_study("synthetic_replay", ["seeds=2", "budget.evaluations=12", "workers=2",
                                             f"tables_dir={tmp_path / 'tables'}"])
    cfg.problems = {"dag": {"overrides": ["problem=synthetic_dag"], "table": "auto"}}
    cfg.searchers = OmegaConf.create({"random": "random", "shuffled": ["searcher=exhaustive", "searcher.shuffle=true"]})
    result = run_study(cfg, [], str(tmp_path / "study"))
    rows = {r["searcher"]: r for r in result["rows"]}
    assert set(rows) == {"random", "shuffled"} and all(r["runs"] == 2 for r in rows.values())
    assert rows["random"]["reference"] == "table optimum"
    assert rows["random"]["score_baseline"] == "exact, from the table"
    assert result["paths"]["html"].is_file() and len(pd.read_csv(result["paths"]["csv"])) == 2
    # a replay sees exactly what the live problem would have measured: same seed, same objectives
    with sqlite3.connect(tmp_path / "study" / "results.db") as conn:  # the study's records (run_dirs: false)
        rid, problem, config = conn.execute("SELECT id, problem, config FROM runs WHERE name='dag/random/seed_1'").fetchone()
        replayed = [r[0] for r in conn.execute("SELECT objective FROM evaluations WHERE run_id=? ORDER BY id", (rid,))]
    assert problem == "dag" and json.loads(config)["problem"]["_target_"] == "searchlab.adapters.table.TableProblem"
    assert not (tmp_path / "study" / "runs").exists()
    from searchlab.run.lifecycle import execute

    live = _compose_run(["problem=synthetic_dag", "searcher=random", "executor=serial", "seed=1",
                         "budget.evaluations=12", "progress=off"])
    execute(live, tmp_path / "live", quiet=True)
    assert [r.objective for r in read_run(tmp_path / "live")[1]] == replayed
    # re-running into the same directory keeps what is done (no Ray needed)
    again = run_study(cfg, [], str(tmp_path / "study"))
    assert again["meta"]["kept (already done)"] == 4


def test_live_multirun_sweep_feeds_the_same_report(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    out = _cli(tmp_path, "searchlab", "-m", "problem=synthetic_knobs", "searcher=random,exhaustive", "seed=0,1,2",
               "budget.evaluations=15", "executor=serial", "progress=off", f"hydra.sweep.dir={sweep}")
    assert out.returncode == 0, out.stderr[-3000:]
    out = _cli(tmp_path, "searchlab.study", str(sweep))
    assert out.returncode == 0, out.stderr[-3000:]
    metrics = pd.read_csv(sweep / "study" / "metrics.csv")
    assert sorted(metrics["searcher"]) == ["exhaustive", "random"] and set(metrics["runs"]) == {3}
    assert set(metrics["reference"]) == {"known optimum"}
    assert "data:image/svg+xml;base64," in (sweep / "study" / "report.html").read_text()


def test_cli_errors_are_one_line_with_status_2(tmp_path: Path) -> None:
    out = _cli(tmp_path, "searchlab.study", str(tmp_path))
    assert out.returncode == 2 and "no results.db found" in out.stderr
    out = _cli(tmp_path, "searchlab.study", "seeds=3")
    assert out.returncode == 2 and "need study=NAME" in out.stderr
    out = _cli(tmp_path, "searchlab.study", "study=nope")
    assert out.returncode == 2 and "no conf/study/nope.yaml" in out.stderr


def test_a_bad_fold_is_one_line_with_status_2_and_no_study_made(tmp_path: Path) -> None:
    out = _cli(tmp_path, "searchlab.study", "study=tuned_peers", f"out={tmp_path / 's'}",
               "split.folds=[{train: [A100], test: [A4000]}, {train: [W6600], test: [A4000]}]")
    assert out.returncode == 2, out.stderr[-2000:]
    assert "['A4000'] are test problems of two folds" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()
