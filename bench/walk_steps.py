"""What the walk (bench/walk.py) needs besides its steps: the README's commands, a busy machine, the report."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from bench.harness import Context
from bench.silence import LIMIT_S, ROOT, timed


def readme_commands() -> list[str]:
    """The commands of the README's bash blocks, continuation lines joined, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #")[0].strip()
            if command:
                out.append(" ".join(command.split()))
    return out


def sqlite_count(db: Path, sql: str) -> int:
    try:
        with closing(sqlite3.connect(db)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


@contextmanager
def busy(n: int) -> Iterator[dict[str, Any]]:
    """``n`` processes that keep cores busy for the block (stress-ng --cpu n, else ``yes``), as on the trial's
    machine; yields what was started and the load average seen."""
    info: dict[str, Any] = {"processes": n, "tool": None}
    if n <= 0:
        yield info
        return
    if shutil.which("stress-ng"):
        procs = [subprocess.Popen(["stress-ng", "--cpu", str(n), "--quiet"], start_new_session=True)]
        info["tool"] = f"stress-ng --cpu {n}"
    else:
        procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL, start_new_session=True) for _ in range(n)]
        info["tool"] = f"{n} x yes > /dev/null"
    try:
        yield info
    finally:
        info["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()


def open_report(ctx: Context, report: Path) -> dict[str, Any]:
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
    run = timed(command, timeout=120)
    size = shot.stat().st_size if shot.is_file() else 0
    checks = {"exit 0": run.status == 0, "a non-empty screenshot": size > 1000,
              "every <img>/<svg> reference resolves": not missing}
    ok = all(checks.values())
    ctx.log(f"[{'pass' if ok else 'FAIL'}] open the report: {run.seconds:.1f} s")
    # a browser's own silence is not ours: not held to the limit
    return {"step": "open the report", "exit": run.status, "seconds": round(run.seconds, 2), "checks": checks,
            "passed": ok, "screenshot_bytes": size, "references": len(refs), "missing": missing,
            "limit_s": LIMIT_S}
