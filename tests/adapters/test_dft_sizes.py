"""problem=dft at any size (issue 26): mixed radix, Good-Thomas, Rader, Bluestein and the
generated odd-radix codelets, every plan compared with numpy.fft on random input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from searchlab.adapters.grammar import DftProblem, _clib, dft_grammar, ruletree
from searchlab.adapters.grammar._convolve import primitive_root
from searchlab.adapters.grammar._dftgrammar import bluestein_lengths
from searchlab.adapters.grammar._fft import Bluestein, Leaf, Pfa, Rader, Spec, Split, Twiddle, describe
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.records import Config, Status
from searchlab.errors import ConfigError

QUICK: dict[str, Any] = {"measure": MeasurementProtocol(min_runs=1, max_runs=1, min_time_s=0.0, warmup=0),
                         "batch_s": 0.0, "pin": False}


def _numpy_error(spec: Spec, seed: int = 0, v: int = 1) -> float:
    """Relative error of the C plan against numpy.fft on random input, ``v`` transforms."""
    lib = _clib.load(32)
    plan = _clib.Plan(lib, spec, _clib.Twiddles())
    n = spec.size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((v, n)) + 1j * rng.standard_normal((v, n))
    y = np.zeros_like(x)
    plan.run_dft(x, y, (1, 1), (v, n, n), 1)
    plan.close()
    want = np.fft.fft(x, axis=1)
    return float(np.linalg.norm(y - want) / np.linalg.norm(want))


def _radix(n: int, r: int) -> Spec:
    return Leaf("n1", n) if n <= r else Split(Twiddle("t1v", r), _radix(n // r, r))


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 21, 25, 27, 30, 32])
@pytest.mark.parametrize("kind", ["n1", "n1v"])
def test_every_generated_codelet_is_a_dft(s: int, kind: str) -> None:
    assert _numpy_error(Leaf(kind, s), seed=s, v=3) < 1e-14


@pytest.mark.parametrize("s", [3, 8, 12, 25, 32])
def test_vector_codelets_over_neighbouring_transforms(s: int) -> None:
    """I_v ⊗ DFT_s reading at stride v (the inner stage of a top split, where the two vector
    lanes are neighbours in memory: whole-vector loads), v odd so the scalar tail runs too."""
    lib = _clib.load(32)
    plan = _clib.Plan(lib, Leaf("n1v", s), _clib.Twiddles())
    v = 7
    rng = np.random.default_rng(s)
    x = rng.standard_normal(s * v) + 1j * rng.standard_normal(s * v)
    y = np.zeros_like(x)
    plan.run_dft(x, y, (v, 1), (v, 1, s), 1)
    plan.close()
    want = np.fft.fft(x.reshape(s, v).T, axis=1).ravel()
    assert np.linalg.norm(y - want) / np.linalg.norm(want) < 1e-14


@pytest.mark.parametrize("spec", [
    _radix(3**7, 3),  # 2187, radix 3 throughout
    Split(Twiddle("t1", 7), Split(Twiddle("t1v", 5), Split(Twiddle("t1", 3), Leaf("n1v", 2)))),  # 2·3·5·7
    Pfa(Leaf("n1", 8), Split(Twiddle("t1v", 3), Split(Twiddle("t1", 5), Leaf("n1v", 25)))),  # 3000 = 8 · 375
    Split(Twiddle("buf", 24, Pfa(Leaf("n1v", 3), Leaf("n1", 8))), Split(Twiddle("t1v", 5), Leaf("n1", 25))),  # 3000
    Split(Twiddle("t1v", 12), Split(Twiddle("buf", 10, Leaf("n1v", 10)), Leaf("n1v", 25))),  # 3000
    Rader(1009, Split(Twiddle("t1v", 16), Split(Twiddle("t1", 7), Leaf("n1v", 9)))),  # 1008 = 16·7·9
    Bluestein(1009, _radix(2048, 16)),
    Bluestein(1009, Split(Twiddle("t1v", 9), Split(Twiddle("t1", 15), Leaf("n1v", 15)))),  # M = 2025
    Split(Twiddle("t1v", 4), Rader(37, Split(Twiddle("t1", 4), Leaf("n1", 9)))),  # 148 = 4 · 37
    Rader(65537, _radix(65536, 16)),  # a large (Fermat) prime
    Bluestein(100003, _radix(2**18, 16)),  # a large prime, Bluestein
    Split(Twiddle("buf", 37, Rader(37, Split(Twiddle("t1", 4), Leaf("n1v", 9)))), Leaf("n1", 3)),  # Rader behind a buffer
], ids=describe)
def test_plans_of_every_rule_match_numpy(spec: Spec) -> None:
    assert _numpy_error(spec, v=2) < 1e-12


def test_a_wrong_table_is_caught_by_the_comparison() -> None:
    """The comparison can fail: Bluestein with too short a convolution is no DFT."""
    assert _numpy_error(Bluestein(37, Split(Twiddle("t1", 2), Leaf("n1", 32)))) > 1e-3  # M = 64 < 2n-1
    assert _numpy_error(Bluestein(37, Split(Twiddle("t1", 3), Leaf("n1", 25)))) < 1e-13  # M = 75


@pytest.mark.parametrize("n", [3000, 1009, 3**7, 2 * 3 * 5 * 7, 10007, 2 * 1009, 2**10, 100_000])
def test_random_words_of_any_size_are_dfts(n: int) -> None:
    problem = DftProblem(size=n, **QUICK)
    rng = np.random.default_rng(n)
    for _ in range(4):
        _, node = problem.space.uniform_word(rng)
        spec = ruletree(problem.space.node(problem.space.key(node)))
        assert spec.size == n and not isinstance(spec, Twiddle)
        assert _numpy_error(spec, seed=n) < 1e-11, describe(spec)
    m = problem.evaluate(Config(word=problem.space.key(node)))
    assert m.status is Status.OK and m.objective is not None and m.objective > 0


def test_grammar_offers_every_rule_where_it_applies() -> None:
    rules = {" ".join(rhs) for rhs in dft_grammar(3000, 32).alternatives("DFT_3000")}
    assert {"TW_3 DFT_1000", "TW_1000 DFT_3", "pfa DFT_8 DFT_375", "pfa DFT_375 DFT_8"} <= rules
    assert not any(r.startswith(("n1", "rader", "blue")) for r in rules)
    prime = {" ".join(rhs) for rhs in dft_grammar(1009, 32).alternatives("DFT_1009")}
    assert prime == {"rader DFT_1008", "blue DFT_2048", "blue DFT_2025"}
    assert {" ".join(rhs) for rhs in dft_grammar(13, 32).alternatives("DFT_13")} == {"n1_13", "n1v_13"}


def test_vector_only_grammar_has_no_scalar_codelets_and_its_plans_are_right() -> None:
    """problem.scalar_codelets=false: every codelet rule is n1v / t1v; a drawn word still plans,
    runs and matches numpy.fft (the vector codelets' scalar tail covers loops of one)."""
    g = dft_grammar(3000, 32, scalar=False)
    terminals = set(g.terminals)
    assert not any(t.startswith(("n1_", "t1_")) for t in terminals) and {"n1v_25", "t1v_8", "buf"} <= terminals
    assert len(dft_grammar(3000, 32).terminals) > len(g.terminals)
    problem = DftProblem(size=3000, scalar_codelets=False, **QUICK)
    problem.setup(problem.device)
    assert problem.space.count_sinks() < DftProblem(size=3000, **QUICK).space.count_sinks()
    rng = np.random.default_rng(3)
    for _ in range(3):
        config = problem.space.sample(rng)
        assert "n1_" not in str(config["word"]) and "t1_" not in str(config["word"])
        m = problem.evaluate(config)
        assert m.status is Status.OK, (config, m)
    with pytest.raises(ConfigError, match="problem.scalar_codelets='no'"):
        DftProblem(size=64, scalar_codelets="no")  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", [Pfa(Leaf("n1", 4), Leaf("n1", 6)), Rader(15, Split(Twiddle("t1", 2), Leaf("n1", 7))),
                                  Rader(37, Leaf("n1", 32)), Bluestein(37, Leaf("n1", 32))], ids=describe)
