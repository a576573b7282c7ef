"""The batched replay path and its records file (issue 23, item 3; issue 52: the records format of every run,
one ``runs`` row per cell): every cell once, resumable, one writer, and the same report as whole runs into run
directories; a study directory of before issue 52 (``replays.db``) is still read and resumed."""

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
    """Per cell (a run's name): its evaluations' candidate ids, read straight from the file."""
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT id, name FROM runs").fetchall()
        return {name: [r[0] for r in conn.execute("SELECT candidate_id FROM evaluations WHERE run_id=? ORDER BY id",
                                                  (rid,))] for rid, name in runs}


def _curves(result: dict[str, Any]) -> dict[tuple[str, int], list[float]]:
    from searchlab.study.analysis.collect import collect_runs, study_sources

    runs, _ = collect_runs(study_sources(Path(result["meta"]["directory"])))
    return {(r.searcher, r.seed): list(r.losses) for r in runs}


def test_the_store_holds_every_cell_once_and_a_rerun_redoes_only_what_is_missing(tmp_path: Path) -> None:
    from searchlab.study.execution.grid import run_study

    cfg = _cfg(tmp_path / "s", 3, 12, "workers=1")  # in process: no Ray
    first = run_study(cfg)
    db = tmp_path / "s" / "results.db"
    cells = _cells(db)
    assert sorted(cells) == [f"kt/{s}/seed_{i}" for s in ("genetic", "random") for i in range(3)]
    assert all(idx == list(range(12)) for idx in cells.values())
    assert not (tmp_path / "s" / "runs").exists() and not list(tmp_path.glob("s/results.db-*"))
    with sqlite3.connect(db) as conn:  # as if the driver died before writing this cell's batch
        conn.execute("DELETE FROM evaluations WHERE run_id=(SELECT id FROM runs WHERE name='kt/random/seed_1')")
        conn.execute("DELETE FROM runs WHERE name='kt/random/seed_1'")
    again = run_study(cfg)
    assert again["meta"]["kept (already done)"] == 5
    assert _cells(db) == cells  # the missing cell redone, no cell twice, no evaluation twice
    assert _curves(again) == _curves(first)  # and replayed the same way (seeded)


def test_a_retried_task_result_replaces_its_cells(tmp_path: Path) -> None:
    from searchlab.core.store import RecordWriter
    from searchlab.study.execution.batch import replay_batch
    from searchlab.study.execution.grid import make_cells

    cfg = _cfg(tmp_path / "s", 2, 8)
    cells, _ = make_cells(cfg, tmp_path / "s")
    runs = replay_batch(cells, os.getcwd())
    with RecordWriter(tmp_path / "s" / "results.db") as store:
        assert store.write(runs) == 4 * 8
        store.write(runs[:2])  # Ray re-ran a task whose node was lost: its result arrives again
    assert {k: len(v) for k, v in _cells(tmp_path / "s" / "results.db").items()} == {r.name: 8 for r in runs}


def test_a_second_study_writing_into_the_same_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    """One writer per records file: a second study into a directory another study is writing would redo the
    same cells; it is refused naming the live process, and the first study's records are untouched."""
    from searchlab.core.store import RecordWriter
    from searchlab.errors import StoreError
    from searchlab.study.execution.grid import run_study

    with RecordWriter(tmp_path / "s" / "results.db"):
        with pytest.raises(StoreError, match=f"being written by live process {os.getpid()} on .*one process writes"):
            run_study(_cfg(tmp_path / "s", 1, 6, "workers=1"))
    assert _cells(tmp_path / "s" / "results.db") == {}
    result = run_study(_cfg(tmp_path / "s", 1, 6, "workers=1"))  # once the first is done: it runs
    assert result["meta"]["runs"] == 2


