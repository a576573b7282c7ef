"""The one T1 reader: Values as Kernel Tuner's ``eval`` reads them, through a safe and bounded grammar (issue 51)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchlab.core.expr import evaluate_values
from searchlab.errors import ConfigError
from searchlab.interchange.t1 import read_t1_file
from tests.reproduce.conftest import HUB

ACCEPTED = ["[32 * i for i in range(1, 32)]", "[1] + [2 * i for i in range(1, 11)]", "[2**i for i in range(0, 6)]",
            "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", "[i for i in range(1, 11)]", "[1.0, 2.0, 3.0]",
            "range(5)", "list(range(3))", "[i * j for i in range(3) for j in range(1, 3) if i != j]", "['a', 'b']",
            "[True, False]", "[x for x in range(40) if x % 3 == 0 and x > 5]"]
REFUSED = [("__import__('os').system('true')", "Call"), ("[x for x in range(3)].__class__", "Attribute"),
           ("open('f')", "Call"), ("[0] * 10**6", "more than 100000"), ("range(10**9)", "more than 100000"),
           ("[i for i in range(100000) for j in range(100000)]", "more than 100000"),
           ("[i for i in range(10**5) for j in range(10**5) if False]", "steps"),
           ("[[i for i in range(3)] for j in range(3)]", "ListComp"), ("9**9**9**9", "bits"), ("y", "unknown names"),
           ("5", "not a list"), ("[]", "empty"), ("[i for i in range(3)][0]", "Subscript"), ("{1: 2}", "Dict"),
           ("(lambda: [1])()", "Call")]


@pytest.mark.parametrize("text", ACCEPTED)
def test_values_are_what_pythons_eval_gives(text: str) -> None:
    expected = eval(text)
    assert evaluate_values(text) == tuple(expected)
    assert [type(v) for v in evaluate_values(text)] == [type(v) for v in expected]


@pytest.mark.parametrize(("text", "needle"), REFUSED)
def test_anything_else_is_one_line(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        evaluate_values(text)


def test_the_hubs_t1_files_read_as_kernel_tuner_reads_them() -> None:
    files = sorted((HUB / "kernels").glob("*_milo.json")) + sorted((HUB / "hyperparametertuning" / "algorithms").glob(
        "metatuning_*.json"))
    if not files:
        pytest.skip(f"no benchmark_hub at {HUB}")
    for path in files:
        t1 = read_t1_file(path)
        raw = json.loads(path.read_text())
        expected = {p["Name"]: list(eval(p["Values"])) for p in raw["ConfigurationSpace"]["TuningParameters"]}
        assert t1.tune_params() == expected, path.name


def test_a_condition_that_is_not_an_expression_over_the_parameters_is_refused(tmp_path: Path) -> None:
    doc = json.loads((HUB / "kernels" / "convolution_milo.json").read_text()) if HUB.is_dir() else pytest.skip("no hub")
    doc["ConfigurationSpace"]["Conditions"] = [{"Expression": "__import__('os') or True", "Parameters": []}]
    (tmp_path / "t1.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="Conditions"):
        read_t1_file(tmp_path / "t1.json")
    doc["ConfigurationSpace"]["Conditions"] = [{"Expression": "nope > 1", "Parameters": []}]
    (tmp_path / "t1.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="nope"):
        read_t1_file(tmp_path / "t1.json")
