"""problem=dft: the grammar of our C DFT library (paper 002 §4.1-4.3), real compiled plans."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from searchlab.adapters.grammar import DftProblem, _clib, _codegen, _fftw, dft_grammar, ruletree, word_counts
from searchlab.adapters.grammar._fft import Leaf, Split, Twiddle, describe
from searchlab.api import optimize
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config, Direction, FailureMode, Status, loss
from searchlab.errors import ConfigError
from searchlab.run.execution import WorkerRuntime
from searchlab.run.loop import Budget, StopReason
from searchlab.searchers import DpSearcher, McSearcher, TagSearcher

QUICK: dict[str, Any] = {"measure": MeasurementProtocol(min_runs=1, max_runs=2, min_time_s=0.0, warmup=0),
                         "batch_s": 0.0, "pin": False}


def test_grammar_has_mutually_recursive_nonterminals_and_counts_words() -> None:
    g = dft_grammar(1024, 32)
    assert ("buf", "DFT_64") in g.alternatives("TW_64") and ("TW_64", "DFT_16") in g.alternatives("DFT_1024")
    assert {("t1_32",), ("t1v_32",)} <= set(g.alternatives("TW_32")) and ("n1v_32",) in g.alternatives("DFT_32")
    assert not any("omp" in rhs for rhs in g.alternatives("DFT_1024"))
    assert sum("omp" in rhs for rhs in dft_grammar(1024, 32, threads=2).alternatives("DFT_1024")) == 9
    # W_D(s) = 2 [codelets] + sum_k W_T(k) W_D(s/k);  W_T(k) = 2 [codelets] + W_D(k) [buf]
    counts = word_counts(dft_grammar(16, 8))
    assert [counts[f"DFT_{s}"] for s in (2, 4, 8, 16)] == [2, 10, 66, 520]
    assert [counts[f"TW_{k}"] for k in (2, 4, 8)] == [4, 12, 68]


def test_every_plan_of_dft16_runs_in_c_and_matches_numpy() -> None:
    problem = DftProblem(size=16, max_codelet=8, **QUICK)
    problem.setup(problem.device)
    shapes = set()
    for word in problem.space.iter_words():
        config = problem.space.word_config(word)
        m = problem.evaluate(config)
        assert m.status is Status.OK and m.sensors["relative_error"] < 1e-14, m.extra["ruletree"]
        shapes.add(m.extra["ruletree"])
    assert len(shapes) == problem.space.size() == 520


def _radix2(n: int) -> Split | Leaf:
    return Leaf("n1", 2) if n == 2 else Split(Twiddle("t1", 2), _radix2(n // 2))


@pytest.mark.parametrize("spec", [
    _radix2(2**14),
    Split(Twiddle("t1v", 32), Split(Twiddle("t1v", 16), Leaf("n1v", 32))),
    Split(Twiddle("buf", 128, Split(Twiddle("t1v", 4), Leaf("n1", 32))),
          Split(Twiddle("buf", 8, Leaf("n1v", 8)), Leaf("n1v", 16))),
    Split(Twiddle("t1", 16), Split(Twiddle("t1v", 32), Leaf("n1v", 32)), parallel=True),
], ids=describe)
def test_large_plans_of_every_kind_match_numpy(spec: Split | Leaf) -> None:
    lib = _clib.load(32)
    lib.fl_set_clock(0)
    plan = _clib.Plan(lib, spec, _clib.Twiddles())
    x = np.random.default_rng(1).standard_normal(2**14) * (1 + 1j)
    y = np.zeros_like(x)
    assert plan.run_dft(x, y, (1, 1), (1, 1, 1), 3) > 0
    assert np.linalg.norm(y - np.fft.fft(x)) / np.linalg.norm(y) < 1e-13
    plan.close()


def test_evaluate_times_a_checked_plan_with_the_shared_protocol() -> None:
    problem = DftProblem(size=1024, batch_s=0.0005, measure=MeasurementProtocol(min_runs=4, max_runs=6, min_time_s=0.0))
    assert problem.direction is Direction.MAXIMIZE
    config = Config(word="DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))")
    m = problem.evaluate(config)
    assert m.status is Status.OK and not m.is_subproblem
    assert 4 <= len(m.samples) <= 6 and m.objective == pytest.approx(5 * 1024 * 10 / m.sensors["time_median_s"] / 1e6)
    assert m.sensors["relative_error"] < 1e-13 and m.sensors["ci95_lo"] <= m.sensors["time_median_s"]
    assert m.extra["batch"] >= 1 and problem.describe_config(config) == "DFT_1024 = CT(32v, 32v)"


@pytest.mark.parametrize("context", ["strided", "standalone"])
def test_subproblems_are_measured_in_their_context(context: str) -> None:
    problem = DftProblem(size=256, subproblem_context=context, **QUICK)
    for word, name, rule in [("DFT_16(TW_4(buf,DFT_4(n1_4)),DFT_4(n1v_4))", "DFT_16", "CT(buf(4), 4v)"),
                             ("TW_8(t1v_8)", "TW_8", "8v"), ("TW_4(buf,DFT_4(TW_2(t1_2),DFT_2(n1_2)))", "TW_4",
                                                            "buf(CT(2, 2))")]:
        m = problem.evaluate(Config(word=word))
        assert m.status is Status.OK and m.extra["subproblem"] == name and m.extra["context"] == context
        assert m.extra["ruletree"] == rule and m.sensors["relative_error"] < 1e-13
        assert loss(m, problem.direction) == math.inf  # never the run's best


def test_a_wrong_plan_is_failed_wrong_output() -> None:
    problem = DftProblem(size=256, **QUICK)
    good = problem.twiddles
    problem.twiddles = lambda n, k: np.conj(good(n, k))  # type: ignore[assignment, assignment]
    runtime = WorkerRuntime(problem, DeviceInfo())
    measurement = runtime.evaluate(Config(word="DFT_256(TW_16(t1_16),DFT_16(n1_16))"))[0]
    assert measurement.status is Status.FAILED and measurement.failure_mode is FailureMode.WRONG_OUTPUT
    assert "relative error" in measurement.message and "CT(16, 16)" in measurement.message


@pytest.mark.parametrize(("options", "match"), [
    ({"size": 1}, "size"), ({"size": 2**23}, "size"), ({"size": 10.5}, "size"), ({"size": "1024"}, "size"),
    ({"max_codelet": 1}, "max_codelet"), ({"max_codelet": 65}, "max_codelet"),
    ({"measure": {"min_runs": 0}}, "min_runs"), ({"measure": {"runs": 3}}, "runs"),
    ({"clock": "tsc"}, "clock"), ({"threads": 2}, "clock=wall"),
    ({"subproblem_context": "nested"}, "subproblem_context"),
])
def test_bad_options_are_config_errors(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        DftProblem(**options)


def test_library_is_compiled_once_and_cached_by_source() -> None:
    first = _clib.build(32)
    stamp = first.stat().st_mtime_ns
    assert _clib.build(32) == first and first.stat().st_mtime_ns == stamp
    source = _codegen.codelet_source(8)
    body = source.split("n1_8(", 1)[1].split("}\n", 1)[0]
    assert body.count("for (") == 1 and "cos" not in body  # one batch loop; constants folded


def test_dp_composes_bottom_up_over_both_nonterminals() -> None:
    problem = DftProblem(size=64, **QUICK)
    dp = DpSearcher(problem.space, direction=problem.direction)
    outcome = optimize(problem, dp, Budget(evaluations=500))
    assert outcome.reason is StopReason.EXHAUSTED and dp.done
    names = {r.measurement.extra["subproblem"] for r in outcome.results if r.measurement.is_subproblem}
    assert {"DFT_2", "DFT_4", "DFT_32", "TW_2", "TW_16", "TW_32"} <= names
    full = [r for r in outcome.results if not r.measurement.is_subproblem]
    assert outcome.best is not None and outcome.best in full and len(full) == 5  # one per split k = 2..32
    for searcher in (TagSearcher, McSearcher):
        run = optimize(problem, searcher(problem.space, direction=problem.direction, seed=0), Budget(evaluations=6))
        assert len(run.results) == 6 and run.best is not None


def test_lazy_children_are_the_children_in_order() -> None:
    problem = DftProblem(size=256)
    graph, rng = problem.space, np.random.default_rng(3)
    node = graph.root
    for _ in range(4):
        lazy, eager = graph.lazy_children(node), graph.children(node)
        assert len(lazy) == len(eager) and [lazy[i] for i in range(len(lazy))] == list(eager)
        assert list(graph.lazy_children(node, canonical=True)) == list(graph.canonical_children(node))
        node = eager[int(rng.integers(len(eager)))][1]  # type: ignore[assignment]
        assert graph.open_leaves(node) == graph.open_leaves(graph.node(graph.key(node)))


def test_a_dft_measurement_stops_at_min_time_not_at_max_runs() -> None:
    """Each run times a batch of ~2 ms in C: 10 ms of measuring is about 5 runs, far below the
    cap of 30 (issue 22, item 1: the batch's time was counted as one execution's, so every
    DFT measurement ran all 30). The time criterion alone (no interval target) decides."""
    problem = DftProblem(size=1024, batch_s=0.002,
                         measure=MeasurementProtocol(min_runs=3, max_runs=30, min_time_s=0.01, target_rel_ci=0.0))
    m = problem.evaluate(Config(word="DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))"))
    runs, measured = len(m.samples), m.sensors["measured_s"]
    batch_s = measured / runs  # a batch's mean length (the C loop sizes it from a first timing)
    assert m.status is Status.OK and 3 <= runs < 30, (runs, measured)
    assert measured >= 0.01 and (runs == 3 or measured - batch_s < 0.01 + 3 * batch_s)
    assert measured == pytest.approx(sum(m.extra["batch"] * 5 * 1024 * 10 / v / 1e6 for v in m.samples), rel=1e-6)


def test_fftw_reference_is_checked_and_timed() -> None:
    out = _fftw.fftw_reference(1024, "estimate", MeasurementProtocol(3, 4, 0.0, 0.0, 0), batch_s=0.0002)
    assert out["relative_error"] < 1e-13 and out["mflops"] > 0 and out["plan_s"] >= 0
    lo, hi = out["mflops_ci95"]
    assert lo <= out["mflops"] <= hi


def test_fftw_is_measured_under_the_problems_protocol() -> None:
    """A distinctive protocol of the problem (fixed 7 runs) is what FFTW's timing follows."""
    problem = DftProblem(size=1024, batch_s=0.0003,
                         measure=MeasurementProtocol(min_runs=7, max_runs=7, min_time_s=0.0, target_rel_ci=0.0))
    out = _fftw.problem_reference(problem, "estimate")
    assert out["runs"] == 7 and out["relative_error"] < 1e-13
    slow = MeasurementProtocol(min_runs=2, max_runs=40, min_time_s=0.004, target_rel_ci=0.0)
    spent = _fftw.problem_reference(DftProblem(size=1024, batch_s=0.001, measure=slow), "estimate")
    assert spent["measured_s"] >= 0.004 and spent["runs"] < 40


