"""``auto`` held out per device against Kernel Tuner's strategies in ``searchlab reproduce`` (issue 53, item 3).

``bench/experiments/convolution_milo.json`` runs two ``auto`` settings on the four shared convolution spaces: ``auto``
with the setting leave-one-table-out chose for A100, A4000 and W6600, and ``auto_mi250x`` with the one chosen
without MI250X. The reproduce tables mark every ``auto`` cell "not held out" (the spaces chose ``auto``'s shipped
defaults), so they make no pooled comparison. This benchmark makes the one issue 53 asks for, from the run's
``details.json`` (every repeat's own P, ``per_repeat``): **held-out ``auto``** = the held-out setting on each space
(``held_out``), against each strategy, on both axes of the methodology (evaluations; time with each searcher's own
time charged):

- the package's P averaged over the four spaces (its "all spaces" aggregate), for held-out ``auto`` and each
  strategy;
- per-repeat P pooled over the four spaces by repeat index: held-out ``auto`` minus the strategy, the mean with a
  95 % bootstrap interval over repeats, and a two-sided Wilcoxon signed-rank test over the repeat pairs with Holm's
  correction over the strategies of an axis. "ahead" only when the interval excludes 0 and p (Holm) < 0.05.

    cpuslot --exclusive .venv/bin/python -m bench auto_milo
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import Benchmark, Context

ROOT = Path(__file__).resolve().parents[1]
AXES = ("fevals", "time")


@dataclass(frozen=True)
class Options:
    experiment: str = "bench/experiments/convolution_milo.json"
    # space key -> the auto strategy held out on it (a space not named: ``default_auto``)
    held_out: str = '{"MI250X+convolution_milo": "auto_mi250x"}'
    default_auto: str = "auto"
    out_dir: str = ""  # the reproduce directory ("" = a temporary one)


def _reproduce(ctx: Context, experiment: Path, out: Path) -> tuple[dict[str, Any], float]:
    cmd = [sys.executable, "-m", "searchlab", "reproduce", str(experiment), "--out", str(out), "--allow-code"]
    ctx.log(" ".join(cmd))
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    wall = time.perf_counter() - start
    details: dict[str, Any] = json.loads((out / "details.json").read_text(encoding="utf-8"))
    return details, wall


def compare(details: dict[str, Any], held_out: dict[str, str], default_auto: str) -> dict[str, Any]:
    """Held-out ``auto`` against every strategy that is not an ``auto`` setting, per axis (module docstring)."""
    from searchlab.reproduce.repeat_stats import bootstrap
    from searchlab.reproduce.tables import holm
    from searchlab.study.analysis.stats import wilcoxon_pair

    autos = {default_auto, *held_out.values()}
    rows: dict[str, Any] = {}
    for axis in AXES:
        spaces = details["per_repeat"][axis]
        pick = {space: held_out.get(space, default_auto) for space in spaces}
        n = min(len(by[pick[s]]) for s, by in spaces.items())
        mine = np.mean([np.asarray(spaces[s][pick[s]][:n], dtype=float) for s in spaces], axis=0)
        package = [r["P"] for r in details["rows"] if r["axis"] == axis and r["space"] != "all"
                   and pick.get(r["space"]) == r["strategy"]]
        others = sorted({name for by in spaces.values() for name in by} - autos)
        out: dict[str, Any] = {"auto_P": float(np.mean([p for p in package if p is not None])),
                               "auto_repeat": list(bootstrap(mine)), "strategies": {}}
        raw: list[float] = []
        for name in others:
            theirs = np.mean([np.asarray(spaces[s][name][:n], dtype=float) for s in spaces], axis=0)
            agg = details["scores"][axis].get(name, {}).get("score")
            diff = mine - theirs
            p = float(wilcoxon_pair(mine, theirs)[1]) if not np.allclose(diff, 0) else 1.0
            raw.append(p)
            out["strategies"][name] = {"P": agg, "minus": list(bootstrap(diff)), "p": p}
        for name, ph in zip(others, holm(raw)):
            row = out["strategies"][name]
            row["p_holm"] = float(ph)
            row["auto_ahead"] = bool(row["minus"][1] > 0 and ph < 0.05)
        out["ahead_of_all"] = all(r["auto_ahead"] for r in out["strategies"].values())
        rows[axis] = out
    return rows


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    experiment = (ROOT / opts.experiment).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(opts.out_dir) if opts.out_dir else Path(tmp) / "milo"
        details, wall = _reproduce(ctx, experiment, out)
    result = compare(details, json.loads(opts.held_out), opts.default_auto)
    for axis, row in result.items():
        ctx.log(f"{axis}: held-out auto P {row['auto_P']:.3f}; ahead of all: {row['ahead_of_all']}; " + ", ".join(
            f"{n} {r['minus'][0]:+.3f} [{r['minus'][1]:+.3f}, {r['minus'][2]:+.3f}] p_H={r['p_holm']:.2g}"
            for n, r in row["strategies"].items()))
    return {"reproduce_wall_s": wall, "meta": details.get("meta", {}), "comparison": result}


BENCHMARK = Benchmark("auto_milo", "auto held out per device against Kernel Tuner's strategies in searchlab reproduce "
                      "of convolution_milo, both axes, per-repeat P with bootstrap intervals and Holm (issue 53)",
                      Options, run, cited_by=("docs/baselines.md",))
