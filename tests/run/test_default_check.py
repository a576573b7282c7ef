"""Never worse than doing nothing: the default is measured in the confirm phase, the confirmed best
is compared with it paired by round, and only a measurable gain is recommended; every run ends
with a verdict (searchlab.run.confirm, searchlab.run.verdict)."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.knobs import KernelTunerCache, load_kernel_tuner_cache
from searchlab.core.records import Candidate, Config, Direction, Measurement, Result, Status
from searchlab.core.speedup import recommended, show_interval
from searchlab.core.units import run_time_unit, show
from searchlab.run.confirm import paired_speedup
from searchlab.run.lifecycle import execute
from searchlab.run.summary import format_summary
from searchlab.run.verdict import stop_words
from searchlab.study.execution.grid import _compose_run
from tests.doubles import register_problem

KT = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"
TABLE = load_kernel_tuner_cache(KT)
OK_ROWS = sorted(((m.objective, c) for c, m in TABLE.rows.items() if m.status is Status.OK and m.objective),
                 key=lambda t: t[0])
PICK: dict[str, Config] = {}  # the default the test double declares


class DefaultedCache(KernelTunerCache):
    """A replay whose table declares a default configuration (the hook under test)."""

    def default_config(self) -> Config | None:
        return PICK.get("default")



@pytest.fixture
def registered_double(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only registered classes are built from a config (searchlab.registry): register the test double."""
    register_problem(monkeypatch, "defaulted_cache", DefaultedCache, "tests/run/test_default_check.py")


def _run(run_dir: Path, *overrides: str) -> dict[str, Any]:
    cfg = _compose_run(["problem=kernel_tuner_cache", f"problem.path={KT}", "searcher=random", "executor=serial",
                        "progress=off", "plot=false", *overrides])
    cfg["problem"]["_target_"] = f"{__name__}.DefaultedCache"
    return execute(cfg, run_dir, quiet=True)


def _confirm_rows(run_dir: Path) -> list[tuple[str, dict[str, Any], float | None]]:
    with sqlite3.connect(run_dir / "results.db") as conn:
        rows = conn.execute("SELECT config_key, meta, objective FROM evaluations WHERE candidate_id < 0 ORDER BY id")
        return [(k, json.loads(m), o) for k, m, o in rows.fetchall()]


@pytest.mark.usefixtures("registered_double")
def test_default_that_is_best_is_kept_and_the_summary_says_so(tmp_path: Path) -> None:
    PICK["default"] = OK_ROWS[0][1]  # the table's fastest configuration
    summary = _run(tmp_path / "run", "problem.sample_noise=true", "budget.evaluations=15", "seed=2",
                   "confirm.k=3", "confirm.rounds=5")
    rows = _confirm_rows(tmp_path / "run")
    default_rows = [r for r in rows if r[1].get("default")]
    c = summary["confirm"]
    rounds = c["rounds"]
    assert 5 < rounds <= 40 and c["stopped"] == "decided"  # five rounds cannot decide; it measured on until decided
    assert len(rows) == 4 * rounds and len(default_rows) == rounds  # the default measured in every round
    assert {r[0] for r in default_rows} == {PICK["default"].key}
    assert sorted(r[1]["round"] for r in default_rows) == list(range(rounds))
    assert c["decision"] == "slower" and c["versus_default"]["ci95"][1] < 1
    assert c["default"]["config"] == dict(PICK["default"])
    assert all(e["config"] != dict(PICK["default"]) for e in c["candidates"])  # not counted twice
    assert not recommended(c["versus_default"]) and c["versus_default"]["ci95"][0] <= 1
    assert "keep the default: even the fastest of the 3 re-measured is measurably slower than the default" \
        in summary["verdict"]
    interval = show_interval(*c["versus_default"]["ci95"], c["versus_default"]["speedup"])
    text = format_summary(summary, tmp_path / "run")  # one story: the confirm lines state the verdict's interval
    assert interval in text and interval in summary["verdict"]
    assert summary["recommended"]["is_default"] and summary["recommended"]["config"] == dict(PICK["default"])
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["verdict"] == summary["verdict"]


