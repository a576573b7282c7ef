"""Records of work on a cluster, without a cluster (issue 24): the node columns, old databases,
and the driver's writing of a replay's records (a retried result replaces, never appends)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from searchlab.core.store import RunStore, node_counts, read_run


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from searchlab.run.lifecycle import execute
    from searchlab.study.execution.grid import _compose_run

    run_dir = tmp_path_factory.mktemp("run") / "run"
    execute(_compose_run(["problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=6",
                          "progress=off", "plot=false"]), run_dir, quiet=True)
    return run_dir


def _as_schema_1(src: Path, dst: Path) -> Path:
    """A copy of a run as searchlab wrote it before the node columns existed."""
    dst.mkdir()
    with sqlite3.connect(src / "results.db") as conn:
        conn.execute(f"VACUUM INTO '{dst / 'results.db'}'")
    conn = sqlite3.connect(dst / "results.db")
    conn.execute("ALTER TABLE evaluations DROP COLUMN node")
    conn.execute("ALTER TABLE runs DROP COLUMN nodes")
    conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    return dst


def test_a_run_outside_ray_records_no_node(finished: Path) -> None:
    assert node_counts(finished) == {"": 6}
    info, _ = read_run(finished)
    assert info["nodes"] == []


def test_a_schema_1_database_is_read_and_resumed(finished: Path, tmp_path: Path) -> None:
    from searchlab.run.lifecycle import execute

    old = _as_schema_1(finished, tmp_path / "old")
    info, results = read_run(old)  # read as is
    assert len(results) == 6 and "nodes" not in info
    assert node_counts(old) == {"": 6}
    store = RunStore.open(old)  # opened to resume: migrated in place
    store.close()
    conn = sqlite3.connect(old / "results.db")
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "2"
    assert "node" in {r[1] for r in conn.execute("PRAGMA table_info(evaluations)")}
    conn.close()
    summary = execute({"resume": str(old), "budget": {"evaluations": 9}}, old, quiet=True,
                      overrides=["budget.evaluations=9"])
    assert summary["evaluations"] == 9 and len(read_run(old)[1]) == 9


def test_the_driver_writes_a_replay_once_and_a_retried_result_replaces_it(finished: Path, tmp_path: Path) -> None:
    from searchlab.study.execution.publish import ReplayOutcome, dump_rows, publish, run_files

    outcome = ReplayOutcome({"cell": "x"}, dump_rows(finished), run_files(finished), "node-a")
    assert outcome.rows.evaluations == 6 and "summary.json" in outcome.files
    target = tmp_path / "runs" / "p" / "s" / "seed_0"
    publish(target, outcome)
    publish(target, outcome)  # Ray re-ran the task: its result is written again, not appended
    assert len(read_run(target)[1]) == 6
    assert json.loads((target / "summary.json").read_text()) == json.loads((finished / "summary.json").read_text())
    assert not list(target.glob("*.part")) and not list(target.glob("*.tmp"))


def test_a_record_cannot_write_outside_its_run_directory(finished: Path, tmp_path: Path) -> None:
    from searchlab.study.execution.publish import ReplayOutcome, dump_rows, publish

    cols, rows = dump_rows(finished).tables["evaluations"]
    hostile = dump_rows(finished)
    hostile.tables["evaluations"] = ((*cols, "x); DROP TABLE runs; --"), [(*r, 1) for r in rows])
    publish(tmp_path / "run", ReplayOutcome({}, hostile, {"../escaped.txt": b"no"}, ""))
    assert not (tmp_path / "escaped.txt").exists()
    assert len(read_run(tmp_path / "run")[1]) == 6  # the unknown column was left out, the runs table is there
