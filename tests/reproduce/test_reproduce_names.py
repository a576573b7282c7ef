"""Names from a file never leave ``--out`` (issue 51): strategy, GPU and experiment names that look like paths run,
and every file written lies inside the output directory (or ``outputs/reproduce/`` when no ``--out`` is given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchlab.reproduce.cli import main
from tests.reproduce.conftest import HUB, raw_experiment, write


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_path_like_names_stay_inside_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    evil = "../../../evil/X"
    raw = raw_experiment(work, repeats=1, strategies=[
        {"name": evil, "search_method": "random_sample", "display_name": "<b>evil</b> & co"}], name="../../../evil/E")
    defaults = raw["experimental_groups_defaults"]
    defaults["gpus"] = ["../../../evil/G"]
    defaults["pattern_for_full_search_space_filenames"] = {
        "regex": str(HUB / "cachefiles" / "convolution_milo" / "MI250X_T4.json")}
    path = write(work, raw)
    before = _files(tmp_path)
    assert main([str(path), "--workers", "1", "--quiet"]) == 0, capsys.readouterr().err
    written = _files(tmp_path) - before
    inside = work / "outputs" / "reproduce"
    assert written and all(inside in p.parents for p in written), sorted(map(str, written))[:5]
    assert not (tmp_path / "evil").exists() and not (tmp_path / "a" / "evil").exists()
    html = next(p for p in written if p.name == "report.html").read_text()
    assert "<b>evil</b>" not in html and "&lt;b&gt;evil&lt;/b&gt;" in html
    assert not any(p.parent.name == "methodology" for p in written)  # its layout would use the names as paths
