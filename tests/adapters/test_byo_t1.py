"""T1 specs read as data: schema validation, safe expressions, typed errors (no device needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from searchlab.adapters.user._formulas import cast_values
from searchlab.adapters.user._t1 import read_t1
from searchlab.core.expr import MAX_ELEMENTS, ArrayExpression
from searchlab.errors import ConfigError
from searchlab.interchange import validate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STENCIL = EXAMPLES / "stencil2d" / "stencil2d.json"
REDUCTION = EXAMPLES / "reduction" / "row_sum.yaml"


def _doc(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "spec.json") -> Path:
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


@pytest.fixture
def stencil_doc(tmp_path: Path) -> dict[str, Any]:
    doc = _doc(STENCIL)
    doc["KernelSpecification"]["KernelFile"] = str(STENCIL.parent / "stencil2d.cl")
    doc["Searchlab"]["ReferenceKernel"]["KernelFile"] = str(STENCIL.parent / "stencil2d_naive.cl")
    return doc


@pytest.mark.parametrize("path", [STENCIL, REDUCTION], ids=["json", "yaml"])
def test_examples_are_valid_t1_and_read(path: Path) -> None:
    validate(_doc(path), "T1", str(path))
    spec = read_t1(path)
    assert spec.kernel_file.is_file() and spec.params and spec.checks
    assert all(c.fill in ("Kernel", "Generator") for c in spec.checks)


def test_parameter_values_are_read_by_the_one_t1_reader_and_cast() -> None:
    from searchlab.interchange.t1 import parameter_values

    def parse(text: str, kind: str) -> tuple[object, ...]:
        return cast_values(parameter_values(text, "p"), kind, "p", text)

    assert parse("[1, 2, 2**3]", "int") == (1, 2, 8)
    assert parse("range(1, 9, 3)", "int") == (1, 4, 7)
    assert parse("list(range(3))", "int") == (0, 1, 2)
    assert parse("[x for x in range(3)]", "int") == (0, 1, 2)  # as Kernel Tuner reads it, without eval
    assert parse("['a', 'b']", "string") == ("a", "b")
    for text in ("__import__('os').system('true')", "open('f')", "[1, (lambda: 2)()]"):
        with pytest.raises(ConfigError, match="Values"):
            parse(text, "int")
    with pytest.raises(ConfigError, match="uint"):
        parse("[-1, 2]", "uint")


def test_array_expressions_are_safe_and_bounded() -> None:
    u = np.arange(12.0).reshape(3, 4)
    assert np.allclose(ArrayExpression("sum(u, axis=1)")({"u": u}), u.sum(axis=1))
    assert np.allclose(ArrayExpression("roll(u, 1, 0) - u[:, ::-1]")({"u": u}), np.roll(u, 1, 0) - u[:, ::-1])
    for text in ("u.__class__", "(lambda: 1)()", "[v for v in u]", "__import__('os')", "eval('1')", "sum(u, out=u)"):
        with pytest.raises(ConfigError, match="not allowed"):
            ArrayExpression(text)
    big = np.zeros(1 << 14)
    with pytest.raises(ConfigError, match="exceeds"):  # refused before the 2^28-element outer product is made
        ArrayExpression("x[:, None] * x[None, :]")({"x": big})
    assert MAX_ELEMENTS < (1 << 28)
    with pytest.raises(ConfigError, match="exponent"):
        ArrayExpression("9 ** 9 ** 9")({})


def test_formulas_read_problem_size_and_parameter_lists(stencil_doc: dict[str, Any], tmp_path: Path) -> None:
    stencil_doc["KernelSpecification"]["Arguments"][0]["Size"] = "ProblemSize[0] * ProblemSize[1] + max(tile_size_y) - 4"
    stencil_doc["Searchlab"]["Arguments"]["u"]["Shape"] = ["ProblemSize[0] * ProblemSize[1]"]
    spec = read_t1(_write(tmp_path, stencil_doc))
    from searchlab.adapters.user._data import vector_size

    assert vector_size(spec.arguments[0], spec, dict(spec.params)) == 512 * 256


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["KernelSpecification"].pop("KernelFile"), "not a valid T1 document at KernelSpecification"),
    (lambda d: d["ConfigurationSpace"]["TuningParameters"][0].update(Values=[1, 2]), "TuningParameters/0/Values"),
    (lambda d: d["KernelSpecification"].update(KernelFile="missing.cl"), "no such file"),
    (lambda d: d["KernelSpecification"].update(Language="CUDA"), "only OpenCL"),
    (lambda d: d["KernelSpecification"]["Arguments"][0].update(FillType="Script"), "Script runs code"),
    (lambda d: d["KernelSpecification"]["Arguments"][0].update(Type="float4"), "not supported"),
    (lambda d: d["Searchlab"].update(Eval="1"), "unknown keys"),
    (lambda d: d["Searchlab"]["ReferenceKernel"].update(Outputs=["u"]), "not a Vector argument with AccessType"),
    (lambda d: d["ConfigurationSpace"]["Conditions"][0].update(Expression="__import__('os')"), "not allowed"),
    (lambda d: d["KernelSpecification"]["GlobalSize"].update(X="block_size_q * 2"), "unknown names"),
    (lambda d: d["KernelSpecification"].update(CompilerOptions=["-cl-fast-relaxed-math"]), "only -DNAME"),
    (lambda d: d["Searchlab"]["Arguments"]["u"].update(Shape=["3"]), "not Size"),
    (lambda d: d["Searchlab"]["Arguments"].update(v={"Shape": ["2"]}), "are not arguments"),
    (lambda d: d["KernelSpecification"].update(ReferenceArguments=[
        {"Name": "r", "TargetName": "out", "FillType": "Generator", "DataSource": "roll(w, 1)"}]), "unknown names ['w']"),
    (lambda d: d["KernelSpecification"].update(ReferenceArguments=[
        {"Name": "r", "TargetName": "out", "FillType": "Generator", "DataSource": "u.T"}]), "not allowed"),
    (lambda d: d["KernelSpecification"].update(ReferenceArguments=[
        {"Name": "r", "TargetName": "out", "FillType": "Generator", "DataSource": "sum(u)"}]), "gives 1 values"),
    (lambda d: d["Searchlab"].update(Defines=["NX"]), "Searchlab.Defines: must be a mapping"),
    (lambda d: d["Searchlab"]["ReferenceKernel"].update(ValidationMethod="Eyeball"), "ValidationMethod"),
    (lambda d: d["Searchlab"].update(Default=[16, 16, 1]), "Searchlab.Default: must be a mapping"),
    (lambda d: d["Searchlab"]["Default"].update(block_size_z=4), "Searchlab.Default.block_size_z: not a parameter"),
    (lambda d: d["Searchlab"]["Default"].pop("tile_size_y"), "gives no value for ['tile_size_y']"),
    (lambda d: d["Searchlab"]["Default"].update(block_size_x=3), "Searchlab.Default.block_size_x=3: not one of its values"),
    (lambda d: d["Searchlab"]["Default"].update(block_size_x=1, block_size_y=1),
     "violates a restriction (known constraint '8 <= block_size_x * block_size_y <= 256' is false)"),
], ids=["schema", "values-type", "kernel-file", "language", "script", "vector-type", "extension-key", "reference-target",
        "condition", "size-name", "compiler-option", "shape", "extension-argument", "reference-name", "reference-attribute",
        "reference-shape", "extension-type", "reference-method",
        "default-type", "default-name", "default-missing", "default-value", "default-restriction"])
def test_bad_specs_are_one_line_config_errors(stencil_doc: dict[str, Any], tmp_path: Path, edit: Any, message: str) -> None:
    from searchlab.adapters.user import OpenCLKernel

    edit(stencil_doc)
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        OpenCLKernel(spec=str(_write(tmp_path, stencil_doc)))
    assert "\n" not in str(info.value)


def test_non_mapping_and_unreadable_files_are_refused(tmp_path: Path) -> None:
    from searchlab.adapters.user import OpenCLKernel

    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "broken.json").write_text("{ nope")
    for name, message in (("list.yaml", "mapping"), ("broken.json", "not readable"), ("absent.json", "no such file")):
        with pytest.raises(ConfigError, match=message):
            OpenCLKernel(spec=str(tmp_path / name))


def _with_measurement(tmp_path: Path, measurement: dict[str, Any]) -> Path:
    doc = _doc(REDUCTION)
    doc["KernelSpecification"]["KernelFile"] = str(REDUCTION.parent / "row_sum.cl")
    doc["Searchlab"]["Measurement"] = measurement
    return _write(tmp_path, doc)


SPEC_PROTOCOL = {"min_runs": 7, "max_runs": 13, "min_time_s": 0.0, "target_rel_ci": 0.0, "warmup": 2}


def test_the_specs_measurement_block_is_the_protocol_under_overrides(tmp_path: Path) -> None:
    """Precedence: protocol defaults < the spec's Searchlab.Measurement < problem.measure.* (issue 22,
    item 5: the parent constructor rebuilt the protocol from the overrides alone, dropping the spec's)."""
    from searchlab.adapters.user import OpenCLKernel
    from searchlab.core.measure import MeasurementProtocol

    spec = _with_measurement(tmp_path, SPEC_PROTOCOL)
    assert OpenCLKernel(spec=str(spec)).protocol == MeasurementProtocol(**SPEC_PROTOCOL)  # type: ignore[arg-type]
    mixed = OpenCLKernel(spec=str(spec), measure={"max_runs": 9, "min_time_s": 100.0})
    assert mixed.protocol == MeasurementProtocol(7, 9, 100.0, 0.0, 2)
    effective = mixed.fingerprint_params()["measure"]  # the fingerprint: the protocol in force, not the option
    assert effective["max_runs"] == 9 and effective["min_runs"] == 7
    assert OpenCLKernel(spec=str(_with_measurement(tmp_path, {}))).protocol == MeasurementProtocol()


@pytest.mark.opencl
def test_the_specs_measurement_block_decides_the_runs_on_the_device(tmp_path: Path) -> None:
    from searchlab.adapters.user import OpenCLKernel
    from searchlab.core.problem import DeviceInfo
    from searchlab.core.records import Config, Status
    from tests.byo_helpers import has_opencl

    if not has_opencl():
        pytest.skip("no OpenCL platform")
    spec = str(_with_measurement(tmp_path, SPEC_PROTOCOL))
    runs = {}
    for name, override in (("spec", {}), ("capped", {"min_runs": 2, "max_runs": 11, "min_time_s": 100.0})):
        problem = OpenCLKernel(spec=spec, measure=override)
        problem.setup(DeviceInfo())
        try:
            m = problem.evaluate(Config(block_size_x=64, UNROLL=2))
        finally:
            problem.teardown()
        assert m.status is Status.OK, m.message
        runs[name] = len(m.samples)
    assert runs == {"spec": 7, "capped": 11}  # fixed 7 from the spec; the override's cap of 11 (100 s unreachable)