def test_impossible_plans_are_refused_before_c_runs_them(spec: Spec) -> None:
    with pytest.raises(ConfigError, match="is no plan"):
        _clib.Plan(_clib.load(32), spec, _clib.Twiddles())


def test_bluestein_lengths_and_primitive_roots() -> None:
    assert bluestein_lengths(1009, (2, 3, 5, 7)) == [2025, 2048]  # 2025 = 3^4 · 5^2 >= 2017
    assert bluestein_lengths(17, (2,)) == [64]
    thirteen = (2, 3, 5, 7, 11, 13)  # 2079 = 3^3 * 7 * 11 and 20020 = 2^2 * 5 * 7 * 11 * 13 are not offered
    assert bluestein_lengths(1031, thirteen) == [2100, 4096] and bluestein_lengths(10007, thirteen) == [20160, 32768]
    for p in (3, 37, 1009, 65537):
        g = primitive_root(p)
        assert len({pow(g, r, p) for r in range(p - 1)}) == p - 1


@pytest.mark.parametrize("n", [3000, 1009])
def test_non_powers_of_two_run_from_the_command_line(n: int, tmp_path: Any) -> None:
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "searchlab", "problem=dft", f"problem.size={n}", "searcher=tag",
                           "budget.evaluations=6", f"hydra.run.dir={tmp_path}", "problem.measure.min_runs=1",
                           "problem.measure.max_runs=2", "problem.measure.min_time_s=0", "problem.batch_s=0"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "DFT_" in done.stdout + done.stderr


@pytest.mark.parametrize("n", [60, 37])
def test_dp_composes_plans_of_any_size(n: int) -> None:
    """DP's bottom-up order follows the grammar, not the size: Bluestein's DFT_M (M > p) is
    solved before DFT_p; the sub-problems that do not divide n are measured standalone."""
    from searchlab.api import optimize
    from searchlab.run.loop import Budget, StopReason
    from searchlab.searchers import DpSearcher

    problem = DftProblem(size=n, **QUICK)
    outcome = optimize(problem, DpSearcher(problem.space, direction=problem.direction), Budget(evaluations=2000))
    assert outcome.reason is StopReason.EXHAUSTED and outcome.best is not None
    assert not outcome.best.measurement.is_subproblem
    assert ruletree(problem.space.node(str(outcome.best.config["word"]))).size == n
    subs = {r.measurement.extra["subproblem"] for r in outcome.results if r.measurement.is_subproblem}
    assert (n != 37) or {"DFT_36", "DFT_128", "DFT_75"} <= subs  # Rader's p-1, Bluestein's two M