@pytest.mark.usefixtures("registered_double")
def test_clearly_better_best_is_recommended_with_interval_above_one(tmp_path: Path) -> None:
    slow_value, slow = OK_ROWS[int(len(OK_ROWS) * 0.9)]  # a default 10 % from the slow end
    PICK["default"] = slow
    summary = _run(tmp_path / "run", "problem.sample_noise=true", "budget.evaluations=30", "seed=1",
                   "confirm.k=2", "confirm.rounds=5")
    v = summary["confirm"]["versus_default"]
    best = Config(summary["confirm"]["best"]["config"])
    assert v["ci95"][0] > 1 and recommended(v) and v["pairs"] == summary["confirm"]["rounds"] >= 8
    assert summary["confirm"]["decision"] == "faster" and summary["confirm"]["stopped"] == "decided"
    # independent of the code under test: the recorded objectives' ratio lies in the interval's range
    truth = slow_value / TABLE.rows[best].objective  # type: ignore[operator]
    assert v["ci95"][0] * 0.5 < truth < v["ci95"][1] * 2
    assert "recommended:" in summary["verdict"] and "faster than the default" in summary["verdict"]
    chosen = summary["recommended"]  # one recommended entry: the confirmed best, with its interval
    assert chosen["config"] == dict(best) and not chosen["is_default"] and chosen["ci95"] == v["ci95"]
    assert summary["best_measured"] == summary["best"]


def _result(i: int, round_: int, value: float, datasets: dict[str, float] | None = None) -> Result:
    c = Config({"x": i})
    return Result(Candidate(-1 - round_, c, c, {"phase": "confirm", "round": round_}),
                  Measurement.ok(value, datasets=datasets or {}))


def test_paired_speedup_pairs_rounds_and_datasets() -> None:
    default = [_result(0, n, v, {"a": v / 2, "b": v / 2}) for n, v in enumerate([10.0, 20.0, 10.0, 40.0, 10.0])]
    tuned = [_result(1, n, v, {"a": v / 4, "b": 3 * v / 4}) for n, v in enumerate([5.0, 10.0, 5.0, 20.0, 5.0])]
    c = paired_speedup(tuned * 2, default * 2, Direction.MINIMIZE)  # rounds 0-4 twice: still five pairs
    assert c is not None and c["pairs"] == 5
    # unpaired, the medians (10 vs 5) and their ranges overlap; paired, every round is exactly 2x, but five
    # rounds are too few for the anytime interval to bound anything
    assert c["speedup"] == 2.0 and c["ci95"] == [0.0, math.inf] and not recommended(c)
    more = paired_speedup([_result(1, n, 5.0) for n in range(8)], [_result(0, n, 10.0) for n in range(8)],
                          Direction.MINIMIZE)
    assert more is not None and more["ci95"] == [2.0, 2.0] and recommended(more)
    assert c["datasets"]["a"]["speedup"] == 4.0 and c["datasets"]["b"]["speedup"] == pytest.approx(4 / 3)
    flat = paired_speedup([_result(1, n, v) for n, v in enumerate([9.0, 11.0, 10.0, 12.0, 8.0])],
                          [_result(0, n, 10.0) for n in range(5)], Direction.MINIMIZE)
    assert flat is not None and flat["ci95"][0] < 1 < flat["ci95"][1] and not recommended(flat)
    assert paired_speedup(tuned[:2], default[2:], Direction.MINIMIZE) is None  # no common round: no pair


def test_units_and_stop_reasons_in_words() -> None:
    unit = run_time_unit("time_s", 0.0052865)
    assert unit == ("ms", 1e3) and show("time_s", 0.0052865, unit) == "5.287 ms"
    assert show("time_s", 0.0123, unit) == "12.3 ms"  # one unit per run, whatever the size
    assert run_time_unit("time_ms", 2500.0)[0] == "s" and run_time_unit("time_s", 3e-5)[0] == "µs"
    assert show("gflops", 12.5, unit) == "12.5 (gflops)"
    assert stop_words("exhausted", 54, 100, 54, 54) == ("stopped at 54 of 100 evaluations: every configuration "
                                                          "in the space was measured")
    assert "nothing left to propose" in stop_words("exhausted", 12, 100, 54, 12)
    assert stop_words("evaluations", 20, 20, None, 20).startswith("stopped at 20 of 20 evaluations: the evaluation")


