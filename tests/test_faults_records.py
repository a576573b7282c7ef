"""Records and exports a hostile probe broke (issue 47, items 7-12 and 15-17): each ends in one line and its
documented exit status (docs/security.md), with nothing half-written. Every test here fails on the code before
the fix (checked by running this file against that commit's ``searchlab/``).

Runs are small and in process (``executor=serial``); read-only media and a full disk are real tmpfs mounts
(root only: skipped elsewhere), with an ``os.access`` seam for the read-only refusal that runs everywhere.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from searchlab.cli.main import precheck, run_command
from tests.test_faults import SERIAL, _dump, _fill, _run, _table
from tests.test_faults import table_run as table_run  # the fixture: a finished 2-evaluation table run

DEEP = "[" * 100_000 + "]" * 100_000


def _line(capsys: pytest.CaptureFixture[str], needle: str) -> str:
    err = [e for e in capsys.readouterr().err.strip().splitlines() if ": note: " not in e and not e.startswith("[I ")]
    assert len(err) == 1 and "error: " in err[0] and needle in err[0], err
    return err[0]


def _export(*argv: str) -> int:
    from searchlab.export import main

    return main(list(argv))


def _study(run_dir: Path) -> int:
    from searchlab.study.__main__ import main

    return main([str(run_dir), "--out", str(run_dir.parent / "study")])


def _read(reader: str, table: Path, run_dir: Path) -> int:
    """One reader of a run's records: resume, prior=, a study, an export."""
    if reader == "resume":
        return precheck([f"resume={run_dir}", "budget.evaluations=4", "executor=serial"])
    if reader == "prior":
        return precheck(["problem=table", f"problem.path={table}", "searcher=transfer", f"prior=[{run_dir}]",
                         "executor=serial"])
    if reader == "study":
        return _study(run_dir)
    return _export("t4", str(run_dir), "-o", str(run_dir.parent / "t4.json"))


def _mount(where: Path, size: str = "4m") -> bool:
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