def _legacy_store(db: Path, runs: list[Any]) -> None:
    """A study store as searchlab wrote it before issue 52 (replays.db: ``cells`` and compact evaluations)."""
    import json

    from searchlab.core.jsondata import loads

    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript("""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cells (
    key TEXT PRIMARY KEY, problem TEXT NOT NULL, searcher TEXT NOT NULL, seed INTEGER NOT NULL,
    fingerprint TEXT NOT NULL, direction TEXT NOT NULL, objective_name TEXT NOT NULL, known_optimum REAL,
    config TEXT NOT NULL, versions TEXT NOT NULL, devices TEXT NOT NULL, node TEXT NOT NULL,
    stop_reason TEXT NOT NULL, status TEXT NOT NULL, wall_time_s REAL, evaluations INTEGER NOT NULL,
    written REAL NOT NULL);
CREATE TABLE evaluations (
    cell TEXT NOT NULL, idx INTEGER NOT NULL, config TEXT NOT NULL, objective REAL, recorded REAL,
    status TEXT NOT NULL, failure_mode TEXT NOT NULL, charged REAL NOT NULL, subproblem INTEGER NOT NULL,
    PRIMARY KEY (cell, idx)) WITHOUT ROWID;
INSERT INTO meta VALUES ('store_version', '1');""")
        for r in runs:
            conn.execute("INSERT INTO cells VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
                r.name, r.problem, r.searcher, r.seed, r.fingerprint, r.direction, r.objective_name, r.known_optimum,
                json.dumps(r.config), json.dumps(r.versions), json.dumps([dict(d) for d in r.devices]), r.node,
                r.stop_reason, r.status, r.ended - r.started, len(r.evaluations), 0.0))
            for i, e in enumerate(r.evaluations):  # the columns of searchlab.core._rows.EVALUATION_COLUMNS
                extra = loads(e[13])
                conn.execute("INSERT INTO evaluations VALUES (?,?,?,?,?,?,?,?,?)",
                             (r.name, i, e[2], e[8], extra.get("recorded_objective"), e[5], e[6], e[22],
                              int(bool(extra.get("subproblem")))))


def test_a_study_directory_of_before_issue_52_is_read_and_resumed(tmp_path: Path) -> None:
    """Records are data: an old study's replays.db is read as it is (never rewritten); its cells count as done,
    the cells it lacks go into results.db, and the report is the one a study made today gives."""
    from searchlab.study.execution.batch import replay_batch
    from searchlab.study.execution.grid import make_cells, run_study

    cfg = _cfg(tmp_path / "old", 2, 8, "workers=1")
    cells, _ = make_cells(cfg, tmp_path / "old")
    runs = replay_batch(cells, os.getcwd())
    _legacy_store(tmp_path / "old" / "replays.db", runs[:3])
    before = (tmp_path / "old" / "replays.db").read_bytes()
    old = run_study(cfg)
    assert old["meta"]["kept (already done)"] == 3 and old["meta"]["runs"] == 4
    assert sorted(_cells(tmp_path / "old" / "results.db")) == [runs[3].name]
    assert (tmp_path / "old" / "replays.db").read_bytes() == before
    new = run_study(_cfg(tmp_path / "new", 2, 8, "workers=1"))
    assert _curves(old) == _curves(new)
    assert [{k: v for k, v in r.items() if "wall" not in k} for r in old["rows"]] == \
           [{k: v for k, v in r.items() if "wall" not in k} for r in new["rows"]]


@pytest.mark.ray
def test_the_batched_report_equals_the_run_directories_report(tmp_path: Path) -> None:
    from searchlab.study.execution.grid import run_study

    batched = run_study(_cfg(tmp_path / "b", 2, 20, "workers=1"))  # in process (Ray tasks: test_study_grid)
    whole = run_study(_cfg(tmp_path / "w", 2, 20, "workers=2", "run_dirs=true"))
    assert len(list((tmp_path / "w" / "runs").rglob("results.db"))) == 4 and not (tmp_path / "w" / "results.db").exists()
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
    db, deadline, done = out / "results.db", time.time() + 120, 0
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
