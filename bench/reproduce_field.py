"""``searchlab reproduce`` and the reference ``autotuning_experiment`` on the field's own files, side by side.

    cpuslot --exclusive .venv/bin/python -m bench reproduce_field [--files test.json ...] [--reference/--no-reference]

Every experiment file of ../shared/data/methodology (the reference package's own experiment and test files) and
bench/experiments/*, with only their paths changed (bench/reproduce_files.py: the hub copy, with Kernel Tuner's
caches beside the T4 files as the reference needs them, and a mock space for the reference's mock T1 file), goes
through both tools on this machine, in interleaved pairs (pair i runs ours first when i is even, the reference
first when odd; each run from scratch: its output directory, and the reference's run cache, removed before it):

- **reference**: ``autotuning_experiment FILE`` (its run), then ``get_strategy_scores(FILE)`` in a fresh process
  (its scores, from its cache): wall time of each; a refusal is recorded with its last line. Kernel Tuner 1.5's
  ``greedy_ils`` can end the reference's run with a traceback (``StopCriterionReached``, docs/study.md); the run
  is then started again, resuming from its cache, and the times are added;
- **ours**: ``python -m searchlab reproduce FILE --out DIR``, the whole command (run, scores, report), its wall
  time, the time to its first repeat (fixed cost) and the longest silence between its progress lines;
- **agreement**: on the same runs (bench/reproduce_agree.py: time axis equal to get_strategy_scores' 3 decimals,
  evaluations axis within 1e-6) and on different runs (the reference's runs scored by the same functions);
- **ratio**: per pair, the reference's run + scores over ours (the moment our ``scores.json`` is written, its line
  says so); ``ratio_with_our_report`` over our whole command (figures and ``report.html`` too, which the
  reference's two commands do not make). Over the pairs: the median, the geometric mean with a 95 % t-interval on
  the log ratios (two pairs or more), min and max. Up to ``--pairs`` pairs per file; no further pair once the
  file's pairs so far and one more of the last's length would pass ``--file-budget-s`` (a long file gets fewer
  pairs: the count is in the row). A file both tools refuse is run once.
"""

from __future__ import annotations

import itertools
import os
import shutil
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


@dataclass(frozen=True)
class Options:
    files: list[str] = field(default_factory=lambda: list(FILES))  # methodology-relative, or bench/<name>
    workdir: str = "outputs/bench_reproduce_field"
    reference: bool = True  # also run the reference (the long part)
    pairs: int = 5  # interleaved (ours, reference) pairs per file, at most
    file_budget_s: float = 900.0  # no further pair of a file past this (module docstring)


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
    shutil.rmtree(work / f"reference_{path.stem}", ignore_errors=True)  # its run cache: from scratch
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
    shutil.rmtree(out, ignore_errors=True)  # from scratch (a kept directory would resume)
    wall, status, lines = _timed([sys.executable, "-m", "searchlab", "reproduce", str(path), "--out", str(out)],
                                 work, work / f"ours_{path.stem}.log")
    if status != 0:
        return {"status": "refused", "exit": status, "last_line": (lines[-1][1] if lines else "")[:300],
                "wall_s": round(wall, 2), "directory_left": out.exists()}
    first = next((t for t, x in lines if "running" in x or "repeats stored" in x), None)
    scored = next((t for t, x in lines if "scores written" in x), None)
    stamps = [0.0, *(t for t, _ in lines), wall]
    gaps = [(b - a, i) for i, (a, b) in enumerate(itertools.pairwise(stamps))]
    gap, at = max(gaps)
    scores = json.loads((out / "scores.json").read_text())
    return {"status": "ran", "wall_s": round(wall, 2), "scores_written_s": None if scored is None else round(scored, 2),
            "first_repeat_starts_s": None if first is None else round(first, 2), "longest_silence_s": round(gap, 2),
            "longest_silence_ends_with": lines[at][1][:160] if at < len(lines) else "the end of the command",
            "progress_lines": len(lines), "scores": scores, "out": str(out)}