# -- item 7: export never writes a run's own files; item 17: no storage that keeps nothing --------------------
@pytest.mark.parametrize("target", ["csv own db", "t4 own summary", "csv other run", "optuna own db"])
def test_export_refuses_a_runs_own_files(target: str, table_run: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The run's database (and summary) are unchanged and the refusal is one line, exit 2."""
    _, run_dir = table_run
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.db").write_bytes((run_dir / "results.db").read_bytes())
    before, summary = _dump(run_dir / "results.db"), (run_dir / "summary.json").read_bytes()
    argv = {"csv own db": ["csv", str(run_dir), "-o", str(run_dir / "results.db")],
            "t4 own summary": ["t4", str(run_dir), "-o", str(run_dir / "summary.json")],
            "csv other run": ["csv", str(run_dir), "-o", str(other / "results.db")],
            "optuna own db": ["optuna", str(run_dir), "--storage", f"sqlite:///{run_dir / 'results.db'}"]}[target]
    assert _export(*argv) == 2
    _line(capsys, "results.db" if target != "t4 own summary" else "own source")
    assert _dump(run_dir / "results.db") == before and (run_dir / "summary.json").read_bytes() == summary
    with closing(sqlite3.connect(run_dir / "results.db")) as conn:
        assert not {r[0] for r in conn.execute("SELECT name FROM sqlite_master")} & {"studies", "trials"}


@pytest.mark.parametrize("storage", ["sqlite:///", "sqlite:///:memory:", "sqlite://"])
def test_export_optuna_refuses_a_storage_that_keeps_nothing(storage: str, table_run: tuple[Path, Path],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert _export("optuna", str(table_run[1]), "--storage", storage) == 2
    _line(capsys, "in-memory database")


# -- item 15: unusable targets, a full disk, atomic writes, wide integers ---------------------------------------
@pytest.mark.parametrize("kind", ["t4", "kt-cache", "csv", "parquet"])
@pytest.mark.parametrize("target", ["a directory", "read-only", "a device"])
def test_an_unusable_export_target_is_one_line_exit_2(kind: str, target: str, table_run: tuple[Path, Path],
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Read-only through the ``os.access`` seam (root writes through chmod); the real mount is tested below."""
    import searchlab.core.outputs as outputs

    out = {"a directory": tmp_path, "read-only": tmp_path / "ro" / "x.out", "a device": Path("/dev/null")}[target]
    if target == "read-only":
        out.parent.mkdir()
        monkeypatch.setattr(outputs.os, "access", lambda path, mode: Path(path) != out.parent)
    before = sorted(tmp_path.rglob("*"))
    assert _export(kind, str(table_run[1]), "-o", str(out)) == 2
    _line(capsys, str(out))
    assert sorted(tmp_path.rglob("*")) == before


@pytest.fixture()
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    if not _mount(disk, "256k"):
        pytest.skip("mounting a small tmpfs needs root")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.parametrize("kind", ["t4", "kt-cache", "csv", "parquet"])
def test_a_full_disk_is_one_line_exit_1_and_leaves_no_file(kind: str, table_run: tuple[Path, Path], tiny_disk: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _fill(tiny_disk)
    assert _export(kind, str(table_run[1]), "-o", str(tiny_disk / "out")) == 1
    _line(capsys, "the disk is full; nothing was written")
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_a_failed_write_keeps_the_old_file_whole(tmp_path: Path) -> None:
    """Atomic: the target is the old file or the whole new one; the temporary file is removed."""
    from searchlab.core.outputs import write_atomic

    out = tmp_path / "out.json"
    out.write_text("old")

    def half(tmp: Path) -> None:
        tmp.write_text("hal")
        raise OSError(5, "Input/output error")

    with pytest.raises(Exception, match="nothing was written"):
        write_atomic(out, half, "-o")
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def _wide_table(path: Path) -> Path:
    big = 10**400
    path.write_text('{"format": "searchlab-table/1", "direction": "minimize", "space": {"knobs": [{"name": "a", '
                    f'"kind": "ordinal", "values": [1, {big}]}}]}}, "rows": [{{"config": {{"a": 1}}, "status": "ok", '
                    f'"objective": 1.0}}, {{"config": {{"a": {big}}}, "status": "ok", "objective": 2.0}}]}}')
    return path


def test_a_wide_integer_knob_is_exported_as_its_decimal_string(tmp_path: Path) -> None:
    import optuna
    import pandas as pd

    source = _wide_table(tmp_path / "wide.json")
    assert _export("optuna", str(source), "--storage", f"sqlite:///{tmp_path / 's.db'}", "--study-name", "w") == 0
    trials = optuna.load_study(study_name="w", storage=f"sqlite:///{tmp_path / 's.db'}").trials
    assert [t.params["a"] for t in trials] == [1, str(10**400)]
    assert _export("parquet", str(source), "-o", str(tmp_path / "w.parquet")) == 0
    assert list(pd.read_parquet(tmp_path / "w.parquet")["param_a"]) == ["1", str(10**400)]


# -- item 16: export optuna killed -------------------------------------------------------------------------------
def test_sigterm_during_export_optuna_exits_143_and_keeps_no_study(table_run: tuple[Path, Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import optuna

    storage = f"sqlite:///{tmp_path / 's.db'}"
    monkeypatch.setattr(optuna.Study, "add_trials", lambda self, trials: signal.raise_signal(signal.SIGTERM))

    def outside(signum: int, frame: object) -> None:  # where the export takes no SIGTERM (the old code): fail, not die
        raise RuntimeError("SIGTERM reached the caller: the export did not handle it")

    previous = signal.signal(signal.SIGTERM, outside)
    try:
        status = _export("optuna", str(table_run[1]), "--storage", storage, "--study-name", "r")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert status == 143
    assert "interrupted" in capsys.readouterr().err
    assert optuna.get_all_study_names(storage) == []


def test_the_rerun_replaces_a_study_a_killed_export_left_half_written(table_run: tuple[Path, Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """SIGKILL cannot be caught: the study is marked incomplete until its last trial is in, and the rerun of the
    same export recognises the mark and replaces it; another study of that name is still refused."""
    import optuna

    from searchlab.export import MARK

    storage = f"sqlite:///{tmp_path / 's.db'}"
    half = optuna.create_study(storage=storage, study_name="r")
    half.set_user_attr(MARK, {"source": str(table_run[1]), "complete": False})  # what a SIGKILL leaves
    assert _export("optuna", str(table_run[1]), "--storage", storage, "--study-name", "r") == 0
    assert len(optuna.load_study(study_name="r", storage=storage).trials) == 2
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(storage=storage, study_name="mine")
    capsys.readouterr()
    assert _export("optuna", str(table_run[1]), "--storage", storage, "--study-name", "mine") == 2
    _line(capsys, "a study of that name exists")


# -- item 8: records on read-only media --------------------------------------------------------------------------
def _killed_copy(run_dir: Path, into: Path) -> None:
    """A copy of the run as a killed writer leaves it: status 'running', the last commit only in ``-wal``."""
    import shutil

    shutil.copytree(run_dir, into)
    conn = sqlite3.connect(into / "results.db")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("UPDATE runs SET status='running'")
    conn.commit()
    for name in ("results.db", "results.db-wal", "results.db-shm"):
        shutil.copy(into / name, into.parent / f"k-{name}")
    conn.close()
    for name in ("results.db", "results.db-wal", "results.db-shm"):
        shutil.move(into.parent / f"k-{name}", into / name)


@pytest.fixture()
def read_only_runs(table_run: tuple[Path, Path], tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    import shutil

    media = tmp_path / "media"
    if not _mount(media, "16m"):
        pytest.skip("mounting a tmpfs needs root")
    shutil.copytree(table_run[1], media / "finished")
    _killed_copy(table_run[1], media / "killed")
    subprocess.run(["mount", "-o", "remount,ro", str(media)], check=True)
    yield table_run[0], media / "finished", media / "killed"
    subprocess.run(["umount", "-l", str(media)], check=False)


@pytest.mark.parametrize("which", ["finished", "killed"])
@pytest.mark.parametrize("reader", ["prior", "study", "export", "table"])
def test_runs_on_read_only_media_are_read(which: str, reader: str, read_only_runs: tuple[Path, Path, Path],
                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table, finished, killed = read_only_runs
    run_dir = finished if which == "finished" else killed
    if reader == "study":
        from searchlab.study.__main__ import main

        assert main([str(run_dir), "--out", str(tmp_path / "study")]) == 0
    elif reader == "export":
        assert _export("t4", str(run_dir), "-o", str(tmp_path / "t4.json")) == 0
        assert len(json.loads((tmp_path / "t4.json").read_text())["results"]) == 2
    elif reader == "table":  # read as a table: refused for its coverage, which means it was read
        assert precheck(["problem=table", f"problem.path={run_dir}", "executor=serial"]) == 2
        _line(capsys, "not a complete table")
    else:
        assert precheck(["problem=table", f"problem.path={table}", "searcher=transfer", f"prior=[{run_dir}]",
                         "executor=serial"]) is None  # accepted: the prior was read


@pytest.mark.parametrize("which", ["finished", "killed"])
def test_resuming_a_run_on_read_only_media_is_one_line(which: str, read_only_runs: tuple[Path, Path, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = read_only_runs[1] if which == "finished" else read_only_runs[2]
    assert run_command([f"resume={run_dir}", "budget.evaluations=4", *SERIAL]) == 2
    _line(capsys, "read-only media")


def test_resume_refuses_read_only_records_through_the_seam(table_run: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Where no mount is allowed: the store asks ``writable`` (os.access) before it writes anything."""
    import searchlab.core.store as store

    _, run_dir = table_run
    before = _dump(run_dir / "results.db")
    monkeypatch.setattr(store, "writable", lambda path: False)
    assert run_command([f"resume={run_dir}", "budget.evaluations=4", *SERIAL]) == 2
    _line(capsys, "read-only media")
    assert _dump(run_dir / "results.db") == before


# -- item 9: deeply nested JSON --------------------------------------------------------------------------------
@pytest.mark.parametrize("column", ["evaluations.samples", "evaluations.config", "runs.config"])
@pytest.mark.parametrize("reader", ["resume", "prior", "study", "export"])
def test_deeply_nested_json_in_a_record_is_one_line(column: str, reader: str, table_run: tuple[Path, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    table, run_dir = table_run
    with closing(sqlite3.connect(run_dir / "results.db")) as conn, conn:
        conn.execute(f"UPDATE {column.split('.')[0]} SET {column.split('.')[1]}=?", (DEEP,))
    capsys.readouterr()
    if reader == "study" and column.startswith("evaluations."):
        # a study reads each evaluation's outcome columns only (issue 52: one record format, read lean);
        # a column it never parses cannot stop it, and the run is still reported
        assert _read(reader, table, run_dir) == 0
        return
    assert _read(reader, table, run_dir) == 2
    _line(capsys, "nested more than 200 levels")


@pytest.mark.parametrize("reader", ["export t4", "table", "prior"])
def test_a_deeply_nested_json_file_is_one_line(reader: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    if reader == "export t4":
        assert _export("t4", str(deep), "-o", str(tmp_path / "o.json")) == 2
    else:
        table = _table(tmp_path / "t.json")
        argv = [f"problem.path={deep}"] if reader == "table" else [f"problem.path={table}", "searcher=transfer",
                                                                    f"prior=[{deep}]"]
        assert precheck(["problem=table", *argv, "executor=serial"]) == 2
    _line(capsys, "200 levels")


def test_json_just_under_the_depth_bound_is_read() -> None:
    from searchlab.core.jsondata import MAX_DEPTH, TooDeep, loads

    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(TooDeep):
        loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


# -- item 10: a damaged summary.json -----------------------------------------------------------------------------
SUMMARIES = {"bad bytes": b"\xff\xfe{", "a list": b"[1, 2]", "deep": DEEP.encode(),
             "a string for a number": b'{"wall_time_s": "soon"}', "a list for the report": b'{"report": [1]}'}


@pytest.mark.parametrize("damage", list(SUMMARIES))
def test_a_damaged_summary_stops_the_study_in_one_line(damage: str, table_run: tuple[Path, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2, naming the file and the way out (delete it: the run is read from results.db alone)."""
    _, run_dir = table_run
    (run_dir / "summary.json").write_bytes(SUMMARIES[damage])
    capsys.readouterr()
    assert _study(run_dir) == 2
    _line(capsys, f"{run_dir / 'summary.json'}")
    assert not (run_dir.parent / "study").exists()
    (run_dir / "summary.json").unlink()
    assert _study(run_dir) == 0


# -- item 11: the read bound covers SQLite values and summary.json -----------------------------------------------
@pytest.mark.parametrize("reader", ["resume", "prior", "study", "export"])
def test_a_value_over_the_read_bound_is_refused_unread(reader: str, table_run: tuple[Path, Path],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A 2 MB message with a 1 MB bound (the probe's 300 MB against 50 MB, scaled down: docs/security.md)."""
    table, run_dir = table_run
    with closing(sqlite3.connect(run_dir / "results.db")) as conn, conn:
        conn.execute("UPDATE evaluations SET message=? WHERE id=1", ("m" * (2 << 20),))
    monkeypatch.setenv("SEARCHLAB_MAX_READ_MB", "1")
    capsys.readouterr()
    assert _read(reader, table, run_dir) == 2
    _line(capsys, "more than 1 MB")


def test_a_summary_over_the_read_bound_is_refused_before_it_is_read(table_run: tuple[Path, Path],
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import os

    _, run_dir = table_run
    os.truncate(run_dir / "summary.json", 1 << 30)  # sparse: 1 GB on paper, nothing on disk
    monkeypatch.setenv("SEARCHLAB_MAX_READ_MB", "1")
    capsys.readouterr()
    assert _study(run_dir) == 2
    _line(capsys, "more than 1 MB")


# -- item 12: tiny grammars with huge languages ------------------------------------------------------------------
def _doubling(tmp: Path, rules: int) -> Path:
    """``A_i -> A_{i+1} A_{i+1} | x``: the number of words squares at each rule."""
    productions = [f"A{i} -> A{i + 1} A{i + 1} | x" for i in range(rules - 1)] + [f"A{rules - 1} -> x"]
    path = tmp / f"g{rules}.yaml"
    path.write_text(json.dumps({"start": "A0", "terminals": ["x"], "nonterminals": [f"A{i}" for i in range(rules)],
                                "productions": productions}))
    return path


def test_a_13_rule_grammar_is_searched_at_random(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, run_dir = _run(tmp_path, "problem=grammar", f"problem.grammar={_doubling(tmp_path, 13)}",
                              "searcher=random", "budget.evaluations=2")
    assert status == 0 and json.loads((run_dir / "summary.json").read_text())["evaluations"] == 2


@pytest.mark.parametrize("case", ["41 rules, random", "41 rules, exhaustive", "13 rules, exhaustive"])
def test_huge_grammars_are_refused_in_one_short_line(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    rules, searcher = (41 if case.startswith("41") else 13), case.split(", ")[1]
    assert precheck(["problem=grammar", f"problem.grammar={_doubling(tmp_path, rules)}", f"searcher={searcher}",
                     "executor=serial"]) == 2
    line = _line(capsys, "on average" if rules == 41 else "at least 10^")
    assert len(line) < 300, len(line)


def test_word_counts_saturate_and_draws_stay_exact_with_big_integers(tmp_path: Path) -> None:
    import numpy as np

    from searchlab.adapters.grammar._grammar import COUNT_CAP, load_grammar, word_counts
    from searchlab.core.spaces._dag import weighted_index

    assert word_counts(load_grammar(_doubling(tmp_path, 41)))["A0"] == COUNT_CAP
    rng = np.random.default_rng(0)
    big = 2**2000
    draws = [weighted_index(rng, [big, 3 * big]) for _ in range(4000)]
    assert 0.72 < sum(draws) / len(draws) < 0.78  # probability 3/4 for the second
