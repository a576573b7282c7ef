"""The newcomer walk, scripted (issues 46 and 54): every printed command pasted as printed, and the longest
silence of each.

A user sets up a fresh checkout, runs ``make demo``, pastes the command its verdict prints (``use it:`` when a
``.tuning`` was written, ``check it later:`` when the default was kept), presses Ctrl-C in a run and pastes
the resume line, tunes a kernel, runs the README's sweep, pastes the study command it ends with, opens the
report, runs a shipped study and reproduces a published comparison. Each step runs in a fresh shell with a
clean environment (bench/silence.py) and records its exit status, seconds, checks and its **longest
silence**: issue 54 asks for at most 10 s everywhere (``within_limit``).

    cpuslot --exclusive .venv/bin/python -m bench walk                  # -> bench/results/walk.json
    cpuslot --exclusive .venv/bin/python -m bench walk --load 2         # with both cores kept busy (stress-ng)
    .venv/bin/python -m bench walk --setup fresh --skip reproduce       # set-up in a fresh clone and venv

A failed paste is a product bug (fix it in the product, with a test).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import Benchmark, Context
from bench.silence import LIMIT_S, ROOT, Timed, after, clean_env, timed
from bench.walk_steps import busy, open_report, readme_commands, sqlite_count

STEPS = ("setup", "demo", "use", "interrupt", "kernel", "sweep", "study", "report", "shipped_study", "reproduce")


@dataclass(frozen=True)
class Options:
    setup: str = "again"  # fresh: a clone with a new .venv; again: `make setup` with its stamp removed; skip
    demo_args: str = ""  # ARGS for make demo (default: none, the real demo)
    load: int = 0  # processes kept busy during the walk (stress-ng --cpu N, else `yes`)
    kernel_evaluations: int = 30
    sweep_seeds: int = 0  # 0: the README's sweep as written; N: its first N seeds
    skip: list[str] = field(default_factory=list)  # steps to leave out (see STEPS)


def _step(ctx: Context, name: str, run: Timed, checks: dict[str, bool], **extra: Any) -> dict[str, Any]:
    checks = {**checks, f"never silent > {LIMIT_S:.0f} s": run.longest_silence_s <= LIMIT_S}
    ok = all(checks.values())
    ctx.log(f"[{'pass' if ok else 'FAIL'}] {name}: {run.seconds:.1f} s, exit {run.status}, longest silence "
            f"{run.longest_silence_s:.1f} s (ended at: {run.silence_before[:100]})")
    for what, good in checks.items():
        if not good:
            ctx.log(f"    failed: {what}")
    return {"step": name, **run.as_dict(), "checks": checks, "passed": ok, **extra,
            "output_tail": run.lines[-8:]}


def setup(ctx: Context, mode: str) -> dict[str, Any]:
    if mode == "fresh":  # a clone of this commit, a new .venv: the first set-up a user sees
        where = Path(tempfile.mkdtemp(prefix="searchlab-walk-"))
        subprocess.run(["git", "clone", "-q", str(ROOT), str(where / "checkout")], check=True)
        run = timed("make setup", cwd=where / "checkout", env=clean_env(ROOT))
        shutil.rmtree(where, ignore_errors=True)
    else:
        (ROOT / ".venv" / ".installed").unlink(missing_ok=True)  # make reinstalls, as after a pyproject change
        run = timed("make setup")
    return _step(ctx, f"set-up ({mode})", run, {"exit 0": run.status == 0})


def demo(ctx: Context, args: str, loaded: bool) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """``make demo``; it hands over a written .tuning (``use it:``) or the candidate (``check it later:``)."""
    run = timed(f"make demo{' ARGS=' + shlex.quote(args) if args else ''}")
    out = run.output
    wrote = re.search(r"searchlab: verdict: wrote (/\S+\.tuning): ", out)
    kept = re.search(r"is in (/\S+\.candidate\.tuning)$", out, flags=re.M)
    use = after(out, "use it: ") if wrote else after(out, "check it later: ")
    summary_line = after(out, "summary: ")
    summary = json.loads(Path(summary_line[1]).read_text()) if summary_line else {}
    handed = Path(wrote.group(1) if wrote else kept.group(1) if kept else "/nonexistent")
    load_at = next((i for i, line in enumerate(run.lines) if line.startswith("searchlab: load: ")), None)
    search_at = next((i for i, line in enumerate(run.lines) if line.startswith("[")), None)
    checks = {"exit 0": run.status == 0,
              "a .tuning was written or the candidate's absolute path named": handed.is_absolute() and handed.is_file(),
              "a command to paste (use it / check it later)": use is not None,
              "summary.json names what it hands over": bool((summary.get("recommended") or {}).get(
                  "tuning_file" if wrote else "candidate_tuning_file"))}
    if load_at is not None or loaded:  # under load: the load line comes before the search's first line
        checks["the load line before the search"] = load_at is not None and (search_at is None or load_at < search_at)
    return _step(ctx, "make demo", run, checks, handed_over=str(handed), wrote_tuning=bool(wrote),
                 load_line=run.lines[load_at] if load_at is not None else None,
                 verdict=summary.get("verdict"), confirm_stopped=(summary.get("confirm") or {}).get("stopped")), use


def paste(ctx: Context, name: str, printed: tuple[str, str]) -> dict[str, Any]:
    """The verdict's ``futhark bench`` command as printed: it times every dataset with the handed-over file
    (``use it:`` finds ``lud.fut.tuning`` beside the program; ``check it later:`` passes the candidate)."""
    run = timed(printed[1])
    uses = "lud.fut" in printed[1] and ("--tuning=" in printed[1] or "--no-tuning" not in printed[1])
    return _step(ctx, name, run, {"exit 0": run.status == 0, "it passes the handed-over file": uses,
                                  "every dataset timed": run.output.count("95% CI") >= 2},
                 took_command_from=printed[0])


def interrupt(ctx: Context, evaluations: int = 40, at: int = 8) -> list[dict[str, Any]]:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) after ``at`` evaluations; paste the resume."""
    args = f"problem=synthetic_dag searcher=random problem.delay_s=0.2 budget.evaluations={evaluations}"
    started = time.time() - 1
    search = "SELECT COUNT(*) FROM evaluations WHERE candidate_id >= 0"

    def enough(_: list[tuple[float, str]]) -> bool:
        dbs = [p for p in (ROOT / "outputs").rglob("results.db") if p.stat().st_mtime >= started]
        return bool(dbs) and sqlite_count(max(dbs, key=lambda p: p.stat().st_mtime), search) >= at

    run = timed(f"make demo ARGS={shlex.quote(args)}", until=enough)
    resume = after(run.output, "resume with: ")
    # searchlab's own status: make reports it ("Error 130") and, depending on when its SIGINT arrived, exits 2 itself
    searchlab = run.status == 130 or "Error 130" in run.output
    first = _step(ctx, "Ctrl-C a run", run, {"searchlab exited 130": searchlab, "a resume line": resume is not None,
                                             "no traceback": "Traceback" not in run.output})
    if resume is None:
        return [first]
    again = timed(resume[1])
    return [first, _step(ctx, "paste the resume line", again, {"exit 0": again.status == 0}, took_command_from=resume[0])]


