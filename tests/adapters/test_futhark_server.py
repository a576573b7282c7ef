"""problem=futhark: real Futhark programs compiled by the real compiler (make setup installs it).

The fast tests need nothing; the ``slow`` ones compile ``programs/loopmm.fut`` once (cached
on disk by source hash and compiler version) and tune it with tiny budgets on pocl.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from searchlab.adapters.futhark import _discover as disc
from searchlab.adapters.futhark._data import outputs_match
from searchlab.adapters.futhark._program import fixed_runs
from searchlab.adapters.futhark._report import read_tuning
from searchlab.adapters.futhark._stanzas import parse_cases
from searchlab.adapters.futhark.bundled import PROGRAMS, FutharkLoopmm
from searchlab.adapters.futhark.program import BENCH_LIKE
from searchlab.api import optimize
from searchlab.core.problem import FinalizeContext
from searchlab.core.records import Candidate, FailureMode, Result, Status
from searchlab.errors import ConfigError
from searchlab.run.execution import SerialExecutor
from searchlab.run.loop import Budget
from searchlab.searchers import (
    ActiveSearcher,
    BinarySearcher,
    CmaIndexSearcher,
    ExhaustiveSearcher,
    FutharkAutotuneSearcher,
    InstrumentedSearcher,
    RandomSearcher,
    SimpleSearcher,
    TagSearcher,
)
from tests.futhark_support import HAVE_FUTHARK, served

ROOT = Path(__file__).resolve().parents[2]
needs_futhark = pytest.mark.skipif(not HAVE_FUTHARK, reason="the Futhark compiler is not installed: run make setup")
LOOPMM_CLASSES = {
    "main.suff_outer_par_0": "threshold(def, )",
    "main.suff_intra_par_1": "threshold(32, !main.suff_outer_par_0)",
    "main.suff_outer_par_2": "threshold(def, !main.suff_intra_par_1 !main.suff_outer_par_0)",
    "main.x_3": "threshold(def, main.suff_outer_par_0)",
    "main.Ry_1": "reg_tile_size",
}


# -- no compiler needed ---------------------------------------------------------------------------
def test_stanzas_of_our_programs() -> None:
    cases = parse_cases((PROGRAMS / "lud.fut").read_text(), "lud.fut", ("[64][64]f32", "[96][96]f32"))
    assert [(c.name, c.train) for c in cases] == [("[48][48]f32", True), ("[128][128]f32", True),
                                                  ("[64][64]f32", False), ("[96][96]f32", False)]
    assert all(c.auto_output and c.random_types and c.entry == "main" for c in cases)
    with pytest.raises(ConfigError, match="no datasets"):
        parse_cases((PROGRAMS / "lud.fut").read_text(), "lud.fut", ("[7]f32",))


def test_stanza_forms() -> None:
    source = ("-- ==\n-- entry: f\n-- input { 1 2 } output { 3 }\n-- input @ a.in\n-- output @ a.out\n"
              "-- nobench compiled random input { [2]i32 [3][4]f64 }\ndef f = 1\n")
    cases = parse_cases(source, "p.fut")
    assert cases[0].input_text == "1 2" and cases[0].output_text == "3" and cases[0].entry == "f"
    assert cases[1].input_file == "a.in" and cases[1].output_file == "a.out"
    assert cases[2].random_types == ("[2]i32", "[3][4]f64") and not cases[2].expects
    with pytest.raises(ConfigError, match="error"):
        parse_cases("-- ==\n-- input { 1 } error: boom\n", "p.fut")
    with pytest.raises(ConfigError, match="no `-- ==`"):
        parse_cases("def main = 1\n", "p.fut")


def test_tree_from_classes() -> None:
    classes = [c for c in (disc.parse_class(n, t) for n, t in LOOPMM_CLASSES.items()) if c]
    assert {c.name for c in classes} == set(LOOPMM_CLASSES) - {"main.Ry_1"}
    tree = {t.name: t for t in disc.build_tree(classes, default_threshold=2)}
    assert tree["main.suff_outer_par_2"].parent == "main.suff_intra_par_1"  # the deepest ancestor
    assert not tree["main.suff_outer_par_2"].branch and tree["main.x_3"].branch
    assert tree["main.suff_intra_par_1"].default == 32 and tree["main.suff_outer_par_0"].default == 2
    runs = disc.dry_assignments(tuple(tree.values()), {c.name: c for c in classes})
    assert len(runs) == 2 and runs[1]["main.suff_outer_par_0"] == disc.ALL_TRUE  # reaches main.x_3
    log = ["Compared main.suff_outer_par_0 <= 64: false.", "junk", "Compared main.suff_outer_par_0 <= 32: true."]
    assert disc.comparisons(log) == [("main.suff_outer_par_0", 64, False), ("main.suff_outer_par_0", 32, True)]


def test_a_zero_threshold_means_the_default_as_in_a_tuning_file() -> None:
    """Futhark's runtime replaces a tuning parameter of 0 by its default at start-up (a 0 read from
    a .tuning file), while set_tuning_param on a running server keeps it: measured live, 0 would be
    a configuration no .tuning file gives (docs/futhark.md). So 0 is sent as the default, and the
    E_par value 0 (LUD's last loop step) gives no plateau of its own."""
    from searchlab.adapters.futhark._discover import positive
    from searchlab.adapters.futhark.program import FutharkServerProblem
    from searchlab.core.spaces import Threshold, ThresholdDataset, ThresholdTree

    assert positive({"a": (0, 256, 0, 1024), "b": (0,)}) == {"a": (256, 1024), "b": ()}
    problem = object.__new__(FutharkServerProblem)  # split() needs only the tree and the size names
    problem.tree = ThresholdTree((Threshold("t", default=2), Threshold("u", default=32)),
                                 (ThresholdDataset("d", {"t": (256,), "u": (16,)}),))
    problem._size_by_name = {}
    problem.default_threshold = 2  # the device's (-L "Default threshold: 2"), not u's own default 32
    assert problem.split({"t": 0, "u": 0}) == ({"t": 2, "u": 2}, ())
    assert problem.split({"t": 5, "u": 17}) == ({"t": 5, "u": 17}, ())


def test_output_check_tolerance() -> None:
    e = [np.array([1.0, 2.0], dtype=np.float32)]
    assert outputs_match([e[0] + 1e-5], e, 1e-3, 1e-3) is None
    assert outputs_match([e[0] + 1], e, 1e-3, 1e-3) == (
        "output 0: wrong output: got 2 at index 0, want 1 (tolerance rtol 0.001, atol 0.001); 2 of 2 values differ")
    assert "shape" in str(outputs_match([np.zeros(3)], e, 1e-3, 1e-3))


def test_without_compiler_one_line_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": "/usr/bin:/bin", "FUTHARK": str(tmp_path / "no-futhark")}
    proc = subprocess.run([sys.executable, "-m", "searchlab", "problem=futhark",
                           f"problem.program={PROGRAMS / 'loopmm.fut'}", "executor=serial",
                           f"hydra.run.dir={tmp_path}"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "make setup" in lines[0] and "Traceback" not in proc.stderr


# -- the real compiler --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def loopmm() -> Iterator[tuple[FutharkLoopmm, SerialExecutor]]:
    with served(lambda: FutharkLoopmm(measure=fixed_runs(BENCH_LIKE, 3), validation_runs=3)) as pair:
        yield pair


@pytest.mark.slow
@pytest.mark.opencl
def test_space_and_one_evaluation(loopmm: tuple[FutharkLoopmm, SerialExecutor]) -> None:
    problem, executor = loopmm
    space = problem.tree
    assert len(space.thresholds) >= 2 and any(space.is_loop_based(n) for n in space.names)
    assert all(text.startswith("threshold(") for text in problem.classes.values())
    assert [d.name for d in space.validation_datasets()] == ["[128][128]f32", "[192][192]f32"]
    result = executor.call("evaluate", space.all_false())
    assert result.status is Status.OK and set(result.datasets) == {"[96][96]f32", "[256][256]f32"}
    compared = [line for line in result.log if line.startswith("Compared ")]
    assert compared and all(line.endswith(": false.") for line in compared)  # every comparison false
    assert len(result.extra["dataset_samples"]["[96][96]f32"]) == 3


@pytest.mark.slow
@pytest.mark.opencl
def test_timed_runs_set_thresholds_as_an_evaluation_or_as_given(loopmm: tuple[FutharkLoopmm, SerialExecutor]) -> None:
    """The door bench/futhark_check.py times through: one dataset's runs on the timing server after a warm-up,
    thresholds set live with a 0 sent as the default (as a .tuning file gives it) or sent as given."""
    problem, executor = loopmm
    zeros = {name: 0 for name in problem.tree.names}
    as_evaluated = executor.call("timed_runs", zeros, "[96][96]f32", 3)
    as_given = executor.call("timed_runs", zeros, "[96][96]f32", 2, True)
    assert len(as_evaluated) == 3 and len(as_given) == 2
    assert all(isinstance(t, float) and t > 0 for t in as_evaluated + as_given)


SEARCHERS: dict[str, Any] = {
    "simple": SimpleSearcher, "binary": BinarySearcher, "active": ActiveSearcher, "cma_index": CmaIndexSearcher,
    "instrumented": InstrumentedSearcher, "futhark_autotune": FutharkAutotuneSearcher,
    "exhaustive": ExhaustiveSearcher, "random": RandomSearcher, "tag": TagSearcher,
}


@pytest.mark.slow
@pytest.mark.opencl
@pytest.mark.parametrize("name", list(SEARCHERS))
def test_every_threshold_tuner_and_generic_searchers_run(loopmm: tuple[FutharkLoopmm, SerialExecutor],
                                                         name: str) -> None:
    problem, executor = loopmm
    outcome = optimize(problem, SEARCHERS[name](problem.space, seed=0), Budget(evaluations=4), executor=executor)
    assert outcome.results and outcome.best is not None
    assert not [r for r in outcome.results if r.measurement.failure_mode is FailureMode.WRONG_OUTPUT]


@pytest.mark.slow
@pytest.mark.opencl
def test_tuning_file_accepted_by_futhark_bench(loopmm: tuple[FutharkLoopmm, SerialExecutor], tmp_path: Path) -> None:
    problem, executor = loopmm
    outcome = optimize(problem, FutharkAutotuneSearcher(problem.tree, seed=0), Budget(evaluations=6),
                       executor=executor)
    report = problem.finalize(FinalizeContext(tmp_path / "run", outcome.best, outcome.results, executor.call,
                                              len(outcome.results), outcome.wall_time_s))
    tuning = read_tuning(report["candidate_tuning_file"])  # the best found, written whatever the verdict
    assert set(tuning) == set(problem.space.names)
    assert (tmp_path / "run" / "loopmm.fut.tuning").exists() is report["recommended"]
    assert set(report["validation"]) == {"untuned", "all-false", "tuned"}
    assert all(v["ci95_ms"][0] <= v["median_ms"] <= v["ci95_ms"][1] for v in report["validation"]["tuned"].values())
    bench = tmp_path / "bench"
    bench.mkdir()
    shutil.copy(problem.source, bench / "loopmm.fut")
    shutil.copy(problem.exe, bench / "loopmm")
    shutil.copy(report["candidate_tuning_file"], bench / "loopmm.fut.tuning")
    proc = subprocess.run(["futhark", "bench", "--backend=opencl", "--skip-compilation", "-r", "1",
                           f"--spec-file={report['spec_file']}", "loopmm.fut"],
                          capture_output=True, text=True, cwd=bench, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "using loopmm.fut.tuning" in proc.stdout


@pytest.mark.slow
@pytest.mark.opencl
def test_no_tuning_file_when_untuned_is_not_beaten(loopmm: tuple[FutharkLoopmm, SerialExecutor],
                                                   tmp_path: Path) -> None:
    """A search whose best is all-false (the fully flattened versions: ≈ 5x slower than untuned on
    loopmm, docs/futhark.md) must keep the default: no .tuning, and the report says so."""
    problem, executor = loopmm
    config = problem.space.all_false()
    result = Result(Candidate(0, config, config, {}), executor.call("evaluate", config))
    run = tmp_path / "run"
    (run).mkdir()
    (run / "loopmm.fut.tuning").write_text("stale=1\n")  # a file an earlier finish left (resume)
    report = problem.finalize(FinalizeContext(run, result, [result], executor.call, 1, 1.0, rounds=3, max_rounds=12))
    assert report["recommended"] is False and report["tuning_file"] is None
    assert not (run / "loopmm.fut.tuning").exists()
    assert read_tuning(report["candidate_tuning_file"]) == dict(config)
    v = report["versus_default"]
    assert v["basis"] == "validation" and 8 <= v["pairs"] <= 12 and v["ci95"][1] < 1  # measured until measurably slower
    # independent of the comparison code: the table's own medians say all-false is the slower one
    rows = report["validation"]
    assert sum(d["median_ms"] for d in rows["tuned"].values()) > sum(d["median_ms"] for d in rows["untuned"].values())
    from searchlab.run.verdict import build_verdict

    summary = {"objective_name": "time_s", "best": {"objective": result.objective, "evaluation": 1},
               "report": report, "confirm": None, "stop_reason": "evaluations", "evaluations": 1}
    text = build_verdict(summary, 1, None, 1)
    assert "slower than untuned" in text and "kept the default" in text and "loopmm.candidate.tuning" in text
