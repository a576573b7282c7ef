"""Tuned against untuned on the validation datasets (searchlab.adapters.futhark._versus): paired by
round, and a .tuning only for a measurable gain. No compiler needed."""

from __future__ import annotations

from pathlib import Path

from searchlab.adapters.futhark._report import read_tuning, write_tuning
from searchlab.adapters.futhark._versus import decision, paired, round_runs, summarise, write_or_remove


def test_paired_by_round_cancels_drift() -> None:
    # the machine slows down 3x in round 2: unpaired, untuned [1, 3] ms and tuned [0.8, 2.4] ms overlap
    untuned = [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 6.0}, {"a": 1.0, "b": 2.0}]
    tuned = [{"a": 0.8, "b": 1.0}, {"a": 2.4, "b": 3.0}, {"a": 0.8, "b": 1.0}]
    c = paired(untuned * 3, tuned * 3, "validation")  # nine rounds: enough for the anytime interval to bound it
    assert c["basis"] == "validation" and c["pairs"] == 9
    assert c["speedup"] == c["ci95"][0] == c["ci95"][1] == 3.0 / 1.8  # every round: 3 / 1.8
    assert c["datasets"]["a"]["speedup"] == 1.25 and c["datasets"]["b"]["speedup"] == 2.0
    rows = summarise({"untuned": untuned})
    assert rows["untuned"]["a"]["median"] == 1.0 and rows["untuned"]["a"]["ci95"] == [1.0, 3.0]


def test_decision_and_what_is_written(tmp_path: Path) -> None:
    gain = {"speedup": 1.3, "ci95": [1.1, 1.5]}
    unclear = {"speedup": 1.3, "ci95": [0.9, 1.5]}
    assert decision(gain, same=False)[0] is True
    assert decision(unclear, same=False) == (False, "undecided: the interval still holds 1 at the cap")
    assert decision({"speedup": 0.8, "ci95": [0.7, 0.9]}, same=False)[1].endswith("measurably slower than untuned")
    assert decision({"speedup": 1.0, "ci95": [0.99, 1.01]}, False, 0.02)[1].startswith("no difference from untuned")
    assert decision(gain, same=True)[0] is False  # the best found is untuned itself: nothing to write
    assert decision(None, same=False)[0] is False
    path = tmp_path / "p.fut.tuning"
    assert write_or_remove(path, {"b": 2, "a": 1}, write_tuning) == str(path) and read_tuning(path) == {"a": 1, "b": 2}
    assert write_or_remove(path, None, write_tuning) is None and not path.exists()  # an earlier one is removed
    assert round_runs(10, 5) == 2 and round_runs(3, 5) == 2 and round_runs(30, 4) == 8
