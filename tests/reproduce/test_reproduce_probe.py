"""The hostile probe of issue 51, one row per case: one line naming the value and the rule, exit 2, no directory.

Each row builds an experiment (or an ``--out``) that broke the old ``searchlab reproduce`` (a traceback, files
outside ``--out``, a half-made directory) and checks the one-line refusal. The cases that must *work* (names that
look like paths) are in tests/reproduce/test_reproduce_names.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from searchlab.reproduce.cli import main
from tests.reproduce.conftest import HUB, ROOT, raw_experiment, write

OURS = str(ROOT / "searchlab" / "integrations" / "kernel_tuner.py")
T4 = HUB / "cachefiles" / "convolution_milo" / "MI250X_T4.json"


def _strategy(**extra: Any) -> dict[str, Any]:
    return {"name": "s", "search_method": "random_sample", "display_name": "S", **extra}


def _searchlab(params: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "auto", "search_method": "SearchlabOptAlg", "display_name": "auto",
            "custom_search_method_path": OURS, "search_method_hyperparameters": params}


def _with(tmp: Path, strategies: list[dict[str, Any]] | None = None, **defaults: Any) -> Path:
    raw = raw_experiment(tmp, strategies=strategies or [_strategy()])
    raw["experimental_groups_defaults"].update(defaults)
    return write(tmp, raw)


def _t4(tmp: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """The MI250X space with one change, as the experiment's space file."""
    doc = json.loads(T4.read_text())
    change(doc)
    (tmp / "space").mkdir(exist_ok=True)
    (tmp / "space" / "MI250X_T4.json").write_text(json.dumps(doc))
    return _with(tmp, pattern_for_full_search_space_filenames={"regex": str(tmp / "space" / "${gpus}_T4.json")})


