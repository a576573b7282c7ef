"""Every line true (issue 54, item 2): the default that was the best found, the verdict after Ctrl-C of a
run with a default, and the load line before measuring (item 1).

Runs use a command spec whose objective is the number it prints (``echo``): exact values, so each decision
is certain whatever the machine's load; the load reading is injected (``_cores.load_reading``).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from searchlab.core.signals import Interrupted
from searchlab.run.execution import _cores
from searchlab.run.load import Load, load_line
from searchlab.run.summary import format_summary
from searchlab.run.verdict import build_verdict
from tests.byo_helpers import run

# tiny caps: 2 rounds before the first look, at most 10 (a constant ratio decides after 9 at alpha 0.05 / 2)
CONFIRM = ("confirm.k=2", "confirm.rounds=2", "confirm.max_rounds=10", "confirm.max_time_s=600")


def _echo_spec(tmp_path: Path, default: int) -> Path:
    spec = {"knobs": {"n": [1, 2, 3]}, "run": ["echo", "${n}"], "objective": {"kind": "stdout", "pattern": r"(\d+)"},
            "measure": {"min_runs": 1, "max_runs": 1, "warmup": 0}, "default": {"n": default}}
    path = tmp_path / "echo.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _echo(tmp_path: Path, default: int, *overrides: str) -> dict[str, Any]:
    return run(tmp_path / "run", "problem=command", f"problem.spec={_echo_spec(tmp_path, default)}",
               "searcher=exhaustive", "budget.evaluations=3", "plot=false", *CONFIRM, *overrides)


# -- the default that was the best found -------------------------------------------------------------
def test_the_summary_says_when_the_default_was_the_best_found(tmp_path: Path) -> None:
    summary = _echo(tmp_path, 1)  # n=1 prints 1: the smallest objective, and the search measured it
    confirm = summary["confirm"]
    assert confirm["default"]["config"] == {"n": 1} and confirm["default"]["search_rank"] == 1
    assert [c["rank"] for c in confirm["candidates"]] == [2, 3]  # ranks among the search's measurements
    assert confirm["decision"] == "slower"
    text = format_summary(summary, tmp_path / "run")
    assert "your default was the search's best single measurement" in text
    assert "the search's best single measurement, fastest" not in text  # never said of another configuration
    assert "the 2nd-best single measurement of the search" in text
    verdict = summary["verdict"]
    assert verdict.startswith("keep the default: your default was the search's best single measurement, and even "
                              "the fastest of the 2 re-measured is measurably slower than the default"), verdict
    assert summary["recommended"]["is_default"] and summary["recommended"]["config"] == {"n": 1}


def test_a_default_that_was_not_the_best_is_not_called_so(tmp_path: Path) -> None:
    summary = _echo(tmp_path, 3)
    assert summary["confirm"]["default"]["search_rank"] == 3 and summary["confirm"]["decision"] == "faster"
    assert "your default was" not in format_summary(summary, tmp_path / "run") + summary["verdict"]
    assert summary["verdict"].startswith("recommended: the search's best single measurement, fastest of the 2 "
                                         "re-measured (n=1)")


# -- the verdict after Ctrl-C knows the default -----------------------------------------------------
def test_the_verdict_after_ctrl_c_knows_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.run.loop import SearchLoop

    real = SearchLoop.finish

    def finish(self: SearchLoop, result: Any) -> None:
        real(self, result)
        if len(self.state.results) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C after the first evaluation

    monkeypatch.setattr(SearchLoop, "finish", finish)
    with pytest.raises(Interrupted):
        _echo(tmp_path, 2)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["default_config"] == {"n": 2}
    verdict = summary["verdict"]
    assert "no default configuration" not in verdict, verdict
    assert verdict.startswith("interrupted before the comparison with your default (n=2): nothing recommended, "
                              "nothing written; resume the run to compare"), verdict
    assert summary["recommended"]["is_default"] and summary["recommended"]["config"] == {"n": 2}


def test_a_run_without_a_comparison_says_why_and_one_without_a_default_says_so() -> None:
    base = {"objective_name": "time_s", "best": {"objective": 0.002, "evaluation": 1, "description": "n=1",
                                                  "config": {"n": 1}},
            "report": {}, "confirm": None, "evaluations": 3}
    off = build_verdict({**base, "stop_reason": "evaluations", "default_config": {"n": 2}}, 3, 3, 3)
    assert off.startswith("not compared with your default (n=2): the confirm phase was off")
    none = build_verdict({**base, "stop_reason": "evaluations", "default_config": None}, 3, 3, 3)
    assert none.startswith("the problem has no default configuration to compare with")


# -- the load line ----------------------------------------------------------------------------------
def test_the_load_line_says_how_many_cores_are_held_and_what_to_do() -> None:
    assert load_line(Load((0, 1), {0: 0.02, 1: 0.1}, 0.3)) is None  # an idle machine: nothing to say
    line = load_line(Load((0, 1), {0: 0.97, 1: 0.99}, 4.2))
    assert line is not None and line.startswith("searchlab: load: other processes keep all 2 cores busy "
                                                 "(core 0 97%, core 1 99% over 0.1 s; load average 4.2): ")
    assert "2x longer" in line and "undecided" in line and "\n" not in line
    for remedy in ("wait until they finish", "renice -n 19", "executor.workers="):
        assert remedy in line
    some = load_line(Load((0, 1, 2, 3), {0: 0.1, 3: 0.9}, 1.0))
    assert some is not None and "keep 1 of 4 cores busy (core 3 90%" in some and "idle cores first" in some
    assert load_line(Load((0,), {0: 0.2, 5: 1.0})) is None  # a core this process may not use is not counted


@pytest.mark.parametrize("busy", [True, False])
def test_a_measuring_run_reads_the_load_before_its_workers_start(busy: bool, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.run.lifecycle import execute

    cores = sorted(os.sched_getaffinity(0))
    monkeypatch.setattr(_cores, "load_reading", lambda sample_s: {c: 1.0 if busy else 0.0 for c in cores})
    started: list[str] = []
    from searchlab.run.execution import SerialExecutor

    real_start = SerialExecutor.start

    def start(self: SerialExecutor, problem: Any) -> Any:
        started.append(capsys.readouterr().err)  # what was printed before the workers started
        return real_start(self, problem)

    monkeypatch.setattr(SerialExecutor, "start", start)
    from hydra import compose, initialize_config_dir

    from searchlab.cli.config import register_configs
    from searchlab.cli.main import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["executor=serial", "progress=off", "problem=command", "plot=false",
                                           f"problem.spec={_echo_spec(tmp_path, 3)}", "searcher=exhaustive",
                                           "budget.evaluations=3", *CONFIRM, "confirm.max_rounds=2"])
    summary = execute(cfg, tmp_path / "run", quiet=False)
    assert summary["load"]["cores"] == len(cores) and summary["load"]["busy_cores"] == (len(cores) if busy else 0)
    assert ("searchlab: load: other processes keep" in started[0]) is busy
    if busy:  # the undecided verdict says the machine was busy (2 rounds cannot decide)
        assert f"this one was busy: other processes held {len(cores)} of {len(cores)} cores" in summary["verdict"]
