"""The Futhark-style OpenCL programs (paper 003): every version against numpy, failures,
the Futhark-compatible surface (names, classes, log, .tuning) and the run-end report.
Runs on any OpenCL device (pocl on CI)."""

from __future__ import annotations

import os

os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")  # steadier timings on shared cores

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.futhark import FutharkProgram, Loopmm, Lud, Matmul
from searchlab.adapters.futhark._kernels import LUD_SOURCE
from searchlab.adapters.futhark._program import FIXED_10, fixed_runs
from searchlab.adapters.futhark._report import read_tuning, write_tuning
from searchlab.adapters.futhark._runtime import Execution, Limits
from searchlab.api import optimize
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.problem import FinalizeContext
from searchlab.core.records import Candidate, Config, FailureMode, Status
from searchlab.errors import ConfigError, EvaluationError
from searchlab.run.execution import SerialExecutor
from searchlab.run.loop import Budget
from searchlab.searchers import InstrumentedSearcher, SimpleSearcher
from searchlab.searchers._threshold.common import THRESHOLD_MAX, parse_comparisons

pytestmark = pytest.mark.opencl


def started(problem: FutharkProgram) -> Iterator[tuple[FutharkProgram, SerialExecutor]]:
    executor = SerialExecutor()
    executor.start(problem)
    yield problem, executor
    executor.close()


@pytest.fixture(scope="module")
def lud() -> Iterator[tuple[FutharkProgram, SerialExecutor]]:
    yield from started(Lud(measure=fixed_runs(FIXED_10, 3)))


@pytest.fixture(scope="module")
def matmul() -> Iterator[tuple[FutharkProgram, SerialExecutor]]:
    yield from started(Matmul(measure=fixed_runs(FIXED_10, 3)))


@pytest.fixture(scope="module")
def loopmm() -> Iterator[tuple[FutharkProgram, SerialExecutor]]:
    yield from started(Loopmm(measure=fixed_runs(FIXED_10, 1)))


def level_configs(problem: FutharkProgram) -> list[tuple[Config, set[str]]]:
    """For i = 0, 1, ...: every construct takes its i-th version (or the flattened one)."""
    out = []
    for i in range(max(len(c.levels) for c in problem.chains) + 1):
        config = {n: THRESHOLD_MAX for n in problem.space.names}
        versions = set()
        for chain in problem.chains:
            if i < len(chain.levels):
                config[problem.names[chain.construct][i]] = 1
            versions.add(chain.versions[min(i, len(chain.levels))])
        out.append((Config(config), versions))
    return out


@pytest.mark.parametrize("name", ["lud", "matmul", "loopmm"])
def test_every_version_matches_numpy(name: str, request: pytest.FixtureRequest) -> None:
    problem, _ = request.getfixturevalue(name)
    problem.check = "always"
    try:
        for config, versions in level_configs(problem):
            m = problem.evaluate(config)
            assert m.status is Status.OK, m.message
            ran = {r["version"] for recs in m.extra["instrumentation"].values() for r in recs}
            assert versions <= ran  # with everything fitting on the device, each version ran
            problem.validation_times(dict(config))  # raises on a wrong validation output
    finally:
        problem.check = "first"


class BrokenLud(Lud):
    """LUD whose thread-per-element internal update subtracts twice."""

    source = LUD_SOURCE.replace("  m[IDX(row, col)] -= s;\n}\n\n__kernel void internal_elem_group",
                                "  m[IDX(row, col)] -= 2.0f * s;\n}\n\n__kernel void internal_elem_group")


def test_wrong_output_is_a_failed_evaluation() -> None:
    assert BrokenLud.source != LUD_SOURCE
    for problem, executor in started(BrokenLud(measure=fixed_runs(FIXED_10, 1))):
        names = problem.names["internal"]
        broken = Config({**{n: THRESHOLD_MAX for n in problem.space.names}, names[2]: 1})
        executor.submit(Candidate(0, broken, broken))
        [result] = executor.collect(timeout=None)  # through the worker, as in a search
        m = result.measurement
        assert m.status is Status.FAILED and m.failure_mode is FailureMode.WRONG_OUTPUT
        assert "internal.thread_per_element" in m.message
        assert problem.evaluate(problem.space.all_false()).status is Status.OK


