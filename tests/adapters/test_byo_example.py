"""The worked example of docs/byo.md (examples/vector_add/), end to end through the CLI on the real OpenCL
device (pocl here), and the claims the walkthrough makes (issue 27, item 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from searchlab.adapters.user import OpenCLKernel
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config, FailureMode, Status
from searchlab.errors import ConfigError
from searchlab.interchange import validate
from tests.byo_helpers import EXAMPLES, cli, has_opencl

SPEC = EXAMPLES / "vector_add" / "vector_add.yaml"
DOC = Path(__file__).parents[2] / "docs" / "byo.md"
opencl = pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")


def _doc_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def test_the_walkthrough_shows_the_example_files() -> None:
    spec = yaml.safe_load(SPEC.read_text())
    assert any(yaml.safe_load(block) == spec for block in _doc_blocks("yaml"))  # the spec, comments aside
    kernel = (EXAMPLES / "vector_add" / "vector_add.cl").read_text()
    assert any(block.strip() in kernel for block in _doc_blocks("c"))
    assert len(kernel.splitlines()) + len(SPEC.read_text().splitlines()) <= 25  # a 20-line example
    validate(spec, "T1", str(SPEC))  # no General, no FormatVersion: the schema does not require them


@opencl
def test_vector_add_is_tuned_end_to_end_through_the_cli(tmp_path: Path) -> None:
    out = cli(tmp_path, "searchlab", "problem=opencl_kernel", f"problem.spec={SPEC}", "searcher=random",
              "budget.evaluations=4", "executor=serial", "progress=off", "seed=1", "problem.measure.min_runs=2",
              "problem.measure.max_runs=3",
              "confirm.k=2", "confirm.rounds=2", "plot=false")
    assert out.returncode == 0, out.stderr[-3000:]
    (summary_path,) = tmp_path.glob("outputs/*/*/summary.json")
    summary = json.loads(summary_path.read_text())
    assert summary["evaluations"] == 4 and summary["status_counts"] == {"ok": 4}, summary["failures"]
    best = summary["best"]["config"]
    assert best["block_size_x"] in (16, 32, 64, 128, 256) and best["ITEMS"] in (1, 2, 4, 8)
    assert f"records: {summary_path.parent / 'results.db'}" in out.stdout


def _spec(tmp_path: Path, **kernel: Any) -> Path:
    doc = yaml.safe_load(SPEC.read_text())
    doc["KernelSpecification"].update(KernelFile=str(SPEC.parent / "vector_add.cl"), **kernel)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@opencl
def test_a_global_size_that_local_size_does_not_divide_fails_at_launch(tmp_path: Path) -> None:
    """docs/byo.md: OpenCL 1.2 needs global % local == 0; such a configuration is FAILED(launch), not refused."""
    problem = OpenCLKernel(spec=str(_spec(tmp_path, ProblemSize=1024 * 3)))
    problem.setup(DeviceInfo())
    try:
        divides = problem.evaluate(Config(block_size_x=16, ITEMS=1))  # 3072 = 192 x 16
        does_not = problem.evaluate(Config(block_size_x=256, ITEMS=8))  # 384 work-items, groups of 256
    finally:
        problem.teardown()
    assert divides.status is Status.OK, divides.message
    assert (does_not.status, does_not.failure_mode) == (Status.FAILED, FailureMode.LAUNCH), does_not.message


@pytest.mark.parametrize("kind", ["float4", "bool", "custom"])
def test_only_the_documented_scalar_types_are_accepted(tmp_path: Path, kind: str) -> None:
    doc = yaml.safe_load(SPEC.read_text())
    doc["KernelSpecification"]["KernelFile"] = str(SPEC.parent / "vector_add.cl")
    doc["KernelSpecification"]["Arguments"][0]["Type"] = kind
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc))
    documented = "int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, float, double"
    with pytest.raises(ConfigError, match=re.escape(kind)) as refused:
        OpenCLKernel(spec=str(path))
    assert set(re.findall(r"'(\w+)'", str(refused.value).split("supported:")[1])) == set(documented.split(", "))
