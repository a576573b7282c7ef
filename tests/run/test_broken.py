"""A program that does not build stops at once, with the compiler's first error line whole, exit 3
(issue 54, item 2; searchlab.run.broken). Before, a kernel with a syntax error ran the whole budget (every
evaluation a failed build), exited 0, and the terminal cut the message before ``expected ';'``."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from searchlab.core.buildlog import build_message, first_error_line
from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result
from searchlab.run.broken import SAME_FAILURES, SameFailures
from searchlab.run.loop import Budget
from tests.byo_helpers import EXAMPLES, cli, has_opencl

POCL = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\n"
        "Build on <pyopencl.Device 'pthread-skylake-avx512-Intel(R) Xeon(R) Processor' on 'Portable Computing "
        "Language' at 0x55a15ca3dc90>:\n\nerror: /root/.cache/pocl/kcache/tempfile_Z6DxeA.cl:12:33: expected ';' at "
        "end of declaration\nDevice pthread failed to build the program\n")


def test_the_first_error_line_is_found_whole_and_without_the_builds_temporary_file() -> None:
    assert first_error_line(POCL) == "error: 12:33: expected ';' at end of declaration"
    other = POCL.replace("tempfile_Z6DxeA", "tempfile_Q81bnm")  # every build names another file
    assert first_error_line(other) == first_error_line(POCL)
    message = build_message(POCL)
    assert message.splitlines()[0] == "build failed: error: 12:33: expected ';' at end of declaration"
    gcc = "/x/matmul.c: In function 'main':\n/x/matmul.c:12:33: error: expected ';' before 'y'\n    1 | x\n"
    assert first_error_line(gcc) == "/x/matmul.c:12:33: error: expected ';' before 'y'"
    assert first_error_line("no errors here\nsecond") == "no errors here"


def _failed(i: int, message: str, mode: FailureMode = FailureMode.COMPILE) -> Result:
    c = Config({"x": i})
    return Result(Candidate(i, c, c), Measurement.failed(mode, message))


def test_the_same_failure_k_times_before_anything_worked_trips() -> None:
    same = SameFailures(3)
    for i in range(2):
        same.observe(_failed(i, build_message(POCL)))
    assert not same.tripped
    same.observe(_failed(2, build_message(POCL.replace("Z6DxeA", "other1"))))  # the same error, another temp file
    assert same.tripped
    other = SameFailures(3)  # a different error in between starts the count again
    for i, text in enumerate(["a: error: x", "a: error: y", "a: error: x", "a: error: x"]):
        other.observe(_failed(i, text))
    assert not other.tripped
    worked = SameFailures(2)  # once one configuration worked, identical failures are the configurations'
    worked.observe(Result(Candidate(9, Config({"x": 9}), Config({"x": 9})), Measurement.ok(1.0)))
    for i in range(5):
        worked.observe(_failed(i, "error: too large work-group", FailureMode.LAUNCH))
    assert not worked.tripped
    resources = SameFailures(2)  # a configuration's resources are not the program's failure
    for i in range(5):
        resources.observe(_failed(i, "local_mem 70000 > 65536", FailureMode.RESOURCES))
    assert not resources.tripped
    assert Budget().max_same_failures == SAME_FAILURES == 10
    assert not SameFailures(None).tripped


# -- end to end: a user's kernel with a syntax error ------------------------------------------------
def _broken_kernel(tmp_path: Path, default: bool) -> Path:
    """examples/reduction's T1 spec with a ';' missing on line 8 of its kernel."""
    source = (EXAMPLES / "reduction" / "row_sum.cl").read_text().splitlines()
    assert source[7].strip() == "float acc = 0.0f;"
    source[7] = source[7].replace(";", "")
    (tmp_path / "row_sum.cl").write_text("\n".join(source) + "\n")
    doc = yaml.safe_load((EXAMPLES / "reduction" / "row_sum.yaml").read_text())
    if not default:
        del doc["Searchlab"]["Default"]
    spec = tmp_path / "row_sum.yaml"
    spec.write_text(yaml.safe_dump(doc))
    return spec


def _evaluations(root: Path) -> list[tuple[str, str]]:
    dbs = list(root.glob("**/results.db"))
    if not dbs:
        return []
    with closing(sqlite3.connect(dbs[0])) as conn:
        return [(s, m) for s, m in conn.execute("SELECT status, failure_mode FROM evaluations ORDER BY id")]


ERROR = re.compile(r"error: 8:\d+: expected ';' at end of declaration$")


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_a_kernel_that_does_not_build_with_its_default_stops_at_once(tmp_path: Path) -> None:
    spec = _broken_kernel(tmp_path, default=True)
    out = cli(tmp_path, "searchlab", "problem=opencl_kernel", f"problem.spec={spec}", "searcher=random",
              "budget.evaluations=40", "executor=serial", "progress=off")
    assert out.returncode == 3, out.stderr[-2000:]
    lines = [x for x in out.stderr.splitlines() if x.startswith("searchlab: error: ")]
    assert len(lines) == 1 and "does not build with its default configuration (UNROLL=1, block_size_x=256)" in lines[0]
    assert ERROR.search(lines[0]), lines[0]  # the compiler's line, whole, at the end of the line
    assert "Traceback" not in out.stderr and _evaluations(tmp_path) == []  # nothing measured, nothing half-made


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_a_kernel_that_fails_the_same_way_k_times_stops_there(tmp_path: Path) -> None:
    spec = _broken_kernel(tmp_path, default=False)  # no default to build first: the loop's rule stops it
    out = cli(tmp_path, "searchlab", "problem=opencl_kernel", f"problem.spec={spec}", "searcher=random",
              "budget.evaluations=40", "budget.max_same_failures=3", "executor=serial", "progress=off")
    assert out.returncode == 3, out.stderr[-2000:]
    assert _evaluations(tmp_path) == [("failed", "compile")] * 3  # stopped early: 3 of 40
    line = next(x for x in out.stderr.splitlines() if x.startswith("searchlab: error: "))
    assert "failed the same way" in line and ERROR.search(line.split("; records: ")[0]), line
    summary = json.loads(next(tmp_path.glob("**/summary.json")).read_text())
    assert summary["stop_reason"] == "same_failures"
    assert ERROR.search(summary["failures"]["compile"]["line"])
    shown = next(x for x in out.stdout.splitlines() if x.strip().startswith("compile x3, first at evaluation 1: "))
    assert ERROR.search(shown), shown  # the summary's failure line: the compiler's line, whole, and nothing cut


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_a_command_whose_build_fails_with_its_default_stops_at_once(tmp_path: Path) -> None:
    (tmp_path / "p.c").write_text("int main(void) {\n  int x = 1\n  return x;\n}\n")
    spec = {"knobs": {"opt": ["-O1", "-O2"]}, "build": ["gcc", "${opt}", "-o", "${workdir}/p", "${specdir}/p.c"],
            "run": ["${workdir}/p"], "default": {"opt": "-O2"}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    out = cli(tmp_path, "searchlab", "problem=command", f"problem.spec={tmp_path / 'spec.yaml'}", "searcher=random",
              "executor=serial", "progress=off")
    assert out.returncode == 3, out.stderr[-2000:]
    line = next(x for x in out.stderr.splitlines() if x.startswith("searchlab: error: "))
    assert re.search(rf"{re.escape(str(tmp_path / 'p.c'))}:3:3: error: expected .,. or .;. before .return.$", line), line
    assert _evaluations(tmp_path) == []