def test_local_memory_and_group_size_checked(lud: tuple[FutharkProgram, Any]) -> None:
    problem, _ = lud
    rt = Execution({c.construct: c for c in problem.chains}, problem.names, {}, problem.cl, problem._kernels,
                   problem.limits)
    with pytest.raises(EvaluationError) as info:
        rt.launch("upper_group", (8,), (8,), None, local_bytes=problem.cl.local_mem_size + 1)
    assert info.value.mode is FailureMode.RESOURCES
    saved = problem.limits
    assert saved is not None
    problem.limits = Limits(max_group=4, local_mem=saved.local_mem, max_alloc=saved.max_alloc)
    try:  # the intra-group versions no longer fit: compared (and logged) but skipped
        intra = [n for n in problem.space.names if "intra" in n]
        m = problem.evaluate(Config({**{n: THRESHOLD_MAX for n in problem.space.names}, **dict.fromkeys(intra, 1)}))
        assert m.status is Status.OK
        ran = {r["version"] for recs in m.extra["instrumentation"].values() for r in recs}
        assert not any("group_per" in v for v in ran)
        assert any(f"Compared {intra[0]} <= " in line and line.endswith("true.") for line in m.log)
    finally:
        problem.limits = saved


def test_log_and_dataset_values_agree(loopmm: tuple[FutharkProgram, Any]) -> None:
    problem, _ = loopmm
    m = problem.evaluate(problem.space.all_false())  # every comparison is made and false
    logged = parse_comparisons(m.log)
    for d in problem.space.train_datasets():
        for name in problem.space.names:
            seen = [v for n, v in logged[d.name] if n == name]
            assert seen == list(d.values[name])
    assert all(line.endswith(": false.") for line in m.log if line.startswith("Compared"))


def test_futhark_surface(lud: tuple[FutharkProgram, Any], tmp_path: Path) -> None:
    problem, _ = lud
    params = problem.print_params()
    assert params[0] == "main.suff_outer_par_0 (threshold(def, ))"
    assert "main.suff_outer_par_6 (threshold(def, !main.suff_outer_par_4 !main.suff_intra_par_5))" in params
    space = problem.space
    assert space.default_config()["main.suff_outer_par_0"] == 32768
    assert space.default_config()["main.suff_intra_par_1"] == 32  # intraMinInnerPar
    loop = {n for n in space.names if space.is_loop_based(n)}
    assert loop == {n for n in space.names if "outer" in n} and len(loop) < len(space.names)
    assert {d.name: d.train for d in space.datasets} == {"16.in": True, "32.in": False, "48.in": True,
                                                         "64.in": False, "96.in": True}
    path = tmp_path / "lud.fut.tuning"
    write_tuning(path, {"b": 2, "a": 1})
    assert path.read_text() == "a=1\nb=2\n" and read_tuning(path) == {"a": 1, "b": 2}
    (tmp_path / "bad.tuning").write_text("a=x\n")
    with pytest.raises(ConfigError, match="not an integer"):
        read_tuning(tmp_path / "bad.tuning")


def test_gpu_preset_follows_listing_4_1() -> None:
    problem = Lud(preset="gpu")
    assert [(d.name, d.train) for d in problem.space.datasets] == [
        ("16.in", True), ("32.in", False), ("64.in", True), ("128.in", False), ("256.in", True),
        ("512.in", False), ("1024.in", True), ("2048.in", False), ("4096.in", True)]
    big = problem.space.datasets[-1]
    assert len(big.values["main.suff_outer_par_4"]) == 4096 // 16 - 1  # one E_par per loop iteration


def test_weighting_relative_to_untuned() -> None:
    """§2.1's weighted sum: each training dataset counts relative to its untuned time."""
    for problem, _ in started(Matmul(measure=fixed_runs(FIXED_10, 5), weighting="baseline")):
        m = problem.evaluate(problem.space.default_config())
        weights = m.extra["weights"]
        assert m.objective == pytest.approx(sum(weights[d] * t for d, t in m.datasets.items()))
        assert set(weights) == set(m.datasets) and all(w > 0 for w in weights.values())
        # each dataset about 1 (its untuned time over itself); load that starts between the baseline
        # and this measurement moves a ratio several-fold, so only its order of magnitude is checked
        assert m.objective is not None and 0.1 * len(weights) < m.objective < 10.0 * len(weights)


@pytest.mark.parametrize(("kwargs", "match"), [({"preset": "tpu"}, "preset"), ({"measure": {"min_runs": 0}}, "min_runs"),
                                               ({"validation_runs": -1}, "validation_runs"),
                                               ({"block": 3}, "block"), ({"check": "never"}, "check"),
                                               ({"weighting": "sqrt"}, "weighting")])
