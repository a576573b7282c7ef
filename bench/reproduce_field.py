"""``searchlab reproduce`` and the reference ``autotuning_experiment`` on the field's own files, side by side.

    cpuslot --exclusive .venv/bin/python -m bench reproduce_field [--files test.json ...] [--reference/--no-reference]

Every experiment file of ../shared/data/methodology (the reference package's own experiment and test files) and
bench/experiments/*, with only their paths changed (bench/reproduce_files.py: the hub copy, with Kernel Tuner's
caches beside the T4 files as the reference needs them, and a mock space for the reference's mock T1 file), goes
through both tools, one after the other on this machine:

- **reference**: ``autotuning_experiment FILE`` (its run), then ``get_strategy_scores(FILE)`` in a fresh process
  (its scores, from its cache): wall time of each; a refusal is recorded with its last line. Kernel Tuner 1.5's
  ``greedy_ils`` can end the reference's run with a traceback (``StopCriterionReached``, docs/study.md); the run
  is then started again, resuming from its cache, and the times are added;
- **ours**: ``python -m searchlab reproduce FILE --out DIR``, the whole command (run, scores, report), its wall
  time, the time to its first repeat (fixed cost) and the longest silence between its progress lines;
- **agreement**: on the same runs (bench/reproduce_agree.py: time axis equal to get_strategy_scores' 3 decimals,
  evaluations axis within 1e-6) and on different runs (the reference's runs scored by the same functions);
- **ratio**: the reference's run + scores over ours (the moment our ``scores.json`` is written, its line says so);
  ``ratio_with_our_report`` over our whole command (figures and ``report.html`` too, which the reference's two
  commands do not make).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import Benchmark, Context

ROOT = Path(__file__).resolve().parents[1]
FILES = ("mockfiles/test.json", "mockfiles/test_cached.json", "mockfiles/test_import_runs.json",
         "mockfiles/test_bad_kernel_path.json", "experiment_files/compare_hypertuners_metastrategy.json",
         "experiment_files/compare_meta_algorithms.json", "experiment_files/compare_hypertuners_milo.json",
         "experiment_files/ktt_coulomb_two_search_methods.json",
         "experiment_files/ktt_vectorAddition_two_search_methods.json", "bench/convolution_milo.json")


@dataclass
class Options:
    files: list[str] = field(default_factory=lambda: list(FILES))  # methodology-relative, or bench/<name>
    workdir: str = "outputs/bench_reproduce_field"
    reference: bool = True  # also run the reference (the long part)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}


def _timed(cmd: list[str], cwd: Path, log: Path) -> tuple[float, int, list[tuple[float, str]]]:
    """Run ``cmd``; (wall s, exit status, (seconds since start, line) of every stderr line)."""
    lines: list[tuple[float, str]] = []
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=out, stderr=subprocess.PIPE, text=True)

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append((time.perf_counter() - start, line.rstrip()))
                out.write(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        status = proc.wait()
        reader.join(timeout=10)
    return time.perf_counter() - start, status, lines


def _reference(path: Path, work: Path, ctx: Context) -> dict[str, Any]:
    from bench.reproduce_agree import strategy_scores

    exe = str(Path(sys.executable).with_name("autotuning_experiment"))
    total, attempts, last = 0.0, 0, ""
    for attempts in range(1, 4):
        wall, status, lines = _timed([exe, str(path)], work, work / f"reference_{path.stem}_{attempts}.log")
        total += wall
        text = (work / f"reference_{path.stem}_{attempts}.log").read_text() + "\n".join(x for _, x in lines)
        last = next((x for x in reversed(text.splitlines()) if x.strip()), "")
        if status == 0 or "StopCriterionReached" not in text:
            break
        ctx.log(f"reference: {path.name} ended with StopCriterionReached after {wall:.0f} s; resuming from its cache")
    if status != 0:
        return {"status": "refused", "exit": status, "last_line": last[:300], "run_s": round(total, 2),
                "attempts": attempts}
    clock = time.perf_counter()
    scores = strategy_scores(path, work)
    score_s = time.perf_counter() - clock
    return {"status": "ran", "run_s": round(total, 2), "score_s": round(score_s, 2),
            "total_s": round(total + score_s, 2), "attempts": attempts, "get_strategy_scores": scores}


def _ours(path: Path, work: Path) -> dict[str, Any]:
    import json

    out = work / f"ours_{path.stem}"
    wall, status, lines = _timed([sys.executable, "-m", "searchlab", "reproduce", str(path), "--out", str(out)],
                                 work, work / f"ours_{path.stem}.log")
    if status != 0:
        return {"status": "refused", "exit": status, "last_line": (lines[-1][1] if lines else "")[:300],
                "wall_s": round(wall, 2), "directory_left": out.exists()}
    stamps = [t for t, _ in lines]
    first = next((t for t, x in lines if "running" in x or "repeats stored" in x), None)
    scored = next((t for t, x in lines if "scores written" in x), None)
    gaps = [b - a for a, b in zip([0.0, *stamps], [*stamps, wall])]
    scores = json.loads((out / "scores.json").read_text())
    return {"status": "ran", "wall_s": round(wall, 2), "scores_written_s": None if scored is None else round(scored, 2),
            "first_repeat_starts_s": first, "longest_silence_s":
            round(max(gaps), 2), "progress_lines": len(lines), "scores": scores, "out": str(out)}


def _one(name: str, options: Options, ctx: Context, work: Path, hub: Path) -> dict[str, Any]:
    from bench.reproduce_agree import reference_scores, same_runs
    from bench.reproduce_files import METHODOLOGY, derived

    source = ROOT / "bench" / "experiments" / name.split("/", 1)[1] if name.startswith("bench/") else METHODOLOGY / name
    path = derived(source, work, hub)
    row: dict[str, Any] = {"file": name, "derived": str(path)}
    ctx.log(f"{name}: searchlab reproduce")
    row["ours"] = _ours(path, work)
    if options.reference:
        ctx.log(f"{name}: the reference (autotuning_experiment, then get_strategy_scores)")
        row["reference"] = _reference(path, work, ctx)
        ref, ours = row["reference"], row["ours"]
        row["same_decision"] = ref["status"] == ours["status"]
        if ref["status"] == "ran" and ours["status"] == "ran":
            row["ratio"] = round(ref["total_s"] / ours["scores_written_s"], 2)  # run + scores on both sides
            row["ratio_with_our_report"] = round(ref["total_s"] / ours["wall_s"], 2)
            row["reference_runs_scored_here"] = reference_scores(path)
    if row["ours"]["status"] == "ran":
        row["same_runs"] = same_runs(path, Path(row["ours"]["out"]))
    return row


def run(ctx: Context, options: Options) -> dict[str, Any]:
    from bench.reproduce_files import hub_copy

    work = (ROOT / options.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    hub = hub_copy(work)
    rows = []
    for name in options.files:
        rows.append(_one(name, options, ctx, work, hub))
        ctx.log(f"{name}: {rows[-1].get('ratio', '-')}x")
    return {"files": rows, "how": __doc__}


BENCHMARK = Benchmark("reproduce_field", "searchlab reproduce vs autotuning_experiment on the field's files", Options,
                      run, cited_by=("docs/study.md",))
