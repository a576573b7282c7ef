"""``make demo`` (problem=lud searcher=tag, seed 0) repeated under a one-core load (issue 35).

Done when: the same decision at least 5 times in 6, and never a verdict that contradicts its own confirm phase.
Each run's ``summary.json`` gives the confirm phase's decision and paired interval (tuning datasets) and the
decision written (validation datasets, which decide for Futhark); a run *contradicts itself* when one says
faster and the other slower, or when the verdict text does not state the confirm phase's interval as
summary.json has it.

Load (``--load``): ``yes > /dev/null`` pinned to the last core (``last``: the core the evaluator was pinned to
before runs chose idle cores), or not pinned (``free``: the scheduler moves it). The evaluator's cores are in
each run's record (``cores``). Run it alone (``cpuslot --exclusive``).
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench.common import busy_core, last_core, searchlab_cli
from bench.harness import Benchmark, Context

DEMO = ["problem=lud", "searcher=tag"]


@dataclass(frozen=True)
class Options:
    runs: int = 6
    extra: tuple[str, ...] = ()  # overrides after make demo's (e.g. budget.evaluations=20)
    load: Literal["last", "free"] = "last"


def one(run_dir: Path, extra: tuple[str, ...]) -> dict[str, Any]:
    proc, seconds = searchlab_cli([*DEMO, "progress=off", f"hydra.run.dir={run_dir}", *extra], check=False)
    if proc.returncode != 0:
        return {"exit": proc.returncode, "stderr": proc.stderr[-1500:], "seconds": seconds}
    s = json.loads((run_dir / "summary.json").read_text())
    confirm, report = s.get("confirm") or {}, s.get("report") or {}
    c, v = confirm.get("versus_default") or {}, report.get("versus_default") or {}
    lo, hi = c.get("ci95", [None, None])
    stated = f"[{lo:.2f}, {hi:.2f}]" if c else ""
    written = "recommended" if report.get("recommended") else str(report.get("recommendation"))
    opposite = {confirm.get("decision"), "faster" if report.get("recommended") else None} == {"slower", "faster"} or (
        confirm.get("decision") == "faster" and "slower" in written)
    return {"seconds": seconds, "executor": s.get("executor"),
            "cores": [d.get("cores") for d in s.get("devices") or []],
            "confirm": {"decision": confirm.get("decision"), "speedup": c.get("speedup"), "ci95": c.get("ci95"),
                        "rounds": c.get("pairs"), "stopped": confirm.get("stopped"),
                        "best_rank": (confirm.get("best") or {}).get("rank")},
            "validation": {"speedup": v.get("speedup"), "ci95": v.get("ci95"), "rounds": v.get("pairs")},
            "decision": written, "tuned": report.get("tuned"),
            "contradiction": bool(opposite or (stated and stated not in s["verdict"] + proc.stdout)),
            "verdict": s["verdict"]}


def summary(runs: list[dict[str, Any]], core: int | None, extra: tuple[str, ...]) -> dict[str, Any]:
    decisions = Counter(r.get("decision") for r in runs)
    return {"command": " ".join(["python -m searchlab", *DEMO, "(make demo), seed 0", *extra]),
            "load": "yes > /dev/null, not pinned" if core is None else f"yes > /dev/null pinned to core {core}",
            "runs": runs, "decisions": dict(decisions),
            "contradictions": sum(bool(r.get("contradiction", False)) for r in runs)}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds([0])
    core = last_core() if o.load == "last" else None
    load = busy_core(core)
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(o.runs):  # written after every run: a stopped bench keeps what it measured
                runs.append(one(Path(tmp) / f"demo_{n}", o.extra))
                ctx.log(f"{n}: {runs[-1].get('decision')}, confirm {runs[-1].get('confirm')}, contradiction "
                        f"{runs[-1].get('contradiction')}")
                ctx.checkpoint(summary(runs, core, o.extra))
    finally:
        load.terminate()
        load.wait()
    result = summary(runs, core, o.extra)
    ctx.failed = result["contradictions"] > 0
    return result


BENCHMARK = Benchmark("demo_repeat", "make demo repeated under a one-core load: the same decision, never a "
                      "self-contradicting verdict", Options, run, cited_by=("docs/measurement.md",))
