"""Bad experiment files: one line, exit 2, no output directory left behind (the probe's cases are in
test_reproduce_probe.py; a version string the package's schema takes is not bad input: test_reproduce_files.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from searchlab.reproduce.cli import main
from tests.reproduce.conftest import experiment


def _missing_key(tmp: Path) -> Path:
    path = experiment(tmp)
    raw = json.loads(path.read_text())
    del raw["statistics_settings"]
    path.write_text(json.dumps(raw))
    return path


ROWS: list[tuple[str, Any, str]] = [
    ("missing file", lambda tmp: tmp / "nope.json", "no such file"),
    ("not JSON", lambda tmp: (tmp / "x.json").write_text("{") and tmp / "x.json", "not JSON"),
    ("schema violation", _missing_key, "statistics_settings"),
    ("unknown strategy", lambda tmp: experiment(tmp, strategies=[
        {"name": "x", "search_method": "no_such_strategy", "display_name": "X"}]), "no_such_strategy"),
    ("unknown searchlab searcher", lambda tmp: experiment(tmp, strategies=[
        {"name": "x", "search_method": "SearchlabOptAlg", "display_name": "X",
         "custom_search_method_path": str(Path(__file__).resolve().parents[2] / "searchlab/integrations/kernel_tuner.py"),
         "search_method_hyperparameters": [{"name": "searcher", "value": "no_such_searcher"}]}]), "no_such_searcher"),
    ("spaces not found", lambda tmp: experiment(tmp, gpu="MI250X", experimental_groups_defaults={
        **json.loads(experiment(tmp).read_text())["experimental_groups_defaults"], "gpus": ["H100"]}), "H100"),
]


@pytest.mark.parametrize(("case", "make", "needle"), ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                          make: Any, needle: str) -> None:
    out = tmp_path / "out"
    status = main([str(make(tmp_path)), "--out", str(out), "--workers", "0", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("searchlab reproduce: error:") and needle in err, err
    assert not out.exists()


def test_the_study_door_refuses_alike(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from searchlab.study.__main__ import main as study

    assert study([f"experiment={tmp_path / 'nope.json'}", f"out={tmp_path / 'out'}"]) == 2
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such file" in err and not (tmp_path / "out").exists()
    assert study([f"experiment={tmp_path / 'nope.json'}", "seeds=3"]) == 2
    assert "only out=, workers=, ray_address=" in capfd.readouterr().err
