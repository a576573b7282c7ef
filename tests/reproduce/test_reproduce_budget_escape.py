"""A strategy that lets Kernel Tuner's StopCriterionReached escape tune_kernel (Kernel Tuner 1.5's greedy_ils when
its first evaluation spends the time budget) costs one retried attempt, not the whole run (issue 45; the reference
``autotuning_experiment`` ends with a traceback there, bench/results/historical/reproduce.json)."""

from __future__ import annotations

from typing import Any

import pytest

from searchlab.reproduce import kt


def _spec() -> kt.RepeatSpec:
    return kt.RepeatSpec(t1="unused.json", cache="unused.json", objective="time", higher_is_better=False, samples=1,
                         search_method="greedy_ils", custom=None, hyperparameters=(),
                         budget=(("time_limit", 10.0),), cutoff_time_start=0.0, cutoff_time=10.0, min_num_evals=2,
                         time_keys=("compilation",), seed=7)


def _run(*times: float) -> dict[str, Any]:
    """A compact run (searchlab.reproduce.arrays) of valid results with these compile times."""
    return {"keys": ["compilation"], "t": [[t] for t in times], "v": list(times), "i": ["correct"] * len(times),
            "configs": [{"x": t} for t in times]}


def test_an_escaped_stop_criterion_is_a_retried_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel_tuner.util import StopCriterionReached

    seeds: list[int] = []

    def tune_once(spec: kt.RepeatSpec) -> dict[str, Any]:
        seeds.append(spec.seed)
        if len(seeds) == 1:
            raise StopCriterionReached("time limit exceeded")
        return _run(1.0, 2.0)

    monkeypatch.setattr(kt, "_tune_once", tune_once)
    outcome = kt.run_repeat(_spec())
    assert outcome["attempts"] == 2 and len(outcome["run"]["i"]) == 2
    assert seeds == [7, 8]  # the retry is a new run with the next seed, as any retry


def test_other_errors_still_end_the_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    def tune_once(spec: kt.RepeatSpec) -> dict[str, Any]:
        raise ValueError("a real bug")

    monkeypatch.setattr(kt, "_tune_once", tune_once)
    with pytest.raises(ValueError, match="a real bug"):
        kt.run_repeat(_spec())
