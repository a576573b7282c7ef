"""A study says its verdict on the terminal, not only in the report (issue 54, item 3: ``searchlab.study``
printed only a path, and the verdict never reached the terminal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchlab.run.lifecycle import execute
from searchlab.study.__main__ import main, verdict_lines
from searchlab.study.execution.grid import _compose_run


def test_the_study_prints_the_reports_verdict_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for searcher in ("random", "exhaustive"):
        for seed in (0, 1):
            execute(_compose_run([f"searcher={searcher}", f"seed={seed}", "problem=synthetic_knobs",
                                  "budget.evaluations=8", "executor=serial", "progress=off", "plot=false"]),
                    tmp_path / "runs" / f"{searcher}_{seed}", quiet=True)
    assert main([str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    said = [line.removeprefix("searchlab.study: verdict: ") for line in out.splitlines()
            if line.startswith("searchlab.study: verdict: ")]
    wrote = verdict_lines(tmp_path / "runs" / "study" / "summary.md")
    assert said and said == wrote  # the report's own lines, every one
    assert said[0].startswith("synthetic_knobs: ") and "**" not in said[0]
    assert out.index("report: ") < out.index("searchlab.study: verdict: ")


def test_verdict_lines_read_the_verdict_section_only(tmp_path: Path) -> None:
    md = tmp_path / "summary.md"
    md.write_text("# searchlab study: x\n\n## Verdict\n\n- a: **auto** leads\n- b: tied\n\n- runs: 4\n\n## Notes\n\n- n\n")
    assert verdict_lines(md) == ["a: auto leads", "b: tied"]
    assert verdict_lines(tmp_path / "missing.md") == []
