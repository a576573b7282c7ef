"""Faults a hostile probe found (issue 37): each must end in one line and a documented exit status,
with nothing lost and nothing left behind. Every test here fails on the code before the fix.

Runs are small and in process (``executor=serial``) unless the fault is Ray's (``@pytest.mark.ray``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from searchlab.cli.main import precheck, run_command

SERIAL = ["executor=serial", "progress=off", "plot=false"]


def _table(path: Path, offset: float = 0.0, knobs: int = 4) -> Path:
    payload = {"format": "searchlab-table/1", "direction": "minimize",
               "space": {"knobs": [{"name": "a", "kind": "int", "low": 0, "high": knobs - 1}]},
               "rows": [{"config": {"a": a}, "status": "ok", "objective": float(a + 1) + offset} for a in range(knobs)]}
    path.write_text(json.dumps(payload))
    return path


def _run(tmp: Path, *args: str) -> tuple[int, list[str], Path]:
    """One run of the command line in process: (status, stderr lines, its run directory)."""
    run_dir = tmp / "run"
    status = run_command([*args, *SERIAL, f"hydra.run.dir={run_dir}"])
    return status, [], run_dir


def _status_err(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = run_command([*argv, "progress=off", "plot=false"])
    return status, capsys.readouterr().err.strip().splitlines()


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None,
         timeout: float = 180) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "searchlab", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})))


def _one_line(err: list[str], needle: str) -> None:
    # the load line (searchlab.run.load) and the start's heartbeat depend on how busy the machine is, not the input
    lines = [line for line in err if not line.startswith(("searchlab: note:", "searchlab: load:", "searchlab: start:"))]
    assert len(lines) == 1 and lines[0].startswith("searchlab: error: ") and needle in lines[0], err
    assert "Traceback" not in "\n".join(err)


def _dump(db: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:  # read-write: a read-only connection would leave -wal/-shm behind
        return [*conn.execute("SELECT * FROM evaluations ORDER BY id"), *conn.execute("SELECT * FROM runs"),
                *conn.execute("SELECT id, run_id, pid FROM sessions")]


@pytest.fixture()
def table_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.chdir(tmp_path)
    table = _table(tmp_path / "t.json")
    status, _, run_dir = _run(tmp_path, "problem=table", f"problem.path={table}", "searcher=random",
                              "budget.evaluations=2")
    assert status == 0
    return table, run_dir


# -- item 2: a resume checks what it resumes ---------------------------------------------------------
def test_resume_refuses_a_table_replaced_under_the_same_path(table_run: tuple[Path, Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    table, run_dir = table_run
    capsys.readouterr()
    _table(table, offset=5.0)  # another device's measurements, same path
    before = _dump(run_dir / "results.db")
    status, err = _status_err([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"], capsys)
    assert status == 2
    _one_line(err, f"{table} (the problem reads) changed content")
    assert _dump(run_dir / "results.db") == before
    assert not list(run_dir.glob("results.db-*"))  # item 11: a refused resume leaves no -wal/-shm


def test_resume_changed_true_continues_as_a_new_session_recorded_as_such(table_run: tuple[Path, Path],
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    table, run_dir = table_run
    _table(table, offset=5.0)
    status, err = _status_err([f"resume={run_dir}", "budget.evaluations=4", "executor=serial", "resume_changed=true"],
                              capsys)
    assert status == 0, err
    with sqlite3.connect(run_dir / "results.db") as conn:
        notes = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'session:%'").fetchall())
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert sessions == 2 and list(notes) == ["session:2:changed"] and str(table) in notes["session:2:changed"]


def test_resume_refuses_an_edited_command_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text("knobs: {n: [1, 2, 3]}\nrun: [true]\n")
    status, _, run_dir = _run(tmp_path, "problem=command", f"problem.spec={spec}", "searcher=random",
                              "budget.evaluations=1")
    assert status == 0
    spec.write_text("knobs: {n: [1, 2, 3]}\nrun: [false]\n")
    capsys.readouterr()
    status, err = _status_err([f"resume={run_dir}", "budget.evaluations=2", "executor=serial"], capsys)
    assert status == 2
    _one_line(err, "changed content")


# -- item 4: one writer per run ------------------------------------------------------------------------
def test_a_second_writer_is_refused_naming_the_live_process(table_run: tuple[Path, Path],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from searchlab.core.store import RunStore

    _, run_dir = table_run
    live = RunStore.open(run_dir)  # this process writes the run now
    try:
        capsys.readouterr()
        status, err = _status_err([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"], capsys)
    finally:
        live.close()
    assert status == 2
    _one_line(err, f"being written by live process {os.getpid()}")


def test_the_lock_does_not_outlive_its_holder(table_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, run_dir = table_run
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from searchlab.core.runlock import RunLock; "
                               f"RunLock(__import__('pathlib').Path({str(run_dir / 'results.db')!r})); print('held', "
                               "flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    assert precheck([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"]) == 2
    holder.kill()
    holder.wait()
    capsys.readouterr()
    status, err = _status_err([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"], capsys)
    assert status == 0, err


def test_cache_refuses_a_runs_results_db(table_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table, run_dir = table_run
    before = _dump(run_dir / "results.db")
    status = precheck(["problem=table", f"problem.path={table}", "executor=serial", f"cache={run_dir / 'results.db'}"])
    assert status == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), "is a run's records (results.db), not a cache")
    with sqlite3.connect(run_dir / "results.db") as conn:
        assert "cache" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert _dump(run_dir / "results.db") == before


# -- item 7: corrupt records are one line, exit 2 ------------------------------------------------------
def _corrupt(run_dir: Path, sql: str) -> None:
    with sqlite3.connect(run_dir / "results.db") as conn:
        conn.execute(sql)


CORRUPT = {"config": "UPDATE runs SET config='{not json'", "status": "UPDATE evaluations SET status='BOGUS'"}


@pytest.mark.parametrize("damage", list(CORRUPT))
@pytest.mark.parametrize("reader", ["resume", "prior", "study", "export"])
def test_corrupt_records_are_one_line_exit_2(table_run: tuple[Path, Path], damage: str, reader: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    table, run_dir = table_run
    _corrupt(run_dir, CORRUPT[damage])
    capsys.readouterr()
    if reader == "resume":
        status = precheck([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"])
    elif reader == "prior":
        status = precheck(["problem=table", f"problem.path={table}", "searcher=transfer", f"prior=[{run_dir}]",
                           "executor=serial"])
    elif reader == "study":
        from searchlab.study.__main__ import main as study

        status = study([str(run_dir), "--out", str(run_dir.parent / "study")])
    else:
        from searchlab.export import main as export

        status = export(["t4", str(run_dir), "-o", str(run_dir.parent / "t4.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2, err
    assert len(err) == 1 and "error: " in err[0] and "damaged" in err[0], err
    assert not (run_dir.parent / "study").exists() and not (run_dir.parent / "t4.json").exists()


def test_a_cache_with_a_bad_entry_is_refused_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.core.cache import SQLiteCache

    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache.db"
    SQLiteCache(cache).close()
    with sqlite3.connect(cache) as conn:
        conn.execute("INSERT INTO cache VALUES ('x', '{\"a\": 1}', '{not json', 0)")
    table = _table(tmp_path / "t.json")
    status, err = _status_err(["problem=table", f"problem.path={table}", "executor=serial", f"cache={cache}",
                               "budget.evaluations=3"], capsys)
    assert status == 2
    _one_line(err, "the cache is damaged")
    assert not (tmp_path / "outputs").exists()  # no run stuck at status=running


# -- item 3: bounded reads ----------------------------------------------------------------------------
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
) + "knobs: {n: [1]}\nrun: [true]\n"


def _bomb(path: Path, megabytes: int) -> Path:
    import gzip

    with gzip.open(path, "wb", compresslevel=9) as fh:
        for _ in range(megabytes):
            fh.write(b" " * (1 << 20))
    return path


@pytest.mark.parametrize("case", ["table /dev/zero", "kt /dev/zero", "prior /dev/zero", "t4 fifo", "gzip bomb",
                                  "billion laughs", "bad cap"])
def test_reads_are_bounded(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    table = _table(tmp_path / "t.json")
    argv, needle = {
        "table /dev/zero": (["problem=table", "problem.path=/dev/zero"], "not a regular file"),
        "kt /dev/zero": (["problem=kernel_tuner_cache", "problem.path=/dev/zero"], "not a regular file"),
        "prior /dev/zero": (["problem=table", f"problem.path={table}", "searcher=transfer", "prior=[/dev/zero]"],
                            "not a regular file"),
        "t4 fifo": (["problem=t4", f"problem.path={tmp_path / 'fifo.json'}"], "not a regular file"),
        "gzip bomb": (["problem=table", f"problem.path={tmp_path / 'bomb.json.gz'}"], "inflates to more than 1 MB"),
        "billion laughs": (["problem=command", f"problem.spec={tmp_path / 'laughs.yaml'}"], "through its aliases"),
        "bad cap": (["problem=table", f"problem.path={table}"], "SEARCHLAB_MAX_READ_MB='lots'"),
    }[case]
    if case == "t4 fifo":
        os.mkfifo(tmp_path / "fifo.json")  # a reader that opened it would wait for ever
    if case == "gzip bomb":
        _bomb(tmp_path / "bomb.json.gz", 4)
        monkeypatch.setenv("SEARCHLAB_MAX_READ_MB", "1")
    if case == "billion laughs":
        (tmp_path / "laughs.yaml").write_text(LAUGHS)
    if case == "bad cap":
        monkeypatch.setenv("SEARCHLAB_MAX_READ_MB", "lots")
    before = set(tmp_path.rglob("*"))
    assert precheck([*argv, "executor=serial"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), needle)
    assert set(tmp_path.rglob("*")) == before


def test_the_gzip_cap_stops_inflating_at_the_cap() -> None:
    """The decompressed size is capped while inflating, not after: a bomb never lies whole in memory."""
    import gzip

    from searchlab.core import files
    from searchlab.errors import ConfigError

    raw = gzip.compress(b" " * (3 << 20))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEARCHLAB_MAX_READ_MB", "1")
        with pytest.raises(ConfigError, match="inflates to more than 1 MB"):
            files._gunzip(raw, Path("x.gz"), "table", files.max_bytes())
    assert files.load_yaml("a: &x [1]\nb: *x\n", "spec") == {"a": [1], "b": [1]}  # a few aliases are fine


# -- items 1 and 5: the executor cannot hang or leak ---------------------------------------------------
def test_unknown_ray_auth_mode_is_refused_for_a_local_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_AUTH_MODE", "tokn")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert precheck(["problem=synthetic_knobs", "searcher=random", "executor=ray"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), "RAY_AUTH_MODE='tokn'")
    assert not list(tmp_path.iterdir())


def test_an_unreachable_address_is_refused_at_once(tmp_path: Path) -> None:
    out = _cli(tmp_path, "problem=synthetic_knobs", "searcher=random", "executor=ray", "executor.address=127.0.0.1:1",
               "executor.connect_timeout_s=2", timeout=60)
    assert out.returncode == 2
    _one_line(out.stderr.strip().splitlines(), "executor.address=127.0.0.1:1: no Ray cluster answers there")
    assert not list(tmp_path.iterdir())  # no run directory


def _spec(tmp: Path, run: list[str], **extra: object) -> Path:
    spec = tmp / "spec.yaml"
    spec.write_text(json.dumps({"knobs": {"n": [1, 2, 3]}, "run": run, "measure": {"min_runs": 1, "max_runs": 1},
                                **extra}))
    return spec


def _sleepers(marker: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_serial_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = "1000.3817"  # sleep's argument: names our processes in /proc
    spec = _spec(tmp_path, ["sh", "-c", f"sleep {marker}; true"], timeout_s=600)
    out = _cli(tmp_path, "problem=command", f"problem.spec={spec}", "searcher=random", "budget.evaluations=2",
               "executor=serial", "executor.timeout_s=1", "progress=off", "plot=false")
    assert out.returncode == 0, out.stderr
    assert _sleepers(marker) == []  # the shell and its sleep were killed with the evaluation


def test_a_catastrophic_objective_pattern_is_bounded_by_the_timeout(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ["printf", "a" * 40 + "!"], timeout_s=2,
                 objective={"kind": "stdout", "pattern": "^(a|a)+$"})  # 2^40 ways to fail for a backtracker
    out = _cli(tmp_path, "problem=command", f"problem.spec={spec}", "searcher=random", "budget.evaluations=1",
               "executor=serial", "progress=off", "plot=false", timeout=90)
    assert out.returncode == 0, out.stderr
    (summary,) = tmp_path.glob("outputs/*/*/summary.json")
    with closing(sqlite3.connect(summary.parent / "results.db")) as conn:
        assert conn.execute("SELECT status FROM evaluations").fetchall() == [("timeout",)]


@pytest.mark.ray
def test_ray_timeout_kills_the_process_group_and_leaves_no_scratch(tmp_path: Path) -> None:
    import tempfile

    marker = "1000.4729"
    scratch = set(Path(tempfile.gettempdir()).glob("searchlab-command-*"))
    spec = _spec(tmp_path, ["sh", "-c", f"sleep {marker}; true"], timeout_s=600)
    out = _cli(tmp_path, "problem=command", f"problem.spec={spec}", "searcher=random", "budget.evaluations=2",
               "executor=ray", "executor.workers=1", "executor.timeout_s=2", "progress=off", "plot=false", timeout=300)
    assert out.returncode == 0, out.stderr
    assert _sleepers(marker) == []
    assert set(Path(tempfile.gettempdir()).glob("searchlab-command-*")) <= scratch


# -- item 6 and issue 35: signals, start-up failures ---------------------------------------------------
def _start(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    import os

    return subprocess.Popen([sys.executable, "-m", "searchlab", *args], cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})))


def _wait_for_records(tmp: Path, at_least: int, seconds: float = 150) -> Path | None:
    import time

    deadline = time.time() + seconds
    while time.time() < deadline:
        for db in tmp.glob("outputs/*/*/results.db"):
            try:
                with closing(sqlite3.connect(db)) as conn:
                    if conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] >= at_least:
                        return db
            except sqlite3.Error:
                pass
        time.sleep(0.2)
    return None


def test_ctrl_c_says_how_far_the_run_got_and_how_to_resume(tmp_path: Path) -> None:
    import shlex
    import signal

    from searchlab.core.commands import command, override

    proc = _start(tmp_path, "problem=synthetic_dag", "searcher=random", "problem.delay_s=0.05",
                  "budget.evaluations=100000", *SERIAL)
    db = _wait_for_records(tmp_path, 3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert db is not None and proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("searchlab: interrupted after ") and lines[0].endswith(
        f" of 100000 evaluations; resume with: {command('searchlab', override('resume', db.parent.resolve()))}"), lines
    assert lines[0].split("resume with: ")[1].startswith(f"{shlex.quote(sys.executable)} -m searchlab ") or \
        lines[0].split("resume with: ")[1].startswith("searchlab ")  # never a bare python (issue 46, item 1)


def test_a_resumed_run_prints_absolute_paths(table_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, run_dir = table_run
    capsys.readouterr()
    status = run_command(["resume=run", "budget.evaluations=3", "progress=off", "plot=false"])  # relative, from cwd
    out = capsys.readouterr().out
    assert status == 0 and f"records: {run_dir.resolve()}/results.db" in out, out


@pytest.mark.ray
def test_sigterm_while_ray_waits_exits_143_with_the_summary(tmp_path: Path) -> None:
    """The driver blocks in ray.wait while the worker sleeps; Ray turned the handler's exception into a
    plain KeyboardInterrupt there (exit 130, 'interrupted ()')."""
    import signal

    proc = _start(tmp_path, "problem=synthetic_dag", "searcher=random", "problem.delay_s=1.5", "budget.evaluations=500",
                  "executor=ray", "executor.workers=1", "progress=off", "plot=false")
    db = _wait_for_records(tmp_path, 2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert db is not None and proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err and "interrupted after " in err
    assert json.loads((db.parent / "summary.json").read_text())["stop_reason"] == "interrupted"


@pytest.mark.ray
def test_sigterm_during_ray_start_up_writes_no_half_made_run(tmp_path: Path) -> None:
    import signal
    import time

    proc = _start(tmp_path, "problem=synthetic_dag", "searcher=random", "budget.evaluations=5", "executor=ray",
                  "progress=off", "plot=false")
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp_path.glob("outputs/*/*/.hydra")):
        time.sleep(0.05)
    time.sleep(1.0)  # inside ray.init: it takes several seconds
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]  # not SIGABRT (-6)
    assert "Traceback" not in err
    assert not list(tmp_path.glob("outputs/*/*/results.db")) and not list(tmp_path.glob("outputs/*/*"))


@pytest.mark.ray
def test_ray_oom_killer_at_start_up_is_one_line(tmp_path: Path) -> None:
    """Ray's memory monitor with a threshold every machine is above: it kills the evaluator as it starts."""
    out = _cli(tmp_path, "problem=synthetic_knobs", "searcher=random", "budget.evaluations=3", "executor=ray",
               "executor.workers=1", "executor.startup_timeout_s=60", "progress=off",
               env={"RAY_memory_usage_threshold": "0.01", "RAY_memory_monitor_refresh_ms": "50"}, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    _one_line(out.stderr.strip().splitlines(), "worker 0 ")
    assert "Traceback" not in out.stdout + out.stderr
    assert not list(tmp_path.glob("outputs/*/*/results.db"))


# -- item 8: a full disk (a real one: a tmpfs of 4 MB, mounted as root) ------------------------------
@pytest.fixture()
def tiny_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> Path:
    import os

    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_at_start_is_one_line_exit_1_and_nothing_kept(tiny_disk: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tiny_disk.parent)
    filler = _fill(tiny_disk)
    args = ["problem=synthetic_knobs", "searcher=random", "budget.evaluations=3", *SERIAL,
            f"hydra.run.dir={tiny_disk / 'run'}"]
    status = run_command(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    _one_line(err, "the disk is full")
    assert not (tiny_disk / "run").exists()
    filler.unlink()
    assert run_command(args) == 0


def test_a_full_disk_at_the_end_keeps_the_records_and_resumes(tiny_disk: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.run.lifecycle import Run

    monkeypatch.chdir(tiny_disk.parent)
    finish = Run.finish

    def fill_then_finish(self: Run) -> object:
        _fill(tiny_disk)
        return finish(self)

    monkeypatch.setattr(Run, "finish", fill_then_finish)
    run_dir = tiny_disk / "run"
    status = run_command(["problem=synthetic_knobs", "searcher=random", "budget.evaluations=4", "executor=serial",
                          "progress=off", f"hydra.run.dir={run_dir}"])
    err = [line for line in capsys.readouterr().err.strip().splitlines() if "warning: no best_so_far" not in line]
    assert status == 1
    _one_line(err, "evaluations recorded before are kept")
    assert not list(run_dir.glob("*.tmp*"))  # no stray best_so_far.tmp.png or summary.json.tmp
    monkeypatch.setattr(Run, "finish", finish)
    (tiny_disk / "filler").unlink()
    with closing(sqlite3.connect(run_dir / "results.db")) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] != "running"
        assert conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] == 4
    assert run_command([f"resume={run_dir}", "progress=off"]) == 0
    with closing(sqlite3.connect(run_dir / "results.db")) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone() == ("finished",)
    assert json.loads((run_dir / "summary.json").read_text())["evaluations"] == 4


# -- item 9: inputs that disagree with themselves -------------------------------------------------------
def _doc(knobs: list[dict[str, object]], rows: list[dict[str, object]]) -> dict[str, object]:
    return {"format": "searchlab-table/1", "direction": "minimize", "objective_name": "time",
            "space": {"knobs": knobs}, "rows": rows}


A = {"name": "a", "kind": "int", "low": 0, "high": 3}
B = {"name": "b", "kind": "int", "low": 0, "high": 1}


def _row(time: float, **config: int) -> dict[str, object]:
    return {"config": config, "status": "ok", "objective": time}


DISAGREE = {
    "knob removed from the space": (_doc([A], [_row(1.0, a=1, b=0)]), "has ['b']"),
    "extra knob in the space": (_doc([A, B], [_row(1.0, a=1)]), "lacks ['b']"),
    "no rows": (_doc([A], []), "holds no rows"),
    "value outside the space": (_doc([A], [_row(1.0, a=7)]), "a=7, not one of the space's values"),
    "negative time": (_doc([A], [_row(-5.0, a=1), _row(2.0, a=2)]), "time=-5: a time cannot be negative"),
}


@pytest.mark.parametrize("case", list(DISAGREE))
def test_a_table_that_disagrees_with_itself_is_refused(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    doc, needle = DISAGREE[case]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    assert precheck(["problem=table", f"problem.path={path}", "executor=serial"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), needle)


def test_kt_values_outside_tune_params_and_negative_times_are_refused(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    for cache, needle in (({"1": {"x": 3, "time": 1.0}}, "x=3, not one of"),
                          ({"1": {"x": 1, "time": -5.0}, "2": {"x": 2, "time": 2.0}}, "cannot be negative")):
        path = tmp_path / "kt.json.gz"
        with gzip.open(path, "wt") as fh:
            json.dump({"tune_params": {"x": [1, 2]}, "tune_params_keys": ["x"], "objective": "time", "cache": cache}, fh)
        assert precheck(["problem=kernel_tuner_cache", f"problem.path={path}", "executor=serial"]) == 2
        _one_line(capsys.readouterr().err.strip().splitlines(), needle)


def test_a_nan_time_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc([A], [_row(float("nan"), a=1), _row(2.0, a=2)])))
    assert precheck(["problem=table", f"problem.path={path}", "executor=serial"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), "finite")


def test_a_t4_file_without_measurements_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.interchange import T4_VERSION

    path = tmp_path / "t4.json"
    entry = {"configuration": {"x": 1}, "times": {"runtimes": [0.1]}, "invalidity": "correct", "correctness": 1,
             "measurements": [], "objectives": ["time"], "timestamp": "2026-11-27T00:00:00Z"}
    path.write_text(json.dumps({"schema_version": T4_VERSION, "results": [entry, {**entry, "configuration": {"x": 2}}]}))
    assert precheck(["problem=t4", f"problem.path={path}", "executor=serial"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), "holds a successful measurement")


# -- item 11: small ones ----------------------------------------------------------------------------------
def test_a_4100_character_name_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert precheck(["problem=" + "x" * 4100, "executor=serial"]) == 2
    _one_line(capsys.readouterr().err.strip().splitlines(), "(4108 characters): a name too long")


@pytest.mark.parametrize("value", ["os.system", "mypkg.score"])
def test_dotted_values_are_not_shown_as_paths(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert precheck([f"problem._target_={value}", "executor=serial"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert value in line and str(tmp_path) not in line, line


def test_a_resume_without_a_budget_continues_to_the_last_budget(table_run: tuple[Path, Path],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, run_dir = table_run
    assert run_command([f"resume={run_dir}", "budget.evaluations=3", "progress=off", "plot=false"]) == 0
    capsys.readouterr()
    assert run_command([f"resume={run_dir}", "progress=off", "plot=false"]) == 0
    out = capsys.readouterr().out
    assert "stopped at 3 of 3 evaluations" in out and "of 2 evaluations" not in out, out
