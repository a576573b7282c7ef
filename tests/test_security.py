"""Records are data (issue 10, item 1): a crafted results.db must not make any entry point
call a target of its choosing. The payload is the one from the issue: a stored problem
config whose nested ``_target_`` writes a file through ``pathlib.Path.write_text``. Each
test failed on the code before the fix (the marker file was written) and passes after."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from searchlab.errors import ConfigError
from searchlab.run.execution import build_problem
from searchlab.run.lifecycle import execute
from searchlab.study.execution.grid import _compose_run

BASE = ["problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=4", "progress=off"]


def _dump(db: Path) -> list[Any]:
    """Every row of every table: what 'unchanged' means for a database (WAL checkpoints move bytes)."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return [(t, conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables]


def _payload(marker: Path) -> dict[str, Any]:
    write = {"_target_": "pathlib.Path.write_text",
             "_args_": [{"_target_": "pathlib.Path", "_args_": [str(marker)]}, "pwned"]}
    return {"_target_": "searchlab.adapters.table.TableProblem", "path": write}


def _crafted_run(tmp_path: Path, problem: dict[str, Any]) -> Path:
    """A real finished run whose stored problem config is then replaced, as an attacker would."""
    run_dir = tmp_path / "run"
    execute(_compose_run(BASE), run_dir, quiet=True)
    db = run_dir / "results.db"
    with sqlite3.connect(db) as conn:
        config = json.loads(conn.execute("SELECT config FROM runs").fetchone()[0])
        config["problem"] = problem
        conn.execute("UPDATE runs SET config=?, status='running'", (json.dumps(config),))
    return run_dir


@pytest.fixture()
def crafted(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "pwned.txt"
    return _crafted_run(tmp_path, _payload(marker)), marker


def test_resume_of_a_crafted_record_builds_nothing(crafted: tuple[Path, Path]) -> None:
    run_dir, marker = crafted
    before = _dump(run_dir / "results.db")
    cfg = _compose_run([f"resume={run_dir}"])
    with pytest.raises(ConfigError) as refused:
        execute(cfg, "", overrides=[f"resume={run_dir}"], quiet=True)
    assert not marker.exists()
    assert "_target_" in str(refused.value)
    assert _dump(run_dir / "results.db") == before


def test_table_replay_of_a_crafted_record_builds_nothing(crafted: tuple[Path, Path]) -> None:
    run_dir, marker = crafted
    with pytest.raises(ConfigError) as refused:
        build_problem({"_target_": "searchlab.adapters.table.TableProblem", "path": str(run_dir)})
    assert not marker.exists()
    assert "_target_" in str(refused.value)


def test_study_of_a_crafted_record_builds_nothing(crafted: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.study.__main__ import main

    run_dir, marker = crafted
    status = main([str(run_dir), "--out", str(run_dir.parent / "study")])
    assert not marker.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "_target_" in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize("target", ["os.system", "pathlib.Path.write_text", "searchlab.core.store.RunStore"])
def test_only_registered_problem_classes_are_built(target: str) -> None:
    with pytest.raises(ConfigError, match="not a registered problem class"):
        build_problem({"_target_": target, "path": "x"})


def test_a_record_naming_another_top_level_target_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned.txt"
    run_dir = _crafted_run(tmp_path, {"_target_": "pathlib.Path.touch", "self": str(marker)})
    with pytest.raises(ConfigError, match="not a registered problem class"):
        execute(_compose_run([f"resume={run_dir}"]), "", overrides=[f"resume={run_dir}"], quiet=True)
    assert not marker.exists()


def test_grammar_records_keep_their_default_objective_but_not_another(tmp_path: Path) -> None:
    """A nested _target_ from a file is accepted only where it is the schema's default."""
    from searchlab.recompose import recompose

    default = recompose("problem", {"_target_": "searchlab.adapters.grammar.GrammarProblem"}, "test")
    assert default["objective"]["_target_"] == "searchlab.adapters.grammar.objectives.hashed"
    with pytest.raises(ConfigError, match=r"objective\._target_='os\.system'"):
        recompose("problem", {"_target_": "searchlab.adapters.grammar.GrammarProblem",
                              "objective": {"_target_": "os.system", "_partial_": True}}, "test")
