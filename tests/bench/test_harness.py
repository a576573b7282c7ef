"""The benchmark harness writes its one schema, with provenance, from options declared as data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from bench import harness


@dataclass(frozen=True)
class _Options:
    n: int = 3
    label: str = "x"
    seeds: tuple[int, ...] = (0, 1)
    clock: Literal["wall", "cpu"] = "wall"
    fast: bool = False
    limit: float | None = None


def _run(ctx: harness.Context, options: _Options) -> dict[str, Any]:
    ctx.used_seeds(options.seeds)
    ctx.log("working")
    ctx.checkpoint({"squares": []})
    partial = json.loads(ctx.out.read_text())
    ctx.failed = options.label == "fail"
    return {"squares": [i * i for i in range(options.n)], "label": options.label, "clock": options.clock,
            "fast": options.fast, "limit": options.limit, "partial_seen": partial["partial"]}


def _report(ctx: harness.Context, results: Mapping[str, Any]) -> None:
    ctx.artefact(".md").write_text(f"{len(results['squares'])} squares\n")


@pytest.fixture
def selftest(monkeypatch: pytest.MonkeyPatch) -> harness.Benchmark:
    bench = harness.Benchmark("selftest_tmp", "a test benchmark", _Options, _run, _report)
    monkeypatch.setitem(harness._LOADED, bench.name, bench)
    monkeypatch.setitem(harness.REGISTRY, bench.name, "nowhere")
    return bench


def test_a_registered_benchmark_writes_the_schema_with_provenance(tmp_path: Path, selftest: harness.Benchmark) -> None:
    out = tmp_path / "r.json"
    written, status = harness.run(selftest.name, ["--n", "4", "--seeds", "5", "6", "--clock", "cpu", "--fast",
                                                  "--limit", "2.5", "--out", str(out), "--quiet"])
    assert written == out and status == 0
    doc = harness.read(out)
    assert doc["schema"] == harness.SCHEMA and doc["benchmark"] == "selftest_tmp" and doc["partial"] is False
    assert doc["options"] == {"n": 4, "label": "x", "seeds": [5, 6], "clock": "cpu", "fast": True, "limit": 2.5}
    assert doc["results"]["squares"] == [0, 1, 4, 9] and doc["results"]["partial_seen"] is True
    prov = doc["provenance"]
    assert prov["seeds"] == [5, 6] and prov["machine"]["cpus"] >= 1
    assert len(prov["commit"]) == 40 and "searchlab" in prov["versions"]
    assert prov["command"].startswith("python -m bench selftest_tmp")
    assert out.with_name("r.md").read_text() == "4 squares\n"  # its report ran after the run


def test_a_failed_check_is_written_and_exits_1(tmp_path: Path, selftest: harness.Benchmark) -> None:
    out = tmp_path / "f.json"
    _, status = harness.run(selftest.name, ["--label", "fail", "--out", str(out), "--quiet"])
    assert status == 1 and harness.read(out)["results"]["label"] == "fail"


def test_an_option_outside_its_choices_is_refused(tmp_path: Path, selftest: harness.Benchmark) -> None:
    with pytest.raises(SystemExit):
        harness.run(selftest.name, ["--clock", "sundial", "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_report_redraws_from_a_file_and_reads_a_historical_one(tmp_path: Path, selftest: harness.Benchmark) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"squares": [0, 1]}))  # written before the schema: the results alone
    harness.report(selftest.name, str(old))
    assert (tmp_path / "old.md").read_text() == "2 squares\n"


def test_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"results": 1}))
    with pytest.raises(ValueError, match="schema"):
        harness.read(path)


def test_unknown_benchmark_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.__main__ import main

    with pytest.raises(harness.UsageError, match="unknown benchmark 'nope'"):
        harness.load("nope")
    assert main(["nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_numpy_values_and_non_finite_floats_become_json(tmp_path: Path) -> None:
    import numpy as np

    path = tmp_path / "w.json"
    harness.write(path, {"a": np.float64(1.5), "b": np.arange(3), "c": float("inf"), "d": (1, Path("/x"))})
    assert json.loads(path.read_text()) == {"a": 1.5, "b": [0, 1, 2], "c": None, "d": [1, "/x"]}


def test_data_beside_a_result_goes_through_the_one_writer(tmp_path: Path) -> None:
    ctx = harness.Context("x", tmp_path / "x.json", quiet=True)
    assert ctx.load_data("_runs.json.gz") is None
    path = ctx.save_data("_runs.json.gz", [{"curve": [0.5, float("nan")]}])
    assert path == tmp_path / "x_runs.json.gz" and path.read_bytes()[:2] == b"\x1f\x8b"  # gzip
    assert ctx.load_data("_runs.json.gz") == [{"curve": [0.5, None]}]  # JSON has no NaN: null
