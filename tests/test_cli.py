"""The command line: composition of every config file, errors, single runs and sweeps."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class
from omegaconf import OmegaConf

from searchlab.cli import CONF_DIR
from searchlab.config import register_configs
from searchlab.execution import build_problem
from searchlab.searchers import Searcher

GROUP_FILES = sorted((g.name, p.stem) for g in CONF_DIR.iterdir() if g.is_dir() and g.name != "study"
                     for p in g.glob("*.yaml"))


@pytest.fixture(scope="module")
def hydra_conf() -> None:
    register_configs()


@pytest.mark.parametrize("group, name", GROUP_FILES, ids=[f"{g}/{n}" for g, n in GROUP_FILES])
def test_every_config_file_composes(hydra_conf: None, group: str, name: str) -> None:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"{group}={name}"])
    node = cfg[group]
    if group == "searcher":
        assert issubclass(get_class(node._target_), Searcher)
    if group == "problem" and not OmegaConf.missing_keys(node):
        problem = build_problem(node)  # must not touch a device: setup() is not called
        assert problem.space.size() >= 1


def test_typo_in_override_fails_at_composition(hydra_conf: None) -> None:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        with pytest.raises(Exception, match="max_siz"):
            compose("config", overrides=["searcher=exhaustive", "searcher.max_siz=3"])
        with pytest.raises(Exception, match="evaluations"):
            compose("config", overrides=["budget.evaluations=many"])


def run_cli(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "searchlab", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_help_lists_problems_and_searchers(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "--help")
    assert out.returncode == 0
    for name in ("synthetic_knobs", "synthetic_dag", "synthetic_thresholds", "random", "exhaustive"):
        assert f"  {name} " in out.stdout


def test_single_run_writes_records_and_summary(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "problem=synthetic_dag", "searcher=random", "budget.evaluations=50", "executor=serial")
    assert out.returncode == 0, out.stderr
    (db,) = tmp_path.glob("outputs/*/*/results.db")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] == 50
        run = conn.execute("SELECT problem, searcher, seed, versions, config FROM runs").fetchone()
    assert run[:3] == ("synthetic_dag", "random", 0)
    assert {"python", "numpy", "ray", "optuna", "pyopencl"} <= set(json.loads(run[3]))
    summary = json.loads((db.parent / "summary.json").read_text())
    assert summary["evaluations"] == 50 and summary["best"]["objective"] > 0
    assert summary["status_counts"] == {"ok": 50}
    assert "best pseudo_mflops" in out.stdout


@pytest.mark.parametrize("args, message", [
    (["searcher=nonexistent"], "nonexistent"),
    (["budget.evaluations=-3"], "budget.evaluations=-3: must be a positive integer"),
    (["problem=synthetic_dag", "searcher=exhaustive", "searcher.max_size=10"], "more than max_size=10"),
    (["executor.workers=0"], "executor.workers=0"),
    (["problem=table", "problem.path=nowhere.json.gz"], "does not exist"),
])
def test_bad_input_gives_one_clear_error_and_no_records(tmp_path: Path, args: list[str], message: str) -> None:
    out = run_cli(tmp_path, *args, "executor=serial" if "executor.workers=0" not in args else "executor=ray")
    assert out.returncode != 0
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(tmp_path.glob("outputs/**/results.db"))


def test_incompatible_pair_is_refused_before_anything_runs(tmp_path: Path) -> None:
    pairs = [("synthetic_dag", s) for s in ("probabilistic", "dual_annealing", "greedy_ils")
             if (CONF_DIR / "searcher" / f"{s}.yaml").exists()]
    if not pairs:
        pytest.skip("no knob-only searcher is installed yet")
    problem, searcher = pairs[0]
    out = run_cli(tmp_path, f"problem={problem}", f"searcher={searcher}", "executor=serial")
    assert out.returncode == 2 and "is not a valid pair" in out.stderr
    assert not list(tmp_path.glob("outputs/**/results.db"))


def test_multirun_sweep_gives_one_directory_per_job(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "-m", "searcher=random,exhaustive", "seed=0,1", "problem=synthetic_knobs",
                  "budget.evaluations=10", "executor=serial", "progress=off")
    assert out.returncode == 0, out.stderr
    dbs = sorted(tmp_path.glob("outputs/multirun/*/*/*/results.db"))
    assert len(dbs) == 4
    names = sorted(p.parent.name for p in dbs)
    for num, (searcher, seed) in enumerate([("random", 0), ("random", 1), ("exhaustive", 0), ("exhaustive", 1)]):
        assert names[num].startswith(f"{num}_") and f"searcher={searcher}" in names[num] and f"seed={seed}" in names[num]


def test_cache_across_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache.db"
    for _ in range(2):
        out = run_cli(tmp_path, "problem=synthetic_dag", "problem.arity=[2,3]", "searcher=exhaustive",
                      f"cache={cache}", "executor=serial", "progress=off")
        assert out.returncode == 0, out.stderr
    summaries = sorted(tmp_path.glob("outputs/*/*/summary.json"))
    hits = [json.loads(p.read_text())["cache_hits"] for p in summaries]
    assert sorted(hits) == [0, 6]
