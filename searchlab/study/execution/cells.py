"""One cell of a study's grid: its composed run config, and running it (see :mod:`.grid`).

Apart from the grid so that the replay workers (:mod:`.replay`) and the tuning splits
(:mod:`.split`) can run cells without importing the grid that calls them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Cell:
    problem: str
    searcher: str
    seed: int
    run_dir: Path
    cfg: dict[str, Any]  # the composed run config (plain containers)


def _compose_run(overrides: list[str]) -> dict[str, Any]:
    """A cell's run config, composed as ``python -m searchlab`` composes it (the one composer), as plain values."""
    from omegaconf import OmegaConf

    from searchlab.cli.compose import compose_config

    cfg = compose_config(overrides, where=f"study: overrides {overrides} do not compose: ", resolve=True)
    container = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(container, dict)
    out: dict[str, Any] = {str(k): v for k, v in container.items()}
    path = (out.get("problem") or {}).get("path")
    if isinstance(path, str) and not os.path.isabs(path) and os.path.exists(path):
        out["problem"]["path"] = os.path.abspath(path)  # Ray workers and later readers need no cwd
    return out


def execute_cell(cell: Cell) -> dict[str, Any]:
    """Run (or resume, or keep) one cell; returns a one-line record of it."""
    from searchlab.run.lifecycle import execute

    if (cell.run_dir / "summary.json").is_file():
        from searchlab.study.analysis.summary import read_summary

        summary = read_summary(cell.run_dir)  # a damaged one: one line (issue 47, item 10)
        return {"cell": f"{cell.problem}/{cell.searcher}/{cell.seed}", "kept": True,
                "evaluations": summary.get("evaluations"), "stop": summary.get("stop_reason")}
    cfg = dict(cell.cfg)
    if (cell.run_dir / "results.db").exists():
        cfg["resume"] = str(cell.run_dir)
    started = time.time()
    summary = execute(cfg, cell.run_dir, names=(cell.problem, cell.searcher), quiet=True)
    return {"cell": f"{cell.problem}/{cell.searcher}/{cell.seed}", "kept": False, "wall_s": time.time() - started,
            "evaluations": summary.get("evaluations"), "stop": summary.get("stop_reason")}
