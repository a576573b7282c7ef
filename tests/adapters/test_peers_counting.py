"""bench/peers_kt.py: Kernel Tuner's strategies replayed with the recorded failures hidden (met
as live) or known (its simulation mode), issue 22 item 3."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
A100 = ROOT.parent / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz"
pytestmark = pytest.mark.skipif(not A100.exists(), reason="../shared/data/kernel_tuner is not present")


def _cache(tmp_path: Path) -> dict:
    util = pytest.importorskip("kernel_tuner.util")
    path = tmp_path / "cache.json"
    with gzip.open(A100, "rt") as fh:
        path.write_text(fh.read())
    return util.read_cache(str(path), open_cache=False)


def test_hidden_restriction_admits_every_recorded_configuration(tmp_path: Path) -> None:
    from constraint import FunctionConstraint
    from kernel_tuner import util
    from kernel_tuner.searchspace import Searchspace

    from bench.peers_kt import restriction

    cache = _cache(tmp_path)
    size = {c: Searchspace(cache["tune_params"], [FunctionConstraint(restriction(cache, c))], 10**9).size
            for c in ("hidden", "known")}
    shipped = Searchspace(cache["tune_params"], [util.infer_restrictions_from_cache(cache)], 10**9).size
    assert shipped == 4201 and size == {"hidden": 4362, "known": 4201}


def test_kernel_tuner_meets_failures_only_when_hidden() -> None:
    pytest.importorskip("kernel_tuner")
    from bench.peers_kt import kt_results

    for counting, expect_failures in (("hidden", True), ("known", False)):
        results, _ = kt_results(str(A100), "random_sample", 0, 400, counting)
        failures = sum(1 for r in results if not isinstance(r.get("time"), (int, float)))
        assert (failures > 0) is expect_failures, (counting, failures)
        assert len(results) == 400
    raw = json.loads(gzip.open(A100, "rt").read())
    assert sum(isinstance(e["time"], str) for e in raw["cache"].values()) == 161


def _row(tables: dict[str, list[float]], first: int, counting: str | None) -> dict:
    row = {"@20": {}, "runs": {t: [[v] for v in vals] for t, vals in tables.items()}, "first_seed": first,
           "methodology_score": {t: 0.0 for t in tables}, "mean_curve": [0.5]}
    return {**row, "counting": counting} if counting else row


def test_a_row_is_completed_only_where_the_countings_coincide() -> None:
    from bench.peers_kt import complete, counting_of

    new = _row({"A100": [0.1, 0.2]}, 0, "known")
    stored = _row({"A100": [0.9, 0.9, 0.9], "MI250X": [0.5, 0.6, 0.7]}, 0, None)  # ours, before issue 22: hidden
    assert counting_of("ours:auto", stored) == "hidden" and counting_of("kt:pso", stored) == "known"
    done = complete(new, stored, "ours:auto", frozenset({"A100"}))
    assert done["runs"] == {"A100": [[0.1], [0.2]], "MI250X": [[0.5], [0.6]]}  # seeds 0-1, the failure-free table only
    assert done["@20"]["mean"] == (0.1 + 0.2 + 0.5 + 0.6) / 4 and done["counting"] == "known"
    assert complete(new, stored, "ours:auto", frozenset({"A100", "MI250X"})) is new  # MI250X differs too: nothing added
