"""The newcomer walk (issue 46, first "done when" item), scripted: every printed command run as printed.

A user on a set-up checkout runs ``make demo``, follows the verdict's ``use it:`` command, presses
Ctrl-C in a run and pastes the printed resume line, runs a sweep, pastes the study command it ends
with, and opens the report. Each step runs in a fresh ``bash -c`` with a clean environment (no
``PYTHONPATH``, no activated venv, ``PATH`` the system's), in the checkout root, and takes its command
from the line the previous step printed. A pasted command that fails is a product bug (fix it there,
not here).

    cpuslot --exclusive python3 bench/newcomer_walk.py            # writes bench/results/newcomer_walk.json

Exit status 1 when any step fails. ``SEARCHLAB_CACHE_DIR`` is passed through when set (say which).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
from contextlib import closing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SLOW = ["problem=synthetic_dag", "searcher=random", "problem.delay_s=0.2"]
SWEEP = ["-m", "problem=kernel_tuner_cache", "problem.path=../shared/data/kernel_tuner/convolution_A100.json.gz",
         "searcher=auto,random", "seed=0,1"]


def clean_env() -> dict[str, str]:
    """What a fresh login shell has: no PYTHONPATH, no VIRTUAL_ENV, the system PATH."""
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": SYSTEM_PATH, "LANG": "C.UTF-8",
           "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
    if os.environ.get("SEARCHLAB_CACHE_DIR"):
        env["SEARCHLAB_CACHE_DIR"] = os.environ["SEARCHLAB_CACHE_DIR"]
    futhark = ROOT / ".futhark"
    if futhark.is_symlink():  # a worktree sharing the main checkout's compiler: relink to the real prefix
        env["FUTHARK_PREFIX"] = str(futhark.resolve())
    return env


def shell(command: str, timeout: float = 900) -> tuple[int, str, float]:
    """``command`` pasted into a fresh shell in the checkout root: (status, stdout+stderr, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=clean_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, time.monotonic() - t0


def after(text: str, marker: str) -> tuple[str, str] | None:
    """The last printed line holding ``marker``, and what follows the marker on it."""
    lines = [x for x in text.splitlines() if marker in x]
    return (lines[-1].strip(), lines[-1].split(marker, 1)[1].strip()) if lines else None


def step(name: str, command: str, status: int, seconds: float, took: str | None, checks: dict[str, bool],
         **extra: Any) -> dict[str, Any]:
    ok = all(checks.values())
    print(f"[{'pass' if ok else 'FAIL'}] {name} ({seconds:.1f} s, exit {status}): {command}", flush=True)
    for what, good in checks.items():
        if not good:
            print(f"    failed: {what}", flush=True)
    return {"step": name, "command": command, "exit": status, "seconds": round(seconds, 2),
            "took_command_from": took, "checks": checks, "passed": ok, **extra}


def demo(args: str) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """Step 1, and the printed 'use it:' line with its command."""
    command = f"make demo{' ARGS=' + repr(args) if args else ''}"
    status, out, seconds = shell(command)
    wrote = re.search(r"searchlab: verdict: wrote (/\S+\.tuning): ", out)
    use = after(out, "use it: ")
    summary_line = after(out, "summary: ")
    tuning = Path(wrote.group(1)) if wrote else None
    summary = json.loads(Path(summary_line[1]).read_text()) if summary_line else {}
    written = {}
    if tuning is not None and tuning.is_file():
        pairs = (line.split("=", 1) for line in tuning.read_text().splitlines() if "=" in line)
        written = {k.strip(): int(v) for k, v in pairs}
    recommended = (summary.get("recommended") or {}).get("config")
    checks = {"exit 0": status == 0, "the verdict names an absolute .tuning path": tuning is not None,
              "the .tuning file exists": tuning is not None and tuning.is_file(),
              "the verdict prints a 'use it:' command": use is not None,
              'summary.json["recommended"]["config"] equals the .tuning file': bool(written) and
              {k: int(v) for k, v in (recommended or {}).items()} == written}
    tail = out.strip().splitlines()[-12:]
    return step("1 make demo", command, status, seconds, None, checks, tuning_file=str(tuning),
                recommended=recommended, output_tail=tail), use


def use_it(line: str, command: str) -> dict[str, Any]:
    status, out, seconds = shell(command)
    used = [x for x in out.splitlines() if ".tuning" in x or "tuning" in x.lower()]
    checks = {"exit 0": status == 0, "its output says it used the tuning file": bool(used)}
    return step("2 the verdict's 'use it' command", command, status, seconds, line, checks,
                tuning_lines=used[:4], output_tail=out.strip().splitlines()[-8:])


def _newest_db(since: float) -> Path | None:
    found = [p for p in (ROOT / "outputs").rglob("results.db") if p.stat().st_mtime >= since]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _count(db: Path, sql: str) -> int:
    try:
        with closing(sqlite3.connect(db)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


def interrupt_and_resume(evaluations: int, at: int) -> list[dict[str, Any]]:
    """Ctrl-C (SIGINT to the foreground process group, as a terminal sends it) after ``at`` evaluations."""
    args = " ".join([*SLOW, f"budget.evaluations={evaluations}"])
    command = f"make demo ARGS={args!r}"
    t0, started = time.monotonic(), time.time() - 1
    proc = subprocess.Popen(["bash", "-c", command], cwd=ROOT, env=clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    db, search = None, "SELECT COUNT(*) FROM evaluations WHERE candidate_id >= 0"
    while proc.poll() is None and time.monotonic() - t0 < 600:
        db = _newest_db(started) or db
        if db is not None and _count(db, search) >= at:
            break
        time.sleep(0.2)
    before = _count(db, search) if db else 0
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=300)
    status = 128 - proc.returncode if proc.returncode < 0 else proc.returncode  # bash's $? for a signal death
    resume = after(out, "resume with: ")
    first = step("3a Ctrl-C a run", command, status, time.monotonic() - t0, None,
                 {"exit 130": status == 130, "a 'resume with:' line was printed": resume is not None,
                  "no traceback": "Traceback" not in out},
                 evaluations_before_ctrl_c=before, output_tail=out.strip().splitlines()[-6:])
    if resume is None or db is None:
        return [first]
    status, out, seconds = shell(resume[1])
    rows = _count(db, search)
    distinct = _count(db, "SELECT COUNT(DISTINCT config_key) FROM evaluations WHERE candidate_id >= 0")
    state = _count(db, "SELECT COUNT(*) FROM runs WHERE status = 'finished'")
    second = step("3b paste the resume line", resume[1], status, seconds, resume[0],
                  {"exit 0": status == 0, f"all {evaluations} evaluations recorded": rows == evaluations,
                   "no duplicate configurations": distinct == rows, "the run is finished": state == 1},
                  results_db=str(db), evaluations=rows, distinct_configs=distinct,
                  output_tail=out.strip().splitlines()[-4:])
    return [first, second]


def sweep(evaluations: int) -> tuple[list[dict[str, Any]], Path | None]:
    command = " ".join([".venv/bin/python -m searchlab", *SWEEP, f"budget.evaluations={evaluations}"])
    status, out, seconds = shell(command)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    study = last.split("searchlab: compare the runs: ", 1)[1] if "compare the runs: " in last else None
    first = step("4a a sweep", command, status, seconds, None,
                 {"exit 0": status == 0, "it ends with the study command": study is not None},
                 output_tail=out.strip().splitlines()[-4:])
    if study is None:
        return [first], None
    status, out, seconds = shell(study)
    report = Path(study.rsplit(" ", 1)[1].strip("'")) / "study" / "report.html"
    second = step("4b paste the study command", study, status, seconds, last,
                  {"exit 0": status == 0, "report.html exists": report.is_file()}, report=str(report),
                  output_tail=out.strip().splitlines()[-4:])
    return [first, second], report if report.is_file() else None


def open_report(report: Path) -> dict[str, Any]:
    """Headless Chromium takes a screenshot; every <img>/<svg> reference in the page resolves."""
    html = report.read_text()
    refs = re.findall(r"<(?:img|image|use)\b[^>]*?\b(?:src|href|xlink:href)=[\"']([^\"']+)[\"']", html)
    missing = [r for r in refs if not r.startswith(("data:", "#"))
               and not (report.parent / urllib.parse.unquote(r.split("#")[0])).is_file()]
    shot = Path(tempfile.mkdtemp()) / "report.png"
    profile = tempfile.mkdtemp()
    command = ("chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
               "--disable-background-networking --disable-component-update --disable-sync "
               f"--user-data-dir={profile} --window-size=1280,2000 --screenshot={shot} {shlex.quote(report.as_uri())}")
    status, _, seconds = shell(command, timeout=120)
    size = shot.stat().st_size if shot.is_file() else 0
    return step("5 open the report", command, status, seconds, str(report),
                {"exit 0": status == 0, "a non-empty screenshot": size > 1000,
                 "every <img>/<svg> reference resolves": not missing},
                screenshot_bytes=size, references=len(refs), svg_inline=html.count("<svg"), missing=missing)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo-args", default="", help="ARGS for make demo (default: none, the real demo)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "newcomer_walk.json")
    opts = ap.parse_args()
    stamp, venv = ROOT / ".venv" / ".installed", ROOT / ".venv"
    if venv.is_symlink() and stamp.exists() and stamp.stat().st_mtime < (ROOT / "pyproject.toml").stat().st_mtime:
        print("newcomer_walk: .venv is shared and older than pyproject.toml: make would reinstall into it",
              file=sys.stderr)
        return 2
    t0 = time.time()
    steps: list[dict[str, Any]] = []
    first, use = demo(opts.demo_args)
    steps.append(first)
    if use is not None:
        steps.append(use_it(*use))
    steps += interrupt_and_resume(evaluations=40, at=8)
    found, report = sweep(evaluations=30)
    steps += found
    if report is not None:
        steps.append(open_report(report))
    expected = 7  # 1, 2, 3a, 3b, 4a, 4b, 5
    ok = len(steps) == expected and all(s["passed"] for s in steps)
    result = {"passed": ok, "steps": steps, "seconds": round(time.time() - t0, 1), "cwd": str(ROOT),
              "environment": sorted(clean_env()), "searchlab_cache_dir": os.environ.get("SEARCHLAB_CACHE_DIR"),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))}
    opts.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"newcomer walk: {'passed' if ok else 'FAILED'} ({sum(s['passed'] for s in steps)} of {expected} "
          f"steps) in {result['seconds']} s -> {opts.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
