"""Issue 46 item 2: honest digits, one recommended result, a verdict that hands over, progress in
every phase, and the run plot's units, ticks and confirm markers. Pure: no device, no Ray."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest

from searchlab.core.records import Candidate, Config, Direction, Measurement, Result
from searchlab.core.speedup import confirmed_choice, decide, ordinal, ratio_digits, show_interval, show_speedup
from searchlab.run.confirm_report import progress_text
from searchlab.run.loop import Budget, LoopState
from searchlab.run.progress import ProgressReporter, eta_end
from searchlab.run.recommend import recommended_entry
from searchlab.run.verdict import build_verdict


# -- honest digits ----------------------------------------------------------------------------------
def test_a_decided_bound_never_prints_as_one() -> None:
    assert show_interval(1.0039, 2.24) == "[1.004, 2.240]"  # issue 46: "[1.00, 2.24]" read as undecided
    assert show_interval(0.9996, 1.2) == "[0.9996, 1.2000]"
    assert show_interval(1.0, 2.33) == "[1.00, 2.33]"  # an exact 1 (undecided) keeps two decimals
    assert show_interval(1.45, 1.54) == "[1.45, 1.54]"
    # an interval that bounds nothing yet (fewer than 8 rounds) says so (issue 54: "[0.00, inf]" after 5 rounds)
    assert show_interval(0.0, float("inf")) == "(too few rounds to bound)"
    assert show_speedup(1.27, 0.0, float("inf")) == ("1.27", "(too few rounds to bound)")
    assert show_speedup(1.5, 1.0039, 2.24) == ("1.500", "[1.004, 2.240]")
    assert ratio_digits(1.0 + 1e-9) == 9


def test_the_same_printed_bound_never_means_decided_and_undecided() -> None:
    """Over a grid of bounds near 1: a printed lower bound determines whether it excludes 1."""
    printed: dict[str, set[bool]] = {}
    steps = [1 + d * s for d, s in itertools.product(range(-30, 31), (1e-4, 3e-4, 1e-3, 1e-2))]
    for lo in steps:
        text = show_interval(lo, 3.0).split(",")[0].lstrip("[")
        printed.setdefault(text, set()).add(decide([lo, 3.0], 0.0) == "faster")
        assert text.rstrip("0").rstrip(".") != "1" or lo == 1.0
    assert all(len(v) == 1 for v in printed.values())


def test_the_confirmed_choice_cannot_read_as_third_fastest() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 103)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "103rd"]
    assert confirmed_choice(3, 3) == "the 3rd-best single measurement of the search, fastest of the 3 re-measured"
    assert confirmed_choice(1, 3).startswith("the search's best single measurement, fastest")
    assert "#" not in confirmed_choice(2, 4)


# -- one recommended result -------------------------------------------------------------------------
C = {"basis": "validation", "speedup": 1.46, "ci95": [1.0039, 1.65], "pairs": 9, "method": "anytime", "datasets": {}}


def _futhark(tmp_path: Path, written: bool) -> dict[str, object]:
    tuning = tmp_path / "lud.fut.tuning"
    if written:
        tuning.write_text("a=17\nb=256\n")
    report = {"recommended": written, "tuning_file": str(tuning) if written else None, "tuned": {"a": 17, "b": 256},
              "untuned": {"a": 0, "b": 0}, "versus_default": C, "chosen": confirmed_choice(3, 3),
              "recommendation": "measurably faster than untuned" if written else "undecided: the interval ...",
              "candidate_tuning_file": str(tmp_path / "lud.candidate.tuning"),
              "use_command": f"/x/futhark bench --backend=opencl {tmp_path / 'lud.fut'}" if written else None}
    return {"objective_name": "time_s", "best": {"objective": 0.0067, "evaluation": 21, "description": "a=16",
                                                 "config": {"a": 16, "b": 256}},
            "report": report, "confirm": None, "stop_reason": "evaluations", "evaluations": 40}


def test_recommended_is_the_written_tuning_file(tmp_path: Path) -> None:
    from searchlab.adapters.futhark._report import read_tuning

    s = _futhark(tmp_path, True)
    r = recommended_entry(s)
    assert r is not None and r["config"] == read_tuning(tmp_path / "lud.fut.tuning") and not r["is_default"]
    assert r["speedup"] == 1.46 and r["ci95"] == [1.0039, 1.65] and r["basis"] == "validation"
    assert r["tuning_file"] == str((tmp_path / "lud.fut.tuning").resolve())
    assert r["config"] != s["best"]["config"]  # type: ignore[index]  # the search's best is not what was written
    verdict = build_verdict(s, 40, 10**15, 40)
    assert f"wrote {(tmp_path / 'lud.fut.tuning').resolve()}:" in verdict
    assert "\nuse it: /x/futhark bench --backend=opencl " in verdict and "[1.004, 1.650]" in verdict
    assert "3rd-best single measurement of the search" in verdict


def test_nothing_written_recommends_the_default(tmp_path: Path) -> None:
    r = recommended_entry(_futhark(tmp_path, False))
    assert r is not None and r["is_default"] and r["config"] == {"a": 0, "b": 0} and r["tuning_file"] is None
    assert r["best_candidate"] == {"a": 17, "b": 256} and r["speedup"] is None


def _confirm(decision: str, lo: float) -> dict[str, object]:
    entry = {"median": 0.004, "ci95": [0.0039, 0.0041], "samples": 12}
    c = {"basis": "tuning", "speedup": 1.2, "ci95": [lo, 1.4], "pairs": 12}
    return {"objective_name": "time_s", "best": {"objective": 0.0038, "evaluation": 3, "description": "x=1",
                                                 "config": {"x": 1}}, "report": {},
            "confirm": {"k": 2, "candidates": [{"rank": 1, "config": {"x": 1}}, {"rank": 2, "config": {"x": 2}}],
                        "best": {"rank": 2, "config": {"x": 2}, **entry}, "default": {"config": {"x": 0}, **entry},
                        "versus_default": c, "decision": decision}}


def test_recommended_follows_the_confirm_phase_not_the_search() -> None:
    faster = recommended_entry(_confirm("faster", 1.01))
    assert faster is not None and faster["config"] == {"x": 2} and faster["ci95"] == [1.01, 1.4]
    undecided = recommended_entry(_confirm("undecided", 0.98))
    assert undecided is not None and undecided["is_default"] and undecided["config"] == {"x": 0}
    assert undecided["why"].startswith("undecided")
    alone = {"best": {"config": {"x": 1}, "objective": 2.0}, "report": {}, "confirm": None}
    assert recommended_entry(alone)["config"] == {"x": 1}  # type: ignore[index]
    assert recommended_entry({"best": None, "report": {}, "confirm": None}) is None


# -- progress in every phase ------------------------------------------------------------------------
def test_eta_counts_to_the_space_when_it_is_smaller_than_the_budget() -> None:
    assert eta_end(100, 32, 10) == 32 and eta_end(100, 10**15, 10) == 100 and eta_end(None, 32, 3) == 32
    assert eta_end(100, 32, 40) == 100  # a searcher that revisits configurations goes on to the budget
    progress = ProgressReporter("log", "time_s", io.StringIO(), space_size=32)
    state = LoopState(Direction.MINIMIZE)
    state.started -= 16.0
    for i in range(16):
        c = Config({"x": i})
        state.add(Result(Candidate(i, c, c), Measurement.ok(1.0), t_end=state.started + i))
    assert progress.line(state, Budget(evaluations=100)).endswith("eta 0:16")  # 16 left at 1 s each, not 84


def test_later_phases_print_at_once_then_at_the_search_pace() -> None:
    out = io.StringIO()
    progress = ProgressReporter("log", "time_s", out, log_every_s=5.0)
    calls = []
    for i in range(3):
        progress.phase("confirm", lambda i=i: calls.append(i) or f"round {i + 1}")  # type: ignore[func-returns-value]
    progress.phase("validation", lambda: "round 1 of at most 40")
    progress.phase("writing", lambda: "summary.json", final=True)
    assert out.getvalue().splitlines() == ["searchlab: confirm: round 1", "searchlab: validation: round 1 of at most 40",
                                           "searchlab: writing: summary.json"]
    assert calls == [0]  # a line is built only when shown


def test_confirm_progress_names_the_round_and_the_interval() -> None:
    default, best = Config({"x": 0}), Config({"x": 1})
    results = []
    for n in range(12):
        for c, v in ((default, 10.0), (best, 8.0 - 0.01 * n)):
            results.append(Result(Candidate(-1 - len(results), c, c, {"phase": "confirm", "round": n}),
                                  Measurement.ok(v)))
    text = progress_text(results, [default, best], default, Direction.MINIMIZE, 13, 40, 12.0, 60.0)
    assert text.startswith("round 13 of at most 40, 2 configurations each; 24 measurements, elapsed 0:12 (cap 1:00)")
    assert "best vs default 1.2" in text and "(faster)" in text


# -- the run plot -----------------------------------------------------------------------------------
def test_plot_has_units_integer_ticks_and_the_confirm_markers() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from searchlab.run.plot import figure, markers, y_axis

    results = []
    for i, v in enumerate([0.0070, 0.0065, 0.0068]):
        c = Config({"x": i})
        results.append(Result(Candidate(i, c, c), Measurement.ok(v)))
    summary = {"direction": "minimize", "objective_name": "time_s", "best": {"objective": 0.0065},
               "problem": "lud", "searcher": "tag", "seed": 0, "stop_reason": "evaluations",
               "confirm": {"best": {"median": 0.0068, "ci95": [0.0067, 0.0069], "samples": 30, "rounds": 10},
                           "default": {"median": 0.0090, "ci95": [0.0088, 0.0093], "samples": 30, "rounds": 10}}}
    assert y_axis(summary) == ("time, ms (lower is better)", pytest.approx(1e3))
    # never "confirmed" for what was not decided (issue 54): the decision is said, or "undecided"
    assert [m[0] for m in markers(summary)] == ["best of the search (re-measured in 10 rounds; undecided against "
                                                "the default)", "default (re-measured in 10 rounds)"]
    assert markers({**summary, "confirm": {**summary["confirm"], "decision": "faster"}})[0][0] == \
        "best of the search (re-measured in 10 rounds; faster than the default)"
    fig = figure(summary, results)
    try:
        ax = fig.axes[0]
        labels = ax.get_legend_handles_labels()[1]
        assert not any("confirmed" in label for label in labels)
        assert "default (re-measured in 10 rounds) 9" in labels
        assert ax.get_ylabel() == "time, ms (lower is better)"
        fig.canvas.draw()
        ticks = [t for t in ax.get_xticks() if 0.5 <= t <= 3.5]
        assert ticks and all(float(t).is_integer() for t in ticks)
        assert min(ax.get_ylim()) < 6.5 < max(ax.get_ylim()) < 100  # plotted in ms, not seconds
    finally:
        plt.close(fig)
    assert y_axis({"objective_name": "gflops", "direction": "maximize"}) == ("gflops (higher is better)", 1.0)


def test_a_slow_step_beats_and_a_fast_one_stays_quiet() -> None:
    import time

    from searchlab.core.heartbeat import heartbeat

    quiet, loud = io.StringIO(), io.StringIO()
    with heartbeat("prepare", "compiling", first_s=30.0, stream=quiet):
        pass
    with heartbeat("prepare", "compiling lud.fut", every_s=0.01, first_s=0.0, stream=loud):
        time.sleep(0.1)
    assert quiet.getvalue() == ""
    assert loud.getvalue().startswith("searchlab: prepare: compiling lud.fut (0 s)\n")


def test_the_command_that_uses_the_tuning_file_is_pasteable(tmp_path: Path) -> None:
    """futhark bench --tuning takes an extension, not a file: a bundled program is copied beside its
    .tuning in the run directory; a program of the user's gets the file through its own --tuning."""
    import shlex
    from types import SimpleNamespace

    from searchlab.adapters.futhark._report import use_command

    source = tmp_path / "pkg" / "lud.fut"
    source.parent.mkdir()
    source.write_text("-- a program\n")
    run = tmp_path / "run dir"
    run.mkdir()
    tuning = run / "lud.fut.tuning"

    class Bundled(SimpleNamespace):
        default_program = source

    bundled = Bundled(binary=str(tmp_path / "no such" / "futhark"), backend="opencl", source=source.resolve())
    assert shlex.split(use_command(bundled, run, tuning)) == [bundled.binary, "bench", "--backend=opencl",
                                                              str(run / "lud.fut")]
    assert (run / "lud.fut").read_text() == "-- a program\n"  # beside lud.fut.tuning: futhark bench finds it
    own = SimpleNamespace(binary=bundled.binary, backend="c", source=source.resolve())
    assert shlex.split(use_command(own, run, tuning)) == [bundled.binary, "bench", "--backend=c", "--no-tuning",
                                                          f"--pass-option=--tuning={tuning}", str(source)]