def test_our_plan_and_fftw_are_compared_interleaved_with_an_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = DftProblem(size=1024, batch_s=0.0003,
                         measure=MeasurementProtocol(min_runs=3, max_runs=3, min_time_s=0.0, target_rel_ci=0.0))
    calls: list[str] = []
    evaluate, timed = problem.evaluate, _fftw.FftwPlan.measure

    def ours(config: Config) -> Any:
        calls.append("ours")
        return evaluate(config)

    def fftw(self: _fftw.FftwPlan, *args: Any) -> Any:
        calls.append("fftw")
        return timed(self, *args)

    monkeypatch.setattr(problem, "evaluate", ours)
    monkeypatch.setattr(_fftw.FftwPlan, "measure", fftw)
    out = _fftw.versus_fftw(problem, Config(word="DFT_1024(TW_32(t1v_32),DFT_32(n1v_32))"), "estimate", rounds=4)
    assert calls == ["ours", "fftw", "fftw", "ours", "ours", "fftw", "fftw", "ours"]
    lo, hi = out["ours_over_fftw_ci95"]
    assert len(out["ours_over_fftw_rounds"]) == 4 and lo <= out["ours_over_fftw_median"] <= hi and lo > 0
    assert out["protocol"]["min_runs"] == 3 and out["protocol"]["batch_s"] == 0.0003


def test_ruletree_of_a_word() -> None:
    problem = DftProblem(size=64)
    word = problem.space.node("DFT_64(TW_4(buf,DFT_4(n1v_4)),DFT_16(TW_2(t1v_2),DFT_8(n1_8)))")
    assert describe(ruletree(word)) == "CT(buf(4v), CT(2v, 8))"