def _row0(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        row = next(r for r in doc["results"] if r["invalidity"] == "correct")
        if key == "objective":
            row["measurements"] = [{**m, "value": value} if m["name"] == "time" else m for m in row["measurements"]]
        elif key == "time":
            row["times"]["compilation"] = value
        elif key == "drop":
            del row[value]
        elif key == "knob":
            row["configuration"]["block_size_x"] = value
        else:
            del row["configuration"]["block_size_x"]
    return change


def _all_zero(doc: dict[str, Any]) -> None:
    for row in doc["results"]:
        row["measurements"] = [{**m, "value": 0.0} if m["name"] == "time" else m for m in row["measurements"]]


def _file(tmp: Path, name: str, data: bytes) -> Path:
    (tmp / name).write_bytes(data)
    return tmp / name


def _t1(tmp: Path, values: str) -> Path:
    doc = json.loads((HUB / "kernels" / "convolution_milo.json").read_text())
    doc["ConfigurationSpace"]["TuningParameters"][0]["Values"] = values
    doc["KernelSpecification"]["KernelFile"] = str(HUB / "kernels" / "convolution_milo.cu")
    (tmp / "k").mkdir(exist_ok=True)
    (tmp / "k" / "convolution_milo.json").write_text(json.dumps(doc))
    raw = raw_experiment(tmp, strategies=[_strategy()])
    raw["experimental_groups_defaults"]["applications"][0]["folder"] = str(tmp / "k")
    return write(tmp, raw)


ROWS: list[tuple[str, Callable[[Path], Path], str, list[str]]] = [
    ("custom path needs --allow-code", lambda t: _with(t, [_strategy(
        search_method="X", custom_search_method_path=str(_file(t, "x.py", b"class X: pass\n")))]), "--allow-code", []),
    ("custom path /dev/zero", lambda t: _with(t, [_strategy(search_method="X", custom_search_method_path="/dev/zero")]),
     "/dev/zero", ["--allow-code"]),
    ("custom path a directory", lambda t: _with(t, [_strategy(search_method="X", custom_search_method_path=str(t))]),
     "is a directory", ["--allow-code"]),
    ("custom path binary", lambda t: _with(t, [_strategy(search_method="X", custom_search_method_path=str(
        _file(t, "b.py", bytes(range(256)))))]), "b.py", ["--allow-code"]),
    ("custom path without the class", lambda t: _with(t, [_strategy(search_method="X", custom_search_method_path=str(
        _file(t, "y.py", b"class Y: pass\n")))]), "no class 'X'", ["--allow-code"]),
    ("hyperparameter without name", lambda t: _with(t, [_strategy(search_method_hyperparameters=[{"value": 3}])]),
     "needs a 'name'", []),
    ("garbage T1 file", lambda t: _t1(t, "__import__('os').system('touch pwned')"), "Values", []),
    ("T1 values too many", lambda t: _t1(t, "[i for i in range(10**6)]"), "more than 100000", []),
    ("objective key missing from T4", lambda t: write(t, raw_experiment(t) | {"experimental_groups_defaults": {
        **raw_experiment(t)["experimental_groups_defaults"], "applications": [{
            **raw_experiment(t)["experimental_groups_defaults"]["applications"][0],
            "objective_performance_keys": ["GFLOP/s"]}]}}), "GFLOP/s", []),
    ("gpus empty", lambda t: _with(t, gpus=[]), "gpus=[]", []),
    ("applications empty", lambda t: _with(t, applications=[]), "applications=[]", []),
    ("cutoff_margin -1", lambda t: _with(t, cutoff_margin=-1), "cutoff_margin=-1", []),
    ("repeats 10^9", lambda t: _with(t, repeats=10**9), "repeats=1000000000", []),
    ("seed abc", lambda t: _with(t, [_searchlab([{"name": "seed", "value": "abc"}])]), "seed='abc'", []),
    ("seed -5", lambda t: _with(t, [_searchlab([{"name": "seed", "value": -5}])]), "seed=-5", []),
    ("seed 1.5", lambda t: _with(t, [_searchlab([{"name": "seed", "value": 1.5}])]), "seed=1.5", []),
    ("unknown searcher option", lambda t: _with(t, [_searchlab([{"name": "nope", "value": 1}])]), "nope", []),
    ("T4 objective NaN", lambda t: _t4(t, _row0("objective", float("nan"))), "finite number", []),
    ("T4 objective -inf", lambda t: _t4(t, _row0("objective", float("-inf"))), "finite number", []),
    ("T4 objective a string", lambda t: _t4(t, _row0("objective", "fast")), "'fast'", []),
    ("T4 time a string", lambda t: _t4(t, _row0("time", "slow")), "'slow'", []),
    ("T4 time negative", lambda t: _t4(t, _row0("time", -1.0)), "-1.0", []),
    ("T4 time NaN", lambda t: _t4(t, _row0("time", float("nan"))), "nan", []),
    ("T4 objective negative", lambda t: _t4(t, _row0("objective", -2.0)), "-2.0", []),
    ("T4 row without times", lambda t: _t4(t, _row0("drop", "times")), "'times'", []),
    ("T4 row without measurements", lambda t: _t4(t, _row0("drop", "measurements")), "'measurements'", []),
    ("T4 row without a knob", lambda t: _t4(t, _row0("missing", None)), "block_size_x", []),
    ("T4 knob outside the space", lambda t: _t4(t, _row0("knob", 17)), "block_size_x=17", []),
    ("T4 objective all zero", lambda t: _t4(t, _all_zero), "spread", []),
    ("KTT autotuner", lambda t: _with(t, [_strategy(autotuner="KTT")]), "KTT", []),
    ("no autotuner at all", lambda t: write(t, {**raw_experiment(t), "experimental_groups_defaults": {
        k: v for k, v in raw_experiment(t)["experimental_groups_defaults"].items() if k != "autotuner"}}),
     "no 'autotuner'", []),
]


@pytest.mark.parametrize(("case", "make", "needle", "extra"), ROWS, ids=[r[0] for r in ROWS])
def test_each_probe_case_is_one_line_exit_2_and_no_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, case: str,
                                                              make: Callable[[Path], Path], needle: str,
                                                              extra: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    status = main([str(make(tmp_path)), "--out", str(out), "--quiet", *extra])
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("searchlab reproduce: error:") and needle in err, err
    assert not out.exists() and not (tmp_path / "outputs").exists() and not (tmp_path / "pwned").exists()


def test_out_that_is_a_file_or_read_only_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, raw_experiment(tmp_path, strategies=[_strategy()]))
    (tmp_path / "file").write_text("x")
    assert main([str(path), "--out", str(tmp_path / "file"), "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("root writes to a read-only directory here (os.access says so)")
        assert main([str(path), "--out", str(locked / "out"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "not writable" in err and len(err.strip().splitlines()) == 1
    finally:
        locked.chmod(0o700)


def test_the_extra_is_named_in_one_line_when_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kernel_tuner" else real(name, *a))
    assert main([str(write(tmp_path, raw_experiment(tmp_path))), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "searchlab[reproduce]" in err and "kernel_tuner" in err, err
