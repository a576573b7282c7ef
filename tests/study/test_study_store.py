"""The batched replay path and its study store (issue 23, item 3): every cell once, resumable,
and the same report as whole runs into run directories."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from omegaconf import OmegaConf

from searchlab.study.execution.config import compose_study

KT_SMALL = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"
DELAY = "problem.delay_s=0.05"


def _cfg(out: Path, seeds: int, evaluations: int, *extra: str) -> Any:
    cfg = compose_study("kt_replay", [f"seeds={seeds}", f"budget.evaluations={evaluations}", f"out={out}", *extra])
    cfg.problems = OmegaConf.create({"kt": ["problem=kernel_tuner_cache", f"problem.path={KT_SMALL}",
                                            "problem.sample_noise=true"]})
    cfg.searchers = OmegaConf.create({"random": "random", "genetic": "genetic"})
    return cfg


def _cells(db: Path) -> dict[str, list[int]]:
    """Per cell key: its evaluation indices, read straight from the file."""
    with sqlite3.connect(db) as conn:
        keys = [r[0] for r in conn.execute("SELECT key FROM cells")]
        return {k: [r[0] for r in conn.execute("SELECT idx FROM evaluations WHERE cell=? ORDER BY idx", (k,))]
                for k in keys}


def _curves(result: dict[str, Any]) -> dict[tuple[str, int], list[float]]:
    from searchlab.study.analysis.collect import collect_runs, study_sources

    runs, _ = collect_runs(study_sources(Path(result["meta"]["directory"])))
    return {(r.searcher, r.seed): list(r.losses) for r in runs}


def test_the_store_holds_every_cell_once_and_a_rerun_redoes_only_what_is_missing(tmp_path: Path) -> None:
    from searchlab.study.execution.grid import run_study

    cfg = _cfg(tmp_path / "s", 3, 12, "workers=1")  # in process: no Ray
    first = run_study(cfg)
    db = tmp_path / "s" / "replays.db"
    cells = _cells(db)
    assert sorted(cells) == [f"kt/{s}/seed_{i}" for s in ("genetic", "random") for i in range(3)]
    assert all(idx == list(range(12)) for idx in cells.values())
    assert not (tmp_path / "s" / "runs").exists() and not list(tmp_path.glob("s/replays.db-*"))
    with sqlite3.connect(db) as conn:  # as if the driver died before writing this cell's batch
        conn.execute("DELETE FROM evaluations WHERE cell='kt/random/seed_1'")
        conn.execute("DELETE FROM cells WHERE key='kt/random/seed_1'")
    again = run_study(cfg)
    assert again["meta"]["kept (already done)"] == 5
    assert _cells(db) == cells  # the missing cell redone, no cell twice, no evaluation twice
    assert _curves(again) == _curves(first)  # and replayed the same way (seeded)


def test_a_retried_task_result_replaces_its_cells(tmp_path: Path) -> None:
    from searchlab.study.execution.batch import replay_batch
    from searchlab.study.execution.grid import make_cells
    from searchlab.study.execution.store import StudyStore

    cfg = _cfg(tmp_path / "s", 2, 8)
    cells, _ = make_cells(cfg, tmp_path / "s")
    runs = replay_batch(cells, os.getcwd())
    store = StudyStore(tmp_path / "s" / "replays.db")
    try:
        assert store.write(runs) == 4 * 8
        store.write(runs[:2])  # Ray re-ran a task whose node was lost: its result arrives again
    finally:
        store.close()
    assert {k: len(v) for k, v in _cells(tmp_path / "s" / "replays.db").items()} == {r.key: 8 for r in runs}


def test_two_studies_writing_one_store_close_without_an_error(tmp_path: Path) -> None:
    """Studies split by searcher into one directory share replays.db: the first to close cannot switch the
    journal back while the other has it open, and must not fail for it; the last close does switch it."""
    from searchlab.study.execution.batch import replay_batch
    from searchlab.study.execution.grid import make_cells
    from searchlab.study.execution.store import StudyStore

    cfg = _cfg(tmp_path / "s", 1, 6)
    cells, _ = make_cells(cfg, tmp_path / "s")
    runs = replay_batch(cells, os.getcwd())
    first, second = StudyStore(tmp_path / "s" / "replays.db"), StudyStore(tmp_path / "s" / "replays.db")
    first.write(runs[:1])
    second.write(runs[1:])
    second._conn.execute("SELECT COUNT(*) FROM cells").fetchall()
    second._conn.execute("BEGIN")  # a reader's open transaction: SQLite refuses the journal switch now
    second._conn.execute("SELECT COUNT(*) FROM cells").fetchall()
    first.close()
    second._conn.execute("COMMIT")
    second.close()
    assert {k: len(v) for k, v in _cells(tmp_path / "s" / "replays.db").items()} == {r.key: 6 for r in runs}
    with sqlite3.connect(tmp_path / "s" / "replays.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # the last close switched it


@pytest.mark.ray
def test_the_batched_report_equals_the_run_directories_report(tmp_path: Path) -> None:
    from searchlab.study.execution.grid import run_study

    batched = run_study(_cfg(tmp_path / "b", 2, 20, "workers=1"))  # in process (Ray tasks: test_study_grid)
    whole = run_study(_cfg(tmp_path / "w", 2, 20, "workers=2", "run_dirs=true"))
    assert len(list((tmp_path / "w" / "runs").rglob("results.db"))) == 4 and not (tmp_path / "w" / "replays.db").exists()
    curves = _curves(batched)
    assert len(curves) == 4 and curves == _curves(whole)
    assert any(np.isfinite(c).sum() > 5 for c in curves.values())
    timing = ("wall", "charged")  # wall times differ by nature; everything else is the same numbers
    for mine, theirs in zip(batched["rows"], whole["rows"]):
        assert {k: v for k, v in mine.items() if not any(t in k for t in timing)} == \
               {k: v for k, v in theirs.items() if not any(t in k for t in timing)}


def test_a_killed_study_keeps_its_finished_cells_and_resumes(tmp_path: Path) -> None:
    from searchlab.study.execution.grid import run_study

    out = tmp_path / "s"
    args = ["study=synthetic_replay", "seeds=4", "budget.evaluations=20", "workers=1", "~problems.synthetic_knobs",
            f"+problems.dag=['problem=synthetic_dag','{DELAY}']", "~searchers.tag", "~searchers.mc", "~searchers.uct"]
    proc = subprocess.Popen([sys.executable, "-m", "searchlab.study", *args, "--out", str(out)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    db, deadline, done = out / "replays.db", time.time() + 120, 0
    while proc.poll() is None and time.time() < deadline and not done:
        try:
            done = len(_cells(db)) if db.is_file() else 0
        except sqlite3.OperationalError:  # the file exists before its tables do
            done = 0
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    log = proc.communicate()[0]
    done = len(_cells(db))
    assert 1 <= done < 4, log[-2000:]
    result = run_study(compose_study("synthetic_replay", args[1:]), [], str(out))
    cells = _cells(db)
    assert sorted(cells) == [f"dag/random/seed_{s}" for s in range(4)]
    assert all(idx == list(range(20)) for idx in cells.values())
    assert result["meta"]["kept (already done)"] >= done