def test_exact_problem_default_measured_once_and_compared(tmp_path: Path) -> None:
    from searchlab.adapters.synthetic import SyntheticThresholds

    cfg = _compose_run(["problem=synthetic_thresholds", "searcher=random", "executor=serial", "progress=off",
                        "plot=false", "budget.evaluations=10", "seed=4"])
    summary = execute(cfg, tmp_path / "run", quiet=True)
    problem = SyntheticThresholds()
    default = problem.space.default_config()
    c = summary["confirm"]
    assert c["exact"] and c["default"]["config"] == dict(default)
    expected = problem.evaluate(default).objective / summary["best"]["objective"]
    assert c["versus_default"]["speedup"] == pytest.approx(expected)
    assert c["versus_default"]["ci95"] == [pytest.approx(expected)] * 2
    assert summary["verdict"].splitlines()[-1].startswith("search: best")
    rows = _confirm_rows(tmp_path / "run")
    assert len(rows) <= 1  # at most the one exact measurement of the default


def test_the_verdict_is_printed_last(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _compose_run(["problem=synthetic_thresholds", "searcher=exhaustive", "executor=serial", "progress=off",
                        "plot=false", "budget.evaluations=1000", "seed=1"])
    summary = execute(cfg, tmp_path / "run", quiet=False)
    out = capsys.readouterr().out.rstrip("\n")
    lines = summary["verdict"].splitlines()
    assert out.endswith("searchlab: verdict: " + "\n  ".join(lines))
    assert summary["stop_reason"] == "exhausted"
    assert lines[-1].endswith("every configuration in the space was measured") or "nothing left to propose" in lines[-1]
    assert f"stopped at {summary['evaluations']} of 1000 evaluations" in lines[-1]


@pytest.mark.usefixtures("registered_double")
def test_a_cap_reached_undecided_is_a_third_decision_that_says_what_to_do(tmp_path: Path) -> None:
    """Six rounds cannot bound the anytime interval: capped there, the verdict is "undecided" (not
    "no measurable change"), names the interval and the next step, and recommends nothing."""
    PICK["default"] = OK_ROWS[int(len(OK_ROWS) * 0.9)][1]
    summary = _run(tmp_path / "run", "problem.sample_noise=true", "budget.evaluations=30", "seed=1",
                   "confirm.k=2", "confirm.rounds=5", "confirm.max_rounds=6")
    c = summary["confirm"]
    assert c["decision"] == "undecided" and c["stopped"] == "max_rounds" and c["rounds"] == 6
    assert not recommended(c["versus_default"])
    first = summary["verdict"].splitlines()[0]
    assert first.startswith("undecided, so the default is kept: undecided after 6 paired rounds")
    assert "confirm.max_rounds" in first and "quieter machine" in first and "no measurable change" not in first


def test_one_story_when_confirmation_reorders_the_candidates() -> None:
    """Issue 35: one best per run, said in words when confirmation reorders; the confirm lines and the
    verdict state the interval summary.json has."""
    from searchlab.run.summary import _noise_lines
    from searchlab.run.verdict import build_verdict

    c = {"basis": "tuning", "speedup": 1.41, "ci95": [1.2, 1.63], "pairs": 12, "method": "anytime", "datasets": {}}
    entry = {"median": 0.004, "ci95": [0.0039, 0.0041], "samples": 12}
    confirm = {"k": 3, "rounds": 12, "complete": True, "decision": "faster", "stopped": "decided",
               "candidates": [{"rank": 1, "config": {"x": 1}, **entry}, {"rank": 2, "config": {"x": 2}, **entry}],
               "best": {"rank": 2, "config": {"x": 2}, **entry}, "default": {"config": {"x": 0}, **entry},
               "versus_default": c, "equivalence": 0.02}
    s = {"objective_name": "time_s", "best": {"objective": 0.0038, "evaluation": 3, "description": "x=1"},
         "report": {}, "confirm": confirm, "stop_reason": "evaluations", "evaluations": 10}
    verdict = build_verdict(s, 10, None, 10)
    lines = "\n".join(_noise_lines(s))
    which = "the 2nd-best single measurement of the search, fastest of the 2 re-measured"
    assert verdict.startswith(f"recommended: {which} (x=2)")
    assert which in lines and "re-measured best configuration: x=2" in lines
    assert "1.41x [1.20, 1.63]" in lines and "[1.20, 1.63]" in verdict
