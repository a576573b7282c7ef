"""Run records and the measurement cache round-trip every field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from searchlab.core.cache import SQLiteCache
from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result, Status
from searchlab.core.store import RunStore, read_run
from searchlab.errors import StoreError

RUN = {"problem": "p", "searcher": "s", "seed": 1, "fingerprint": "f", "config": {"a": 1}, "versions": {"x": "1"}}


def _result(cid: int) -> Result:
    m = Measurement(Status.FAILED, failure_mode=FailureMode.RESOURCES, message="too big",
                    sensors={"local_mem": 70000.0}, compile_s=0.5, log=("Compared t <= 3: true.",), extra={"k": [1, 2]})
    return Result(Candidate(cid, Config(a=cid, b="x"), Config(word="1.2"), {"path": ["a", "b"]}), m, "w0", "dev",
                  10.0, 10.5, 11.0)


def test_records_round_trip(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, RUN)
    ok = Result(Candidate(0, Config(a=0), Config(a=0)), Measurement.ok(1.5, samples=(1.4, 1.5, 1.6),
                datasets={"d": 1.5}), cache_hit=True)
    store.record(ok)
    store.record(_result(1))
    store.finish("evaluations")
    store.close()
    info, results = read_run(tmp_path)
    assert info["problem"] == "p" and info["status"] == "finished" and info["config"] == {"a": 1}
    assert results[0].measurement.samples == (1.4, 1.5, 1.6) and results[0].cache_hit
    r = results[1]
    expected = _result(1).measurement
    assert r.candidate == _result(1).candidate and r.measurement == replace(expected, charged_s=expected.charged)
    assert (r.worker, r.device, r.t_start) == ("w0", "dev", 10.5)


def test_create_refuses_to_overwrite_and_ids_are_unique(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, RUN)
    store.record(_result(1))
    with pytest.raises(Exception, match="UNIQUE"):
        store.record(_result(1))
    with pytest.raises(StoreError, match="already exists"):
        RunStore.create(tmp_path, RUN)


def test_cache_is_keyed_by_fingerprint(tmp_path: Path) -> None:
    a, b = SQLiteCache(tmp_path / "c.db", "fp-a"), SQLiteCache(tmp_path / "c.db", "fp-b")
    a.put(Config(x=1), Measurement.ok(2.0))
    assert a.get(Config(x=1)) == Measurement.ok(2.0) and b.get(Config(x=1)) is None and len(a) == 1


def test_a_run_directory_whose_name_holds_uri_characters_is_read_back(tmp_path: Path) -> None:
    """A sweep job's directory holds Hydra's escaped override (``problem.path=..%2Fdata%2Fx.json``):
    SQLite decoded the ``%2F`` of a ``file:`` URI and the study of the sweep died with "unable to open
    database file" (bench/walk.py, step 4)."""
    from searchlab.study.execution.publish import dump_rows

    run_dir = tmp_path / "0_problem.path=..%2Fdata%2Fx.json,seed=1 ?#"
    run_dir.mkdir()
    store = RunStore.create(run_dir, RUN)
    store.record(_result(0))
    store.finish("evaluations")
    store.close()
    info, results = read_run(run_dir)
    assert info["status"] == "finished" and len(results) == 1
    assert dump_rows(run_dir).evaluations == 1