def kernel(ctx: Context, evaluations: int) -> dict[str, Any]:
    command = next(c for c in readme_commands() if "problem=opencl_kernel" in c)
    run = timed(f"{command} budget.evaluations={evaluations}")
    return _step(ctx, "a kernel run", run, {"exit 0": run.status == 0, "a verdict": "searchlab: verdict: " in run.output})


def sweep(ctx: Context, seeds: int) -> tuple[list[dict[str, Any]], Path | None]:
    command = next(c for c in readme_commands() if " -m problem=" in c)
    if seeds:
        command = re.sub(r"seed=[\d,]+", "seed=" + ",".join(map(str, range(seeds))), command)
    run = timed(command)
    last = run.lines[-1] if run.lines else ""
    study = last.split("searchlab: compare the runs: ", 1)[1] if "compare the runs: " in last else None
    steps = [_step(ctx, "a sweep", run, {"exit 0": run.status == 0, "it ends with the study command": bool(study)})]
    if study is None:
        return steps, None
    done = timed(study)
    report = Path(shlex.split(study)[-1]) / "study" / "report.html"
    steps.append(_step(ctx, "paste the study command", done,
                       {"exit 0": done.status == 0, "report.html exists": report.is_file(),
                        "the study's verdict on the terminal": "searchlab.study: verdict: " in done.output},
                       took_command_from=last, verdict=[x for x in done.lines if "verdict: " in x]))
    return steps, report if report.is_file() else None


def shipped_study(ctx: Context) -> dict[str, Any]:
    command = next(c for c in readme_commands() if "study=" in c)
    run = timed(command)
    return _step(ctx, "a shipped study", run, {"exit 0": run.status == 0,
                                               "the study's verdict on the terminal": "verdict: " in run.output})


def reproduce(ctx: Context) -> dict[str, Any]:
    command = next(c for c in readme_commands() if " reproduce " in c)
    out = Path(tempfile.mkdtemp(prefix="searchlab-walk-reproduce-"))
    run = timed(command.replace("--out outputs/reproduce", f"--out {out}"))
    shutil.rmtree(out, ignore_errors=True)
    return _step(ctx, "reproduce", run, {"exit 0": run.status == 0})


def walk(ctx: Context, opts: Options) -> dict[str, Any]:
    unknown = set(opts.skip) - set(STEPS)
    if unknown:
        raise SystemExit(f"--skip: unknown steps {sorted(unknown)} (known: {', '.join(STEPS)})")

    def todo(name: str) -> bool:
        return name not in opts.skip

    steps: list[dict[str, Any]] = []
    with busy(opts.load) as load:
        if todo("setup") and opts.setup != "skip":
            steps.append(setup(ctx, opts.setup))
        if todo("demo"):
            first, printed = demo(ctx, opts.demo_args, opts.load > 0)
            steps.append(first)
            if todo("use") and printed is not None:
                steps.append(paste(ctx, "the verdict's command", printed))
        if todo("interrupt"):
            steps += interrupt(ctx)
        if todo("kernel"):
            steps.append(kernel(ctx, opts.kernel_evaluations))
        if todo("sweep"):
            found, report = sweep(ctx, opts.sweep_seeds)
            steps += [s for s in found if todo("study") or s["step"] == "a sweep"]
            if todo("report") and report is not None:
                steps.append(open_report(ctx, report))
        if todo("shipped_study"):
            steps.append(shipped_study(ctx))
        if todo("reproduce"):
            steps.append(reproduce(ctx))
    silences = {s["step"]: s.get("longest_silence_s") for s in steps if "longest_silence_s" in s}
    return {"passed": all(s["passed"] for s in steps), "load": load, "longest_silence_s": silences,
            "all_within_limit": all(v is not None and v <= LIMIT_S for v in silences.values()), "steps": steps}


BENCHMARK = Benchmark("walk", "the newcomer walk: every printed command pasted, the longest silence of each",
                      Options, walk, cited_by=("docs/testing.md",))