def test_bad_parameters_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Lud(**kwargs)


def test_simple_tuner_one_benchmark_per_version_on_matmul(matmul: tuple[FutharkProgram, SerialExecutor]) -> None:
    problem, executor = matmul
    outcome = optimize(problem, SimpleSearcher(problem.space, seed=0), Budget(evaluations=50), executor=executor)
    tuning = [r for r in outcome.results if not r.candidate.meta.get("final")]
    assert len(tuning) == problem.code_versions == 5
    assert all(r.ok for r in outcome.results)


def test_instrumented_on_lud_and_the_report(lud: tuple[FutharkProgram, SerialExecutor], tmp_path: Path) -> None:
    problem, executor = lud
    outcome = optimize(problem, InstrumentedSearcher(problem.space, seed=0), Budget(evaluations=50),
                       executor=executor)
    assert len(outcome.results) <= problem.code_versions + 2
    reference = tmp_path / "reference.tuning"
    write_tuning(reference, dict(problem.space.all_false()))
    problem.reference_tuning = str(reference)
    try:
        report = problem.finalize(FinalizeContext(tmp_path, outcome.best, outcome.results, executor.call,
                                                  len(outcome.results), outcome.wall_time_s))
    finally:
        problem.reference_tuning = None
    tuning = read_tuning(report["candidate_tuning_file"])  # the tuner's answer, written whatever the verdict
    assert (tmp_path / "lud.fut.tuning").exists() is report["recommended"]
    assert report["recommended"] is (report["versus_default"]["ci95"][0] > 1)  # only a measurable gain
    final = [r for r in outcome.results if r.candidate.meta.get("final")][-1]
    assert tuning == dict(final.config)
    assert Path(report["comparison_log"]).read_text().startswith("# dataset 16.in\nCompared ")
    rows = report["validation_ms"]
    assert set(rows) == {"untuned", "all-false", "tuned", "exhaustive"}
    assert set(rows["tuned"]) == {"32.in", "64.in"}
    assert "tuned / exhaustive" in report["report_text"] and report["tuning_runs"] == len(outcome.results) - 1


def test_the_shared_protocol_decides_how_many_runs(matmul: tuple[FutharkProgram, Any]) -> None:
    """Issue 21: the imitations measure through searchlab.core.measure.measure, so every field of
    ``problem.measure`` counts: a time goal never reached runs to ``max_runs``, a fixed count is
    exact, and the warm-up run is checked but not kept."""
    problem, _ = matmul
    saved = problem.protocol
    train = [d.name for d in problem.space.train_datasets()]
    try:
        problem.protocol = MeasurementProtocol(min_runs=2, max_runs=6, min_time_s=1e9, target_rel_ci=0.0, warmup=0)
        m = problem.evaluate(problem.space.default_config())
        assert {d: len(s) for d, s in m.extra["dataset_samples"].items()} == dict.fromkeys(train, 6)
        assert m.sensors["runs"] == 6 * len(train) and len(m.samples) == 6
        problem.protocol = fixed_runs(saved, 2)
        m = problem.evaluate(problem.space.default_config())
        assert {d: len(s) for d, s in m.extra["dataset_samples"].items()} == dict.fromkeys(train, 2)
    finally:
        problem.protocol = saved


def test_options_are_the_constructors_and_params_record_them() -> None:
    """Issue 21: no *Config class; Lud forwards the shared options to FutharkProgram, and its
    params (the fingerprint) hold all of them, the block size as used."""
    import searchlab.adapters.futhark as futhark

    assert not [n for n in dir(futhark) if n.endswith("Config")]
    lud = Lud(preset="cpu", measure={"min_runs": 4, "max_runs": 4, "min_time_s": 0.0, "target_rel_ci": 0.0})
    assert lud.protocol == MeasurementProtocol(min_runs=4, max_runs=4, min_time_s=0.0, target_rel_ci=0.0)
    assert lud.params["measure"]["min_runs"] == 4 and lud.params["preset"] == "cpu" and "seed" in lud.params
    assert lud.validation_runs == 12  # 3 x measure.min_runs
    assert Lud().fingerprint() == Lud(block=8).fingerprint() != Lud(block=4).fingerprint()
    assert Lud().fingerprint() != Lud(measure=fixed_runs(FIXED_10, 3)).fingerprint()
