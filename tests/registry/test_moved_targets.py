"""Stored configs of earlier runs name the ``_target_``s classes had before they moved (issue 21:
``searchlab.tables`` became ``searchlab.adapters.table``, ``searchlab.adapters.meta`` became
``searchlab.tuning``). ``searchlab.core.groups.MOVED`` is the one alias table: such results.db files
stay readable and resumable, and nothing else named by a record is imported."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from searchlab import registry
from searchlab.adapters.table import Table, TableProblem, load_table, save_table
from searchlab.core import groups
from searchlab.core.records import Config, Direction, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.errors import ConfigError
from searchlab.recompose import recompose
from searchlab.run.execution import build_problem
from searchlab.run.lifecycle import execute
from searchlab.study.execution.grid import _compose_run

OLD_TABLE = "searchlab.tables.TableProblem"


def _table_file(tmp_path: Path) -> Path:
    space = KnobSpace((IntKnob("a", 0, 5),))
    rows = {Config(a=a): Measurement.ok(float((a - 3) ** 2 + 1)) for a in range(6)}
    return save_table(Table(space, rows, Direction.MINIMIZE, "time"), tmp_path / "t.json.gz")


def test_every_moved_target_names_the_class_it_moved_to() -> None:
    old_targets = {"searchlab.tables.TableProblem": "searchlab.adapters.table.TableProblem",
                   "searchlab.adapters.meta.SearcherSettings": "searchlab.tuning.SearcherSettings"}
    for old, new in old_targets.items():
        assert groups.current_target(old) == new, old
        name = registry.name_of_target(new, "problem")
        assert name is not None and registry.entries("problem")[name].target == new, new
        assert registry.name_of_target(old, "problem") == name, old
    assert registry.name_of_target(OLD_TABLE, "problem") == "table"
    assert registry.name_of_target("searchlab.adapters.meta.SearcherSettings", "problem") == "searcher_settings"
    assert registry.name_of_target(OLD_TABLE, "searcher") is None  # an alias keeps its kind
    package = Path(registry.__file__).parent
    assert not (package / "tables.py").exists() and not (package / "adapters" / "meta").exists()  # only the alias helps


def test_a_stored_config_with_an_old_target_is_rebuilt(tmp_path: Path) -> None:
    path = _table_file(tmp_path)
    plain = recompose("problem", {"_target_": OLD_TABLE, "path": str(path), "sample_noise": False,
                                  "noise_seed": None}, "results.db")
    assert plain["_target_"] == "searchlab.adapters.table.TableProblem"
    problem = build_problem(plain)
    assert isinstance(problem, TableProblem) and problem.known_optimum == 1.0
    with pytest.raises(ConfigError, match="not a registered problem"):
        recompose("problem", {"_target_": "searchlab.tables.load_table", "path": str(path)}, "results.db")


def test_a_run_recorded_under_an_old_target_resumes_and_reads_as_a_table(tmp_path: Path) -> None:
    path = _table_file(tmp_path)
    run_dir = tmp_path / "run"
    base = ["problem=table", f"problem.path={path}", "searcher=exhaustive", "executor=serial", "progress=off",
            "plot=false"]
    execute(_compose_run(base), run_dir, quiet=True)
    with sqlite3.connect(run_dir / "results.db") as conn:  # as an earlier searchlab stored it
        config = json.loads(conn.execute("SELECT config FROM runs").fetchone()[0])
        assert config["problem"]["_target_"] == "searchlab.adapters.table.TableProblem"
        config["problem"]["_target_"] = OLD_TABLE
        conn.execute("UPDATE runs SET config=?, status='running'", (json.dumps(config),))
    table = load_table(run_dir)  # an exhaustive run read back as a table rebuilds its problem from the record
    assert len(table.rows) == 6 and table.best() is not None
    info = execute(_compose_run([f"resume={run_dir}"]), "", overrides=[f"resume={run_dir}"], quiet=True)
    assert info is not None
