"""``problem=command``: any executable, knobs rendered, typed failures, per-worker directories, Ray."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from searchlab.adapters.user import Command
from searchlab.adapters.user.command import read_command_spec
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config, FailureMode, Measurement, Status
from searchlab.errors import ConfigError
from tests.byo_helpers import EXAMPLES, cli, rows

GCC = EXAMPLES / "gcc_matmul" / "command.yaml"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

# A program in Python: reads its knobs from an argument, an environment variable and a rendered file.
PROGRAM = """
import json, os, sys, time
mode = sys.argv[1]
cfg = json.load(open("params.json"))
if mode == "fail": sys.exit(3)
if mode == "hang": time.sleep(60)
speed = float(os.environ["SPEED"]) * cfg["scale"]
print(f"score: {speed}")
json.dump({"result": {"score": speed * 2}}, open("out.json", "w"))
"""


def _spec(tmp_path: Path, **changes: Any) -> Path:
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "params.tmpl").write_text('{"scale": ${scale}}\n')
    spec: dict[str, Any] = {
        "knobs": {"mode": {"choices": ["ok", "fail", "hang"]}, "speed": [1, 2], "scale": [1, 10]},
        "run": [sys.executable, "${specdir}/prog.py", "${mode}"],
        "env": {"SPEED": "${speed}"},
        "template": {"source": "params.tmpl", "target": "params.json"},
        "objective": {"kind": "stdout", "pattern": r"score: ([0-9.]+)", "direction": "maximize", "name": "score"},
        "timeout_s": 5.0,
        "measure": {"min_runs": 2, "max_runs": 2},
        **changes,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _evaluate(problem: Command, *configs: dict[str, Any]) -> list[Measurement]:
    problem.setup(DeviceInfo())
    try:
        return [problem.evaluate(Config(c)) for c in configs]
    finally:
        problem.teardown()


def test_knobs_reach_arguments_environment_and_template_and_failures_are_typed(tmp_path: Path) -> None:
    problem = Command(spec=str(_spec(tmp_path)))
    assert problem.direction.value == "maximize" and problem.objective_name == "score"
    ok, fail, hang = _evaluate(problem, {"mode": "ok", "speed": 2, "scale": 10}, {"mode": "fail", "speed": 1, "scale": 1},
                               {"mode": "hang", "speed": 1, "scale": 1})
    assert ok.status is Status.OK and ok.objective == 20.0 and len(ok.samples) == 2
    assert (fail.status, fail.failure_mode) == (Status.FAILED, FailureMode.RUNTIME) and "exited 3" in fail.message
    assert hang.status is Status.TIMEOUT


def test_json_objective_build_failure_and_own_working_directory(tmp_path: Path) -> None:
    spec = _spec(tmp_path, objective={"kind": "json", "file": "out.json", "key": "result.score"},
                 build=["sh", "-c", "test ${scale} = 1"])  # "builds" only for scale=1
    problem = Command(spec=str(spec), workdir=str(tmp_path))
    ok, broken = _evaluate(problem, {"mode": "ok", "speed": 2, "scale": 1}, {"mode": "ok", "speed": 2, "scale": 10})
    assert ok.status is Status.OK and ok.objective == 4.0
    assert (broken.status, broken.failure_mode) == (Status.FAILED, FailureMode.COMPILE)
    workdirs = list(tmp_path.glob("searchlab-command-*"))
    assert len(workdirs) == 1 and (workdirs[0] / "params.json").read_text() == '{"scale": 10}\n'


@needs_gcc
def test_gcc_example_builds_and_times(tmp_path: Path) -> None:
    spec = read_command_spec(GCC)
    assert spec.space.size() == 48 and spec.objective.kind == "wall_time"
    (m,) = _evaluate(Command(spec=str(GCC)), {"opt": "-O2", "unroll": "", "block": 32})
    assert m.status is Status.OK and 0 < m.objective < 30 and m.compile_s > 0  # type: ignore[operator]


@pytest.mark.parametrize("changes, message", [
    ({"shell": "rm -rf /"}, "unknown keys"),
    ({"run": "make run"}, "list of strings"),
    ({"run": ["${nope}"]}, "unknown ['nope']"),
    ({"env": {"X": "${a.b}"}}, "not a valid template"),
    ({"objective": {"kind": "stdout", "pattern": "("}}, "not a regex"),
    ({"objective": {"kind": "perf"}}, "objective.kind"),
    ({"timeout_s": 0}, "must be > 0"),
    ({"knobs": {}}, "needs knobs"),
    ({"template": {"source": "absent.tmpl", "target": "x"}}, "no such file"),
    ({"constraints": ["mode.upper() == 'OK'"]}, "not allowed"),
    ({"default": "ok"}, "default='ok': must be a non-empty mapping of parameter -> value"),
    ({"default": {"mode": "ok", "speed": 1, "scal": 1}}, "default.scal: not a parameter of the space (did you mean 'scale'?)"),
    ({"default": {"mode": "ok", "speed": 1}}, "default: gives no value for ['scale']"),
    ({"default": {"mode": "ok", "speed": 3, "scale": 1}}, "default.speed=3: not one of its values [1, 2]"),
    ({"default": {"mode": "fail", "speed": 1, "scale": 1}, "constraints": ["mode != 'fail'"]},
     "violates a restriction (known constraint \"mode != 'fail'\" is false)"),
    ({"objective": {"noisy": "yes"}}, "objective.noisy='yes': must be true"),
], ids=["key", "shell-line", "placeholder", "template-syntax", "regex", "kind", "timeout", "knobs", "template-file",
        "constraint", "default-type", "default-name", "default-missing", "default-value", "default-restriction", "noisy"])
def test_bad_command_specs_are_one_line_errors(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        Command(spec=str(_spec(tmp_path, **changes)))
    assert "\n" not in str(info.value)


@needs_gcc
@pytest.mark.ray
@pytest.mark.slow
def test_gcc_example_runs_on_ray_and_records_a_timeout(tmp_path: Path) -> None:
    """The gcc example's build and program, plus a knob that delays the run past the timeout."""
    doc = yaml.safe_load(GCC.read_text())
    doc["knobs"] = {"opt": {"choices": ["-O2"]}, "unroll": {"choices": [""]}, "block": [16], "delay": [0, 30]}
    doc["constraints"] = []
    doc.pop("default")  # the example's default names knobs this spec changes
    doc["build"][-1] = str(GCC.parent / "matmul.c")
    doc["run"] = ["sh", "-c", "sleep $$DELAY; exec ${workdir}/matmul 128"]
    doc["env"] = {"DELAY": "${delay}"}
    doc["timeout_s"] = 5  # gcc and a 128 matmul take well under a second; the delayed run is killed at 5 s
    spec = tmp_path / "ray.yaml"
    spec.write_text(yaml.safe_dump(doc))
    out = cli(tmp_path, "searchlab", "problem=command", f"problem.spec={spec}", "searcher=exhaustive", "executor=ray",
              "executor.workers=1", "budget.evaluations=2", "confirm.k=0", "progress=off", "hydra.run.dir=run")
    assert out.returncode == 0, out.stderr[-2000:]
    recorded = rows(tmp_path / "run")
    by_delay = {(r["config"]["block"], r["config"]["delay"]): r["status"] for r in recorded}
    assert by_delay == {(16, 0): "ok", (16, 30): "timeout"}, recorded