def _interval(ratios: list[float]) -> dict[str, Any]:
    """Median, geometric mean with a 95 % t-interval on the log ratios, min, max (module docstring)."""
    import numpy as np
    from scipy import stats

    logs = np.log(np.asarray(ratios))
    out: dict[str, Any] = {"n": len(ratios), "median": round(float(np.median(ratios)), 2),
                           "geometric_mean": round(float(np.exp(logs.mean())), 2),
                           "min": round(min(ratios), 2), "max": round(max(ratios), 2), "per_pair": ratios}
    if len(ratios) >= 2:
        half = float(stats.t.ppf(0.975, len(ratios) - 1) * logs.std(ddof=1) / np.sqrt(len(ratios)))
        out["ci95_geometric_mean"] = [round(float(np.exp(logs.mean() - half)), 2),
                                      round(float(np.exp(logs.mean() + half)), 2)]
    else:
        out["ci95_geometric_mean"] = None  # one pair: no interval
    return out


def _pair(i: int, path: Path, work: Path, ctx: Context, reference: bool) -> dict[str, Any]:
    first_ours = i % 2 == 0
    row: dict[str, Any] = {"pair": i, "order": "ours first" if first_ours or not reference else "reference first"}
    if first_ours or not reference:
        row["ours"] = _ours(path, work)
    if reference:
        row["reference"] = _reference(path, work, ctx)
    if "ours" not in row:
        row["ours"] = _ours(path, work)
    ref, ours = row.get("reference"), row["ours"]
    if ref is not None and ref["status"] == "ran" and ours["status"] == "ran":
        row["ratio"] = round(ref["total_s"] / ours["scores_written_s"], 2)  # run + scores on both sides
        row["ratio_with_our_report"] = round(ref["total_s"] / ours["wall_s"], 2)
    return row


def _one(name: str, options: Options, ctx: Context, work: Path, hub: Path) -> dict[str, Any]:
    from bench.reproduce_agree import reference_scores, same_runs
    from bench.reproduce_files import METHODOLOGY, derived

    source = ROOT / "bench" / "experiments" / name.split("/", 1)[1] if name.startswith("bench/") else METHODOLOGY / name
    path = derived(source, work, hub)
    row: dict[str, Any] = {"file": name, "derived": str(path), "pairs": []}
    clock = time.perf_counter()
    for i in range(options.pairs):
        ctx.log(f"{name}: pair {i + 1} of at most {options.pairs}")
        start = time.perf_counter()
        row["pairs"].append(_pair(i, path, work, ctx, options.reference))
        last, spent = time.perf_counter() - start, time.perf_counter() - clock
        if "ratio" not in row["pairs"][-1] or spent + last > options.file_budget_s:
            break
    first = row["pairs"][0]
    row["ours"] = first["ours"]
    if options.reference:
        row["reference"] = first["reference"]
        row["same_decision"] = all(p["reference"]["status"] == p["ours"]["status"] for p in row["pairs"])
        ratios = [p["ratio"] for p in row["pairs"] if "ratio" in p]
        if ratios:
            row["ratio"] = _interval(ratios)
            row["ratio_with_our_report"] = _interval([p["ratio_with_our_report"] for p in row["pairs"]])
            row["reference_runs_scored_here"] = reference_scores(path)
    if row["pairs"][-1]["ours"]["status"] == "ran":
        row["same_runs"] = same_runs(path, Path(row["pairs"][-1]["ours"]["out"]))
    return row


def run(ctx: Context, options: Options) -> dict[str, Any]:
    from bench.reproduce_files import hub_copy

    work = (ROOT / options.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    hub = hub_copy(work)
    rows = []
    for name in options.files:
        rows.append(_one(name, options, ctx, work, hub))
        ratio = rows[-1].get("ratio")
        ctx.log(f"{name}: " + (f"{ratio['median']}x (median of {ratio['n']})" if ratio else "no ratio"))
    ctx.used_seeds([0])  # get_strategy_scores and ours: NumPy seeded with 0 before scoring (reproduce_agree)
    return {"files": rows, "how": __doc__}


BENCHMARK = Benchmark("reproduce_field", "searchlab reproduce vs autotuning_experiment on the field's files", Options,
                      run, cited_by=("docs/study.md",))
