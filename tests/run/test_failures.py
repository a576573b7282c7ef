"""Failure reasons a person can read (issue 27, item 2): got/want messages and the summary's first reasons."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from searchlab.core.mismatch import not_close, wrong_output
from searchlab.core.records import Candidate, FailureMode, Measurement, Result
from searchlab.run.failures import first_failures
from tests.cli.test_cli import run_cli


def test_wrong_output_names_got_want_index_and_tolerance() -> None:
    got = np.array([0.5, 0.15652, 0.25], dtype=np.float64)
    want = np.array([0.5, 0.53461, 0.25], dtype=np.float32)
    assert not_close(got, want, 1e-4, 0.0) == (
        "wrong output: got 0.1565 at index 1, want 0.5346 (tolerance rtol 0.0001, atol 0); 1 of 3 values differ")
    assert not_close(got, got, 0.0, 0.0) is None
    assert not_close(np.array([np.nan]), np.array([np.nan]), 0.0, 0.0) is None  # NaN where NaN is wanted
    grid = np.zeros((3, 4))
    bad = np.zeros((3, 4), dtype=bool)
    bad[2, 1] = True
    assert "at index [2, 1]" in wrong_output(grid + 1, grid, bad, "exact")
    assert wrong_output(np.zeros(2), np.zeros(3), [True] * 3, "exact") == "wrong output: got shape (2,), want (3,)"


def _result(i: int, measurement: Measurement) -> Result:
    return Result(Candidate(i, {"x": i}, {"x": i}), measurement)


def test_first_failures_keeps_each_modes_first_message_and_count() -> None:
    results = [_result(0, Measurement.ok(1.0)),
               _result(1, Measurement.failed(FailureMode.WRONG_OUTPUT, "wrong output: got 1 at index 0,\nwant 2")),
               _result(2, Measurement.failed(FailureMode.COMPILE, "")),
               _result(3, Measurement.failed(FailureMode.WRONG_OUTPUT, "a later one"))]
    assert first_failures(results) == {
        "wrong_output": {"count": 2, "first": "wrong output: got 1 at index 0, want 2", "evaluation": 2,
                         "line": "wrong output: got 1 at index 0,"},
        "compile": {"count": 1, "first": "(no message)", "evaluation": 3, "line": "(no message)"}}


def test_a_compilers_error_line_is_shown_whole_however_long_the_log() -> None:
    """Issue 54: the terminal cut a build log's first 160 characters, before ``12:33: expected ';'``."""
    from searchlab.run.failures import failure_lines

    log = "build failed: clBuildProgram failed: BUILD_PROGRAM_FAILURE " * 4 + "\n\nerror: 12:33: expected ';'" + \
        " at end of declaration after a long explanation" * 3
    summary = {"failures": first_failures([_result(0, Measurement.failed(FailureMode.COMPILE, log))])}
    (line,) = [x for x in failure_lines(summary) if "compile x1" in x]
    assert line.endswith("error: 12:33: expected ';'" + " at end of declaration after a long explanation" * 3)


def test_cli_summary_and_summary_json_give_the_first_reason(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=30",
                  "progress=off", "plot=false")
    assert out.returncode == 0, out.stderr
    (db,) = tmp_path.glob("outputs/*/*/results.db")
    with sqlite3.connect(db) as conn:  # the records, read independently of the summary code
        rows = conn.execute("SELECT status, failure_mode, message FROM evaluations ORDER BY id").fetchall()
    failed = [(n, mode, message) for n, (status, mode, message) in enumerate(rows, 1) if status != "ok"]
    assert failed, "seed 0 of synthetic_knobs has failures in 30 evaluations"
    summary = json.loads((db.parent / "summary.json").read_text())
    for mode in {m for _, m, _ in failed}:
        n, _, message = next(f for f in failed if f[1] == mode)
        count = sum(1 for f in failed if f[1] == mode)
        assert {k: v for k, v in summary["failures"][mode].items() if k != "line"} == {
            "count": count, "first": message, "evaluation": n}
        assert f"    {mode} x{count}, first at evaluation {n}: {message[:100]}" in out.stdout
    assert "  failures (first message of each mode):" in out.stdout
