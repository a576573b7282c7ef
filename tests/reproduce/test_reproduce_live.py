"""``searchlab reproduce --live``: a study per strategy and space, a trial per finished repeat (issue 54, item 5).

Each trial is checked against ``results.db`` read with plain SQL (not through the code that wrote the view): its
value is the best valid objective of that repeat's evaluations, its parameters that configuration.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from searchlab.reproduce.cli import main, reproduce
from tests.reproduce.conftest import experiment


def _best_per_repeat(db: Path) -> dict[tuple[str, int], tuple[float, dict[str, object]]]:
    with closing(sqlite3.connect(db)) as conn:
        runs = conn.execute("SELECT id, name FROM runs").fetchall()
        out = {}
        for run_id, name in runs:
            group, _, seed = name.rpartition("/seed_")
            row = conn.execute("SELECT objective, config FROM evaluations WHERE run_id=? AND status='ok' "
                               "ORDER BY objective ASC, id ASC LIMIT 1", (run_id,)).fetchone()
            out[(group, int(seed))] = (float(row[0]), json.loads(row[1]))
    return out


def _trials(journal: Path) -> dict[str, list[object]]:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    storage = JournalStorage(JournalFileBackend(str(journal)))
    return {s.study_name: optuna.load_study(study_name=s.study_name, storage=storage).get_trials()
            for s in optuna.get_all_study_summaries(storage)}


def test_each_repeat_is_a_trial_holding_its_best(tmp_path: Path) -> None:
    out = tmp_path / "out"
    reproduce(str(experiment(tmp_path, repeats=3)), str(out), workers=1, quiet=True, live="true")
    studies = _trials(out / "live.log")
    assert set(studies) == {"MI250X/convolution_milo/random", "MI250X/convolution_milo/ga"}
    best = _best_per_repeat(out / "results.db")
    for name, trials in studies.items():
        assert sorted(t.user_attrs["repeat"] for t in trials) == [0, 1, 2]  # type: ignore[attr-defined]
        for t in trials:
            value, config = best[(name, t.user_attrs["repeat"])]  # type: ignore[attr-defined]
            assert t.value == pytest.approx(value)  # type: ignore[attr-defined]
            assert {k: v for k, v in t.params.items()} == {k: config[k] for k in t.params}  # type: ignore[attr-defined]
            assert t.user_attrs["evaluations"] >= t.user_attrs["valid_evaluations"] >= 1  # type: ignore[attr-defined]


def test_off_by_default_and_the_dashboard_command_is_printed_when_on(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = experiment(tmp_path, repeats=1)
    assert main([str(path), "--out", str(tmp_path / "off"), "--workers", "1"]) == 0
    assert not (tmp_path / "off" / "live.log").exists()
    capsys.readouterr()
    assert main([str(path), "--out", str(tmp_path / "on"), "--workers", "1", "--live"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "live view" in x)
    assert "optuna-dashboard" in line and str((tmp_path / "on" / "live.log").resolve()) in line
    assert len(_trials(tmp_path / "on" / "live.log")) == 2


def test_a_storage_that_cannot_be_is_one_line_and_nothing_made(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main([str(experiment(tmp_path, repeats=1)), "--out", str(out), "--live", "sqlite:///:memory:"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "in-memory" in err[0] and not out.exists()
