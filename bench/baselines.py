"""The baselines compared on the shared convolution tables: an experiment file run by ``searchlab reproduce``.

Every searcher of issue 6 that runs on knob spaces (Optuna's samplers but its GP, searchlab's classic strategies,
the AUC portfolio and the portfolio of the classics, uniform random search) is a ``SearchlabOptAlg`` strategy of
``bench/experiments/baselines.json``: the autotuning methodology's experiment (Willemsen et al., FGCS 2024) on
the four convolution spaces (A100, A4000, MI250X, W6600), Kernel Tuner 1.5's simulation mode charging each
evaluation its recorded time, 25 repeats per space, scored by the methodology's P (over evaluations and over
time) with its error. ``searchlab reproduce`` runs and scores it (one door: this benchmark only calls it and
keeps what it wrote); an existing ``--run-dir`` for the same file is resumed. Optuna's GP (seconds per ask) is
left out: ``proposal_time`` measures it. The report prints the methodology's table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, searchlab_cli
from bench.harness import Benchmark, Context


@dataclass(frozen=True)
class Options:
    experiment: str = str(REPO / "bench" / "experiments" / "baselines.json")
    run_dir: str = str(REPO / "outputs" / "reproduce" / "baselines")  # reproduce's output directory (resumed)
    workers: int = 2  # Ray workers (0: in this process)


def run(ctx: Context, o: Options) -> dict[str, Any]:
    out = Path(o.run_dir).resolve()
    ctx.log(f"searchlab reproduce {o.experiment} --out {out} (resumes what is there)")
    proc, seconds = searchlab_cli(["reproduce", o.experiment, "--out", str(out), "--workers", str(o.workers)])
    experiment = json.loads(Path(o.experiment).read_text())
    return {"experiment": o.experiment, "run_dir": str(out), "reproduce_wall_s": round(seconds, 1),
            "strategies": {s["name"]: s["display_name"] for s in experiment["search_strategies"]},
            "repeats": experiment["experimental_groups_defaults"]["repeats"],
            "gpus": experiment["experimental_groups_defaults"]["gpus"],
            "scores": json.loads((out / "scores.json").read_text()), "table": (out / "table.md").read_text(),
            "report_html": str(out / "report.html"), "last_line": proc.stdout.strip().splitlines()[-1:]}


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    if "table" not in results:
        raise SystemExit("baselines: a historical result (fraction of the optimum, before the experiment file) has "
                         "no methodology table")
    ctx.artefact("_table.md").write_text(results["table"], encoding="utf-8")
    print(results["table"])


BENCHMARK = Benchmark("baselines", "every baseline on the four convolution tables: bench/experiments/baselines.json "
                      "run and scored by searchlab reproduce (the methodology's P with its error)", Options, run, report,
                      cited_by=("docs/baselines.md",))
