"""Measuring on idle cores (searchlab.run.execution._cores): a busy core is ranked last."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from searchlab.run.execution import _cores
from searchlab.run.execution._cores import busy_fractions, idle_first


def _stat(busy: dict[int, int], idle: dict[int, int]) -> str:
    head = "cpu  1 2 3 4 5 6 7 8 0 0\n"
    return head + "".join(f"cpu{c} {busy[c]} 0 0 {idle[c]} 0 0 0 0 0 0\n" for c in sorted(busy)) + "intr 1 2\n"


def test_ranks_cores_from_least_to_most_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "stat"
    stat.write_text(_stat({0: 100, 1: 100, 2: 100}, {0: 100, 1: 100, 2: 100}))
    monkeypatch.setattr(_cores, "PROC_STAT", stat)
    real_sleep = time.sleep

    def tick(_: float) -> None:  # core 1 saturated, core 2 half busy, core 0 idle over the window
        stat.write_text(_stat({0: 100, 1: 200, 2: 150}, {0: 200, 1: 100, 2: 150}))
        real_sleep(0)

    monkeypatch.setattr(_cores.time, "sleep", tick)
    assert busy_fractions() == {0: 0.0, 1: 1.0, 2: 0.5}
    stat.write_text(_stat({0: 100, 1: 100, 2: 100}, {0: 100, 1: 100, 2: 100}))
    assert idle_first([1, 2, 0]) == [2, 0, 1]  # half busy is not taken


def test_ties_keep_the_callers_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cores, "PROC_STAT", tmp_path / "missing")  # not Linux: order unchanged
    assert busy_fractions() == {}
    assert idle_first([3, 1, 2]) == [3, 1, 2]


@pytest.mark.skipif(not (Path("/proc/stat").exists() and shutil.which("taskset") and hasattr(os, "sched_getaffinity")
                         and len(os.sched_getaffinity(0)) > 1), reason="needs Linux, taskset and two cores")
def test_a_core_kept_busy_by_another_process_reads_busy() -> None:
    core = sorted(os.sched_getaffinity(0))[-1]
    load = subprocess.Popen(["taskset", "-c", str(core), "yes"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        assert busy_fractions(0.5)[core] > 0.6
    finally:
        load.terminate()
        load.wait()
