"""``make demo`` (problem=lud searcher=tag, seed 0) repeated under a one-core load (issue 35).

Done when: the same decision at least 5 times in 6, and never a verdict that contradicts its own
confirm phase. Each run's ``summary.json`` gives the confirm phase's decision and paired interval
(tuning datasets) and the decision written (validation datasets, which decide for Futhark);
a run *contradicts itself* when one says faster and the other slower, or when the verdict text
does not state the confirm phase's interval as summary.json has it.

    python bench/demo_repeat.py --runs 6 [--out bench/results/demo_repeat.json]

Load (``--load``): ``yes > /dev/null`` pinned to the last core (``last``: the core the evaluator
was pinned to before runs chose idle cores), or not pinned (``free``: the scheduler moves it).
The evaluator's cores are in each run's record (``cores``). Run it alone (``cpuslot --exclusive``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def one(run_dir: Path, extra: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "searchlab", "problem=lud", "searcher=tag", "progress=off",
                           f"hydra.run.dir={run_dir}", *extra], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        return {"exit": proc.returncode, "stderr": proc.stderr[-1500:]}
    s = json.loads((run_dir / "summary.json").read_text())
    confirm, report = s.get("confirm") or {}, s.get("report") or {}
    c, v = confirm.get("versus_default") or {}, report.get("versus_default") or {}
    lo, hi = c.get("ci95", [None, None])
    stated = f"[{lo:.2f}, {hi:.2f}]" if c else ""
    written = "recommended" if report.get("recommended") else str(report.get("recommendation"))
    opposite = {confirm.get("decision"), "faster" if report.get("recommended") else None} == {"slower", "faster"} or (
        confirm.get("decision") == "faster" and "slower" in written)
    return {"seconds": time.time() - t0, "executor": s.get("executor"),
            "cores": [d.get("cores") for d in s.get("devices") or []],
            "confirm": {"decision": confirm.get("decision"), "speedup": c.get("speedup"), "ci95": c.get("ci95"),
                        "rounds": c.get("pairs"), "stopped": confirm.get("stopped"),
                        "best_rank": (confirm.get("best") or {}).get("rank")},
            "validation": {"speedup": v.get("speedup"), "ci95": v.get("ci95"), "rounds": v.get("pairs")},
            "decision": written, "tuned": report.get("tuned"),
            "contradiction": bool(opposite or (stated and stated not in s["verdict"] + proc.stdout)),
            "verdict": s["verdict"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--extra", nargs="*", default=[],
                        help="overrides after make demo's (e.g. budget.evaluations=20: the full demo's 100 "
                             "evaluations take 15-60 s each on this machine under the load)")
    parser.add_argument("--load", choices=("last", "free"), default="last")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "demo_repeat.json")
    args = parser.parse_args()
    core = sorted(os.sched_getaffinity(0))[-1]
    pin = ["taskset", "-c", str(core)] if args.load == "last" else []
    load = subprocess.Popen([*pin, "yes"], stdout=subprocess.DEVNULL)
    runs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.runs):  # written after every run: a stopped bench keeps what it measured
                runs.append(one(Path(tmp) / f"demo_{n}", args.extra))
                print(n, {k: runs[-1].get(k) for k in ("decision", "confirm", "contradiction")}, flush=True)
                write(args.out, core if args.load == 'last' else None, runs, args.extra)
    finally:
        load.terminate()
        load.wait()


def write(out: Path, core: int | None, runs: list[dict[str, Any]], extra: list[str]) -> None:
    decisions = Counter(r.get("decision") for r in runs)
    payload = {"command": " ".join(["python -m searchlab problem=lud searcher=tag (make demo), seed 0", *extra]),
               "load": "yes > /dev/null, not pinned" if core is None else f"yes > /dev/null pinned to core {core}", "runs": runs,
               "decisions": dict(decisions), "contradictions": sum(r.get("contradiction", False) for r in runs),
               "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")
    print(dict(decisions), "contradictions:", payload["contradictions"])


if __name__ == "__main__":
    main()
