"""problem=dft: the Cooley-Tukey breakdown grammar (paper 002 §4.3) on real numpy FFT plans."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from searchlab.adapters.grammar import DftProblem, dft_grammar, word_counts
from searchlab.adapters.grammar import _fft as fft
from searchlab.adapters.grammar.dft import ruletree
from searchlab.api import optimize
from searchlab.errors import ConfigError
from searchlab.execution import WorkerRuntime
from searchlab.loop import Budget, StopReason
from searchlab.problem import DeviceInfo
from searchlab.records import Config, Direction, FailureMode, Status, loss
from searchlab.searchers import DpSearcher, McSearcher, TagSearcher

QUICK: dict[str, Any] = {"repeats": 2, "warmup": 1, "min_sample_s": 0.0}


def test_grammar_counts_ruletrees_exactly() -> None:
    # W(2^j): codelet (j <= 5) + sum over splits W(2^i) W(2^(j-i)); W(2)=1, W(4)=2, W(8)=5, W(16)=15, W(32)=51
    counts = word_counts(dft_grammar(4096, 32))
    assert [counts[f"DFT_{2**j}"] for j in range(1, 8)] == [1, 2, 5, 15, 51, 187, 728]
    assert counts["DFT_4096"] == 970439
    problem = DftProblem(size=64)
    words = {problem.space.key(w) for w in problem.space.iter_words()}
    assert problem.space.size() == len(words) == 187


def test_every_ruletree_of_dft64_matches_numpy_fft() -> None:
    problem = DftProblem(size=64, max_codelet=16)
    x = fft.random_input(64, 3, seed=1)
    reference = np.fft.fft(x, axis=-1)
    shapes = set()
    for word in problem.space.iter_words():
        spec = ruletree(word)  # type: ignore[arg-type]
        shapes.add(fft.describe(spec))
        assert fft.relative_error(fft.build(spec), x, reference) < 1e-12, fft.describe(spec)
    assert len(shapes) == problem.space.size() == 185  # no DFT_32 codelet: W(32) = 50, W(64) = 185


def test_large_ruletrees_of_every_kind_match_numpy_fft() -> None:
    n = 2**14
    x = fft.random_input(n, 1, seed=2)
    reference = np.fft.fft(x)

    def right(m: int) -> fft.Spec:
        return 2 if m == 2 else (2, right(m // 2))

    def left(m: int) -> fft.Spec:
        return 2 if m == 2 else (left(m // 2), 2)

    for spec in (right(n), left(n), (128, 128), ((16, 32), (4, 8)), (32, (32, 16))):
        assert fft.spec_size(spec) == n
        assert fft.relative_error(fft.build(spec), x, reference) < 1e-10, fft.describe(spec)


def test_evaluate_times_a_verified_plan() -> None:
    problem = DftProblem(size=1024, repeats=5, warmup=1)
    assert problem.direction is Direction.MAXIMIZE
    config = Config(word=problem.space.compose("DFT_1024", "DFT_1024->DFT_32 DFT_32",
                                               ["DFT_32(codelet_32)", "DFT_32(codelet_32)"]))
    m = problem.evaluate(config)
    assert m.status is Status.OK and not m.is_subproblem
    assert len(m.samples) == 5 and m.objective == pytest.approx(float(np.median(m.samples)))
    assert m.objective == pytest.approx(5 * 1024 * 10 / m.sensors["time_median_s"] / 1e6)
    assert m.sensors["relative_error"] < 1e-10
    assert problem.describe_config(config) == "DFT_1024 = CT(32, 32)"


def test_wrong_plan_is_failed_wrong_output(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = DftProblem(size=256, **QUICK)
    monkeypatch.setattr(fft, "dft_matrix", lambda m: np.conj(np.exp(-2j * np.pi * np.outer(*[np.arange(m)] * 2) / m)))
    runtime = WorkerRuntime(problem, DeviceInfo())
    measurement = runtime.evaluate(problem.space.sample(np.random.default_rng(0)))[0]
    assert measurement.status is Status.FAILED
    assert measurement.failure_mode is FailureMode.WRONG_OUTPUT
    assert "relative error" in measurement.message


def test_subproblem_words_are_measured_alone() -> None:
    problem = DftProblem(size=256, **QUICK)
    config = Config(word="DFT_16(DFT_4(codelet_4),DFT_4(DFT_2(codelet_2),DFT_2(codelet_2)))")
    problem.space.validate(config)
    m = problem.evaluate(config)
    assert m.extra["subproblem"] == "DFT_16" and m.is_subproblem
    assert m.extra["ruletree"] == "CT(4, CT(2, 2))"
    assert m.objective is not None and m.objective > 0
    assert loss(m, problem.direction) == math.inf  # never the run's best


@pytest.mark.parametrize(("option", "value"), [("size", 1000), ("size", 1), ("max_codelet", 3), ("repeats", 0)])
def test_bad_options_are_config_errors(option: str, value: int) -> None:
    with pytest.raises(ConfigError, match=option):
        DftProblem(**{option: value})


def test_ruletree_run_times_differ() -> None:
    problem = DftProblem(size=4096, repeats=3, warmup=1, min_sample_s=0.001)
    fast = Config(word=problem.space.compose("DFT_4096", "DFT_4096->DFT_64 DFT_64",
                                             ["DFT_64(DFT_8(codelet_8),DFT_8(codelet_8))"] * 2))
    node = "DFT_2(codelet_2)"
    for m in (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048):
        node = f"DFT_{m}({node},DFT_2(codelet_2))"  # left-deep radix 2
    slow = Config(word=f"DFT_4096({node},DFT_2(codelet_2))")
    assert problem.evaluate(fast).objective > 3 * problem.evaluate(slow).objective  # type: ignore[operator]


def test_searchers_run_on_dft_and_dp_composes_bottom_up() -> None:
    problem = DftProblem(size=256, **QUICK)
    dp = DpSearcher(problem.space, direction=problem.direction)
    outcome = optimize(problem, dp, Budget(evaluations=200))
    assert outcome.reason is StopReason.EXHAUSTED and dp.done
    subs = [r for r in outcome.results if r.measurement.is_subproblem]
    full = [r for r in outcome.results if not r.measurement.is_subproblem]
    assert {r.measurement.extra["subproblem"] for r in subs} == {f"DFT_{m}" for m in (4, 8, 16, 32, 64, 128)}
    assert len(full) == 7 and outcome.best in full  # DFT_256 -> (DFT_k, DFT_256/k), k = 2..128
    assert outcome.best is not None and outcome.best.config["word"] == dp.solved["DFT_256"][0]
    expected = {problem.space.compose("DFT_256", label, [dp.solved[need][0] for need in needs])
                for label, needs in problem.space.breakdowns("DFT_256")}  # each split from the best parts
    assert {r.config["word"] for r in full} == expected
    for searcher in (TagSearcher, McSearcher):
        run = optimize(problem, searcher(problem.space, direction=problem.direction, seed=0), Budget(evaluations=8))
        assert len(run.results) == 8 and run.best is not None
