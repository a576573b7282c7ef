"""The benchmark harness writes its one schema, with provenance, from options declared as data."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench import harness


@dataclass(frozen=True)
class _Options:
    n: int = 3
    label: str = "x"
    seeds: tuple[int, ...] = (0, 1)


def _run(ctx: harness.Context, options: _Options) -> dict[str, Any]:
    ctx.used_seeds(options.seeds)
    ctx.log("working")
    return {"squares": [i * i for i in range(options.n)], "label": options.label}


def test_a_registered_benchmark_writes_the_schema_with_provenance(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    bench = harness.Benchmark("selftest_tmp", "a test benchmark", _Options, _run)
    monkeypatch.setitem(harness._LOADED, bench.name, bench)
    monkeypatch.setitem(harness.REGISTRY, bench.name, "nowhere")
    out = tmp_path / "r.json"
    written = harness.run(bench.name, ["--n", "4", "--seeds", "5", "6", "--out", str(out), "--quiet"])
    assert written == out
    doc = harness.read(out)
    assert doc["schema"] == harness.SCHEMA and doc["benchmark"] == "selftest_tmp"
    assert doc["options"] == {"n": 4, "label": "x", "seeds": [5, 6]}
    assert doc["results"]["squares"] == [0, 1, 4, 9]
    prov = doc["provenance"]
    assert prov["seeds"] == [5, 6] and prov["machine"]["cpus"] >= 1
    assert len(prov["commit"]) == 40 and "searchlab" in prov["versions"]
    assert prov["command"].startswith("python -m bench selftest_tmp")


def test_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"results": 1}))
    with pytest.raises(ValueError, match="schema"):
        harness.read(path)


def test_unknown_benchmark_is_one_line() -> None:
    with pytest.raises(SystemExit, match="unknown benchmark 'nope'"):
        harness.load("nope")
