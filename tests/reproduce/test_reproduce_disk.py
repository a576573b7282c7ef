"""A full disk is not the user's input: one line, exit 1, and no directory left when nothing was stored."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from searchlab.reproduce.cli import main
from tests.reproduce.conftest import experiment

ONE = [{"name": "random", "search_method": "random_sample", "display_name": "Random"}]


@pytest.fixture()
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_is_one_line_exit_1_and_nothing_half_made(tiny_disk: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    filler = tiny_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)
    out = tiny_disk / "out"
    status = main([str(experiment(tmp_path, repeats=1, strategies=ONE)), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert status == 1 and len(err.splitlines()) == 1 and ("full" in err or "No space" in err), err
    assert not out.exists()
