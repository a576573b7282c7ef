"""The one record format (issue 52): a records file of many runs, its batch writer and the one reader."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result
from searchlab.core.store import RecordWriter, RunRecord, RunStore, read_run, read_runs
from searchlab.errors import StoreError


def _results(n: int, start: float = 1.0) -> list[Result]:
    out = []
    for i in range(n):
        m = Measurement.ok(start + i, run_s=0.5) if i % 3 else Measurement.failed(FailureMode.RUNTIME, "boom")
        out.append(Result(Candidate(i, Config(x=i), Config(x=i)), m, worker="w0", t_submit=1.0, t_start=2.0, t_end=3.0))
    return out


def _record(name: str, n: int, **facts: object) -> RunRecord:
    return RunRecord(name, "prob", "random", 0, {"seed": 0}, evaluations=RunRecord.encode(_results(n)),
                     **facts)  # type: ignore[arg-type]


def test_runs_are_written_whole_replaced_by_name_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    with RecordWriter(db) as writer:
        assert writer.write([_record("a", 4), _record("b", 2, node="n1", started=10.0, ended=12.5)]) == 6
        writer.write([_record("a", 3)])  # a retried task: replaces "a", never appends
        assert writer.names() == {"a", "b"}
    runs = {r.name: r for r in read_runs(db)}
    assert set(runs) == {"a", "b"} and all(r.many for r in runs.values())
    assert runs["a"].outcomes.status == ("failed", "ok", "ok") and runs["a"].outcomes.objective == (None, 2.0, 3.0)
    assert runs["b"].outcomes.node == ("n1", "n1") and runs["b"].wall_time_s == 2.5
    assert runs["b"].location == Path(f"{db}#b") and runs["b"].info["nodes"] == ["n1"]
    info, results = read_run(tmp_path, name="a")  # whole results, for a run of a file of many
    facts = [(r.id, r.status, r.objective, r.measurement.message, r.measurement.charged) for r in results]
    assert info["name"] == "a" and facts == [(r.id, r.status, r.objective, r.measurement.message, r.measurement.charged)
                                            for r in _results(3)]
    assert not list(tmp_path.glob("results.db-*"))  # closed back to a plain journal


def test_a_run_directory_and_a_file_of_many_read_the_same(tmp_path: Path) -> None:
    """The one reader gives a CLI run the same outcomes as the same run written by the batch writer."""
    store = RunStore.create(tmp_path / "run", {"problem": "prob", "searcher": "random", "seed": 0, "config": {},
                                               "direction": "minimize", "fingerprint": "f"})
    for r in _results(5):
        store.record(r)
    store.finish("evaluations")
    store.close()
    with RecordWriter(tmp_path / "many" / "results.db") as writer:
        writer.write([_record("r", 5)])
    (single,), (many,) = read_runs(tmp_path / "run"), read_runs(tmp_path / "many")
    assert not single.many and single.location == tmp_path / "run"
    assert single.outcomes == many.outcomes


def test_one_writer_per_file_and_the_second_is_named(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    first = RecordWriter(db)
    try:
        with pytest.raises(StoreError, match=f"being written by live process {os.getpid()} on "):
            RecordWriter(db)
    finally:
        first.close()
    RecordWriter(db).close()  # free again


def test_a_records_file_is_not_a_run_directory_and_a_run_is_not_a_records_file(tmp_path: Path) -> None:
    with RecordWriter(tmp_path / "many" / "results.db") as writer:
        writer.write([_record("a", 1), _record("b", 1)])
    with pytest.raises(StoreError, match="holds the records of many runs"):
        RunStore.open(tmp_path / "many")
    with pytest.raises(StoreError, match="holds the records of 2 runs"):
        read_run(tmp_path / "many")
    store = RunStore.create(tmp_path / "run", {"problem": "p", "searcher": "s", "seed": 0, "config": {}})
    store.record(_results(1)[0])
    store.close()
    with pytest.raises(StoreError, match="holds one run written by a run's own store"):
        RecordWriter(tmp_path / "run" / "results.db")


def test_a_file_that_is_not_records_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "results.db"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match="results.db is not a"):
        read_runs(bad)
    with pytest.raises(StoreError, match="results.db: is not a searchlab records file"):
        RecordWriter(bad)


WRITER = textwrap.dedent("""
    import sys
    from searchlab.core.records import Candidate, Config, Measurement, Result
    from searchlab.core.store import RecordWriter, RunRecord
    writer = RecordWriter(sys.argv[1])
    rows = RunRecord.encode(Result(Candidate(k, Config(x=k), Config(x=k)), Measurement.ok(1.0 + k)) for k in range(50))
    i = 0
    while True:  # batches of runs of i % 50 + 1 evaluations each, until killed: nearly all the time is in write()
        batch = [RunRecord(f"run{j}", "p", "s", 0, {"n": j % 50 + 1}, evaluations=rows[:j % 50 + 1])
                 for j in range(i, i + 40)]
        writer.write(batch)
        i += 40
        print(i, flush=True)
""")


def test_a_killed_writer_leaves_every_run_whole_or_absent(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        deadline = time.time() + 120
        while time.time() < deadline and int(proc.stdout.readline() or 0) < 400:
            pass
        time.sleep(0.013)  # then somewhere in a later write
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    runs = read_runs(db)
    assert len(runs) >= 400 and len(runs) % 40 == 0  # whole batches only
    assert all(len(r.outcomes.status) == r.info["config"]["n"] for r in runs)  # each run whole
    with RecordWriter(db) as writer:  # the kill released the lock: writable again
        writer.write([_record("after", 1)])
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
