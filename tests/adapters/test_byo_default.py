"""Your kernel against your default (issue 46, item 3): a spec's default is confirmed against, end to end.

A command spec's and a T1 spec's default reach the confirm phase and the verdict; command problems are
noisy (their wall time is), so the phase runs without ``confirm.force``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from searchlab.adapters.user import Command
from tests.byo_helpers import EXAMPLES, has_opencl, run

# tiny caps: 2 rounds before the first look, at most 10 (a constant ratio decides after 9 at alpha 0.05 / 2)
CONFIRM = ("confirm.k=2", "confirm.rounds=2", "confirm.max_rounds=10", "confirm.max_time_s=30")


def _echo_spec(tmp_path: Path, **changes: Any) -> Path:
    """A program whose objective is the knob it prints: exact values, so the decision is certain."""
    spec = {"knobs": {"n": [1, 2, 3]}, "run": ["echo", "${n}"],
            "objective": {"kind": "stdout", "pattern": r"(\d+)"}, "measure": {"min_runs": 1, "max_runs": 1, "warmup": 0},
            "default": {"n": 3}, **changes}
    path = tmp_path / "echo.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_command_problems_are_noisy_unless_the_spec_says_exact(tmp_path: Path) -> None:
    assert Command(spec=str(EXAMPLES / "gcc_matmul" / "command.yaml")).noisy  # wall time
    assert Command(spec=str(_echo_spec(tmp_path))).noisy  # a printed number: noisy unless said otherwise
    exact = _echo_spec(tmp_path, objective={"kind": "stdout", "pattern": r"(\d+)", "noisy": False})
    assert not Command(spec=str(exact)).noisy


def test_the_gcc_example_names_its_default() -> None:
    problem = Command(spec=str(EXAMPLES / "gcc_matmul" / "command.yaml"))
    assert problem.default_config() == {"opt": "-O2", "unroll": "", "block": 32}


def test_a_command_run_ends_with_a_confirmed_verdict_against_the_specs_default(tmp_path: Path) -> None:
    summary = run(tmp_path / "run", "problem=command", f"problem.spec={_echo_spec(tmp_path)}", "searcher=exhaustive",
                  "budget.evaluations=3", *CONFIRM)
    confirm = summary["confirm"]
    assert confirm is not None and confirm["default"]["config"] == {"n": 3}  # measured beside the candidates
    assert confirm["decision"] == "faster" and confirm["best"]["config"] == {"n": 1}, confirm
    assert confirm["versus_default"]["speedup"] == pytest.approx(3.0)
    assert summary["verdict"].startswith("recommended: ") and "fastest of the 2 re-measured" in summary[
        "verdict"], summary["verdict"]
    assert "the default" in summary["verdict"] and "no default configuration" not in summary["verdict"]


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_an_opencl_kernel_run_ends_with_a_verdict_against_the_specs_default(tmp_path: Path) -> None:
    spec = EXAMPLES / "reduction" / "row_sum.yaml"
    summary = run(tmp_path / "run", "problem=opencl_kernel", f"problem.spec={spec}", "searcher=random",
                  "budget.evaluations=3", "problem.measure.min_runs=2", "problem.measure.max_runs=3", "confirm.k=1",
                  "confirm.rounds=2", "confirm.max_rounds=2", "confirm.max_time_s=20")
    confirm = summary["confirm"]
    assert confirm is not None and confirm["default"]["config"] == {"block_size_x": 256, "UNROLL": 1}
    assert confirm["versus_default"] is not None and confirm["versus_default"]["pairs"] == 2, confirm
    assert "the default" in summary["verdict"] and "no default configuration" not in summary["verdict"]
