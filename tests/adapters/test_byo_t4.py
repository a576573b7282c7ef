"""T4 interchange: read -> replay -> export round trip, Kernel Tuner caches, the export CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.knobs.kernel_tuner import load_kernel_tuner_cache
from searchlab.core.records import Config, FailureMode, Status
from searchlab.errors import ConfigError
from searchlab.export import main as export_main
from searchlab.interchange import validate
from searchlab.interchange.t4 import read_t4
from tests.byo_helpers import assert_refused, cli, rows, run


def _entry(bx: int, tile: int, invalidity: str, time_ms: Any, stamp: int = 0) -> dict[str, Any]:
    """One result as Kernel Tuner 1.5's get_t4_results writes it (times in ms, 'compilation' key)."""
    return {"timestamp": f"2026-01-01 00:00:{stamp:02d}+00:00", "configuration": {"block_size_x": bx, "tile": tile},
            "times": {"compilation": 100.0 + bx, "benchmark": 20.0, "framework": 1.0, "search_algorithm": 0.5,
                      "validation": 0.0, "runtimes": [time_ms, time_ms] if invalidity == "correct" else []},
            "invalidity": invalidity, "correctness": 1,
            "measurements": [{"name": "time", "value": time_ms, "unit": "ms"}, {"name": "GFLOP/s", "value": 10.0, "unit": ""}],
            "objectives": ["time"]}


def t4_fixture(path: Path) -> Path:
    results = [_entry(16, 1, "correct", 4.0, 1), _entry(16, 2, "correct", 3.5, 2), _entry(32, 1, "correct", 2.25, 3),
               _entry(32, 2, "compile", "CompilationFailedConfig", 4), _entry(64, 1, "correct", 1.5, 5),
               _entry(64, 2, "timeout", "timeout", 6), _entry(128, 1, "constraints", "InvalidConfig", 7),
               _entry(128, 2, "correct", 2.0, 8), _entry(16, 1, "correct", 9.0, 9)]  # a repeat: the first record counts
    doc = {"schema_version": "1.0.0", "results": results, "metadata": {"timeunit": "milliseconds"}}
    validate(doc, "T4", "fixture")
    path.write_text(json.dumps(doc))
    return path


def test_t4_reads_as_a_typed_table(tmp_path: Path) -> None:
    table = read_t4(t4_fixture(tmp_path / "in.json"))
    assert len(table.rows) == 7 and table.objective_name == "time"
    row = table.rows[Config(block_size_x=16, tile=1)]
    assert row.objective == 4.0 and row.charged == pytest.approx((116.0 + 20.0) / 1000) and row.samples == (0.004, 0.004)
    assert table.rows[Config(block_size_x=32, tile=2)].failure_mode is FailureMode.COMPILE
    assert table.rows[Config(block_size_x=64, tile=2)].status is Status.TIMEOUT
    assert table.space.check(Config(block_size_x=128, tile=1)) is not None  # recorded as a constraint violation
    best = table.best()
    assert best is not None and best[1].objective == 1.5


def test_t4_round_trips_read_replay_export(tmp_path: Path) -> None:
    source = t4_fixture(tmp_path / "in.json")
    summary = run(tmp_path / "run", "problem=t4", f"problem.path={source}", "searcher=exhaustive", "budget.evaluations=20")
    assert summary["best"]["objective"] == 1.5 and len(rows(tmp_path / "run")) == 7
    assert export_main(["t4", str(tmp_path / "run"), "-o", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    validate(out, "T4", "export")
    original = {(e["configuration"]["block_size_x"], e["configuration"]["tile"]): e
                for e in reversed(json.loads(source.read_text())["results"])}  # reversed: the first record wins
    assert len(out["results"]) == 7
    for e in out["results"]:
        src = original[(e["configuration"]["block_size_x"], e["configuration"]["tile"])]
        assert e["invalidity"] == src["invalidity"]
        if e["invalidity"] == "correct":
            assert e["measurements"][0] == {"name": "time", "value": src["measurements"][0]["value"], "unit": ""}
            assert e["times"]["compilation_time"] == pytest.approx(src["times"]["compilation"] / 1000)
    # and the exported file replays to the same table
    again = read_t4(tmp_path / "out.json")
    assert {c: m.objective for c, m in again.rows.items()} == {c: m.objective for c, m in read_t4(source).rows.items()}


def test_t4_converts_to_a_kernel_tuner_cache(tmp_path: Path) -> None:
    source = t4_fixture(tmp_path / "in.json")
    assert export_main(["kt-cache", str(source), "-o", str(tmp_path / "cache.json.gz")]) == 0
    cache = load_kernel_tuner_cache(tmp_path / "cache.json.gz")
    original = read_t4(source)
    for config, m in original.rows.items():
        got = cache.rows[config]
        if m.status is Status.OK:
            assert got.objective == m.objective and got.compile_s == pytest.approx(m.compile_s)
        else:
            assert got.status is Status.FAILED
    assert cache.rows[Config(block_size_x=32, tile=2)].failure_mode is FailureMode.COMPILE


@pytest.mark.parametrize("doc, message", [
    ({"schema_version": "1.0.0", "results": [{"configuration": {}}]}, "not a valid T4 document"),
    ({"schema_version": "1.0.0", "results": []}, "holds no results"),
    ({"schema_version": "1.0.0", "results": [_entry(1, 1, "correct", 1.0)], "metadata": {"timeunit": "fortnights"}},
     "timeunit"),
], ids=["schema", "empty", "unit"])
def test_bad_t4_files_are_one_line_errors(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=message) as info:
        read_t4(tmp_path / "bad.json")
    assert "\n" not in str(info.value)


def test_export_cli_writes_and_refuses_bad_sources(tmp_path: Path) -> None:
    source = t4_fixture(tmp_path / "in.json")
    good = cli(tmp_path, "searchlab.export", "t4", str(source), "-o", str(tmp_path / "copy.json"))
    assert good.returncode == 0, good.stderr
    validate(json.loads((tmp_path / "copy.json").read_text()), "T4", "copy")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    bad = cli(tmp_path, "searchlab.export", "kt-cache", str(tmp_path / "other.json"), "-o", str(tmp_path / "x.json"))
    assert_refused(bad, tmp_path, "SOURCE=", "not a run directory")
    assert not (tmp_path / "x.json").exists()
