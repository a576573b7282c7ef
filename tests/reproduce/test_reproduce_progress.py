"""Progress of ``searchlab reproduce``: never silent longer than 10 s (issue 51 item 5; HELPERS "users see")."""

from __future__ import annotations

import time

import pytest

from searchlab.reproduce import progress
from searchlab.reproduce.progress import Heartbeat, Progress


def _wait_for(capsys: pytest.CaptureFixture[str], text: str) -> str:
    seen = ""
    while text not in seen:  # no wall-clock cap: pytest's timeout bounds it
        time.sleep(0.05)
        seen += capsys.readouterr().err
    return seen


def test_heartbeat_says_the_phase_when_nothing_else_was_said(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "BEAT_S", 0.2)
    with Heartbeat("computing the spaces' statistics", quiet=False):
        seen = _wait_for(capsys, "still computing the spaces' statistics (")
    assert seen.startswith("searchlab reproduce: still computing the spaces' statistics (")
    time.sleep(0.4)
    assert capsys.readouterr().err == ""  # it stops with its block


def test_heartbeat_is_quiet_when_asked_and_after_a_line(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "BEAT_S", 0.3)
    with Heartbeat("scoring", quiet=True):
        time.sleep(0.7)
    assert capsys.readouterr().err == ""
    with Heartbeat("scoring", quiet=False):
        progress.said()  # a line was just printed: none due before BEAT_S from now
        assert "still" not in capsys.readouterr().err


def test_progress_lines_give_count_rate_and_eta(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "BEAT_S", 0.0)
    p = Progress(total=10, done=2, quiet=False)
    p.start("on 2 Ray workers")
    p.done, p.ran = 6, 4
    time.sleep(0.01)
    p.tick()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "searchlab reproduce: 2/10 repeats stored; running 8 on 2 Ray workers"
    assert lines[1].startswith("searchlab reproduce: 6/10 repeats stored (") and "s left)" in lines[1]


def test_progress_waits_for_its_interval(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "BEAT_S", 3600.0)
    p = Progress(total=10, done=0, quiet=False)
    p.start("in this process")
    p.done = p.ran = 1
    p.tick()
    assert len(capsys.readouterr().err.splitlines()) == 1  # only the start line
    p.tick(force=True)
    assert "1/10 repeats stored" in capsys.readouterr().err
