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

from searchlab.cli.config import register_configs
from searchlab.cli.main import CONF_DIR
from searchlab.run.execution import build_problem
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
    lines = out.stdout.splitlines()
    # was 143, 11 > 200; 136 since issue 46 (entries wrap instead of being cut; the entry points at the end)
    assert max(map(len, lines)) <= 160 and len(lines) < 150, (max(map(len, lines)), len(lines))
    assert max(len(line.encode()) for line in lines) <= 160  # "§" counts twice in bytes (issue 35: fir, lud were 161-162)
    dft = next(line for line in lines if line.startswith("  dft "))
    assert dft.endswith(".") and "..." not in dft  # a whole sentence, not cut mid-way
    kinds = {"synthetic_knobs": "[knobs]", "synthetic_dag": "[dag]", "synthetic_thresholds": "[thresholds]",
             "lud_opencl": "[thresholds]", "dft": "[dag]", "table": "[as recorded (any kind)]"}
    for name, kind in kinds.items():  # each problem's space kind
        assert any(line.split()[:2] == [name, kind.split()[0]] for line in lines if line.startswith("  ")), name


def test_help_cuts_no_entry_and_ends_with_the_other_entry_points(tmp_path: Path) -> None:
    """Issue 46, item 4: "tag_scaled ... capped by plays per arm," was cut mid-sentence; the next
    steps (study, export, reproduce, the integrations) were not named."""
    out = run_cli(tmp_path, "--help")
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and not [line for line in lines if line.rstrip().endswith(" ...")]  # the old cut mark
    first = next(i for i, line in enumerate(lines) if line.startswith("problems ("))
    starts = [i for i, line in enumerate(lines) if i > first and line.startswith("  ") and line[2] != " "]
    for i in starts:  # an entry and the lines it wraps onto end a phrase, not mid-clause
        j = i + 1
        while j < len(lines) and lines[j].startswith(" " * 25) and lines[j][25] != " ":
            j += 1
        assert not lines[j - 1].rstrip().endswith((",", ";", ":")), lines[i:j]
    at = next(i for i, line in enumerate(lines) if line.startswith("  tag_scaled "))
    entry = " ".join(lines[at:at + 2])  # wrapped onto the phrase's column, not cut
    assert "and a prior for unplayed arms" in entry and lines[at + 1].startswith(" " * 25 + "docstring")
    tail = out.stdout[out.stdout.index("other entry points"):]
    for needle in (f"{sys.executable} -m searchlab.study RUN_DIR", f"{sys.executable} -m searchlab.export t4 RUN_DIR",
                   "reproduce EXPERIMENT.json", "from searchlab.integrations.kernel_tuner import Strategy",
                   "from searchlab.integrations.optuna import Sampler", "from searchlab.integrations.tune import Searcher",
                   "docs/integrations.md"):
        assert needle in tail, needle
    assert " python -m" not in tail  # a bare python may not be ours (issue 46, item 1)


def test_a_long_entry_wraps_at_words_onto_its_phrase_column() -> None:
    from searchlab.cli.helptext import WIDTH, _entry

    text = "  name                   " + " ".join(f"word{i}" for i in range(60)) + " end of sentence."
    lines = _entry(text)
    assert len(lines) > 1 and all(len(line.encode()) <= WIDTH for line in lines)
    assert all(line.startswith(" " * 25) and line[25] != " " for line in lines[1:])
    assert " ".join(lines).split() == text.split()  # nothing lost, nothing added
    assert _entry("short") == ["short"]


def test_nested_option_groups_list_their_fields(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "problem=opencl_kernel", "--help")
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and max(len(line.encode()) for line in lines) <= 160
    fields = {line.split()[0]: line.split(None, 1)[1] for line in lines if line.startswith("    problem.measure.")}
    assert list(fields) == ["problem.measure.min_runs=5", "problem.measure.max_runs=50", "problem.measure.min_time_s=0.05",
                            "problem.measure.target_rel_ci=0.02", "problem.measure.warmup=1"]
    assert fields["problem.measure.min_time_s=0.05"].startswith("keep timing until")  # the field's own comment
    out = run_cli(tmp_path, "problem=futhark", "--help")  # the problem's own default protocol (futhark bench's)
    assert "    problem.measure.min_runs=10 " in out.stdout and "  problem.default=null " in out.stdout


def test_focused_help_shows_one_searcher_or_problem_with_a_phrase_per_option(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "searcher=random", "--help")
    assert out.returncode == 0 and out.stdout.startswith("searcher=random: Uniform random search")
    assert "exhaustive" not in out.stdout and "synthetic_knobs" not in out.stdout  # nothing else
    assert [line.split(None, 1) for line in out.stdout.splitlines()[1:] if line] == [
        ["searcher.tries=200", "rejection draws before falling back to enumerating what is left"]]
    out = run_cli(tmp_path, "problem=matmul_blocked", "--help")
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and lines[1] == "  space: knobs" and max(map(len, lines)) <= 160
    options = {line.split()[0].split("=")[0]: line for line in lines[2:] if line.strip()}
    assert "SUMMA stripe width (must divide n)" in options["problem.stripe"]  # the field's own comment
    assert "problem.measure=<MeasurementProtocol: see docs/measurement.md>" in options["problem.measure"]  # a pointer
    assert "problem.model={}" in options["problem.model"] and "RESOURCE_MODEL" in options["problem.model"]  # declared once
    assert "'sensors'" not in out.stdout
    out = run_cli(tmp_path, "searcher=randmo", "--help")
    assert out.returncode == 2 and "(did you mean 'random'?)" in out.stderr and "Traceback" not in out.stderr


def test_option_phrases_come_from_the_one_declaration() -> None:
    from dataclasses import dataclass

    from searchlab.cli.helptext import phrases
    from searchlab.searchers import Searcher, searcher_config

    @dataclass
    class Config:
        #: how wide the thing is
        width: int = 3
        depth: int = 2  # how deep it goes
        plain: float = 1.0

    class Documented(Searcher):
        """A searcher.

        Args:
            tries: draws before enumerating what is left
        """

        def __init__(self, space: object, *, tries: int = 5, keep: bool = True,  # never read
                     spare: int = 1,  # spare draws
                     **kwargs: object) -> None:
            super().__init__(space, **kwargs)  # type: ignore[arg-type]

    assert phrases(Config) == {"width": "how wide the thing is", "depth": "how deep it goes"}
    from searchlab import registry  # a built-in: '# shuffle: ...' above 'ExhaustiveConfig = searcher_config(...)'

    assert phrases(registry.entry("searcher", "exhaustive").schema)["shuffle"] == (
        "seeded random order instead of enumeration order")
    assert phrases(searcher_config(Documented)) == {"tries": "draws before enumerating what is left",
                                                    "spare": "spare draws"}


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


# -- issue 27: errors that suggest, sweeps and resumes that say where they are ---------------------
def test_registered_names_get_a_did_you_mean() -> None:
    from searchlab import registry
    from searchlab.errors import ConfigError
    from searchlab.study.execution.config import compose_study

    with pytest.raises(ConfigError, match=r"searcher=randmo: .*\(did you mean 'random'\?\)"):
        registry.entry("searcher", "randmo")
    with pytest.raises(ConfigError, match=r"did you mean 'serial'\?"):
        registry.entry("executor", "serail")
    with pytest.raises(ConfigError, match=r"study=synthetic_replai: .*\(did you mean 'synthetic_replay'"):
        compose_study("synthetic_replai", [])
    with pytest.raises(ConfigError) as unrelated:
        registry.entry("searcher", "zzzzzz")
    assert "did you mean" not in str(unrelated.value)


def test_sweep_prints_its_directory(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "-m", "seed=0,1", "problem=synthetic_knobs", "searcher=random", "budget.evaluations=3",
                  "executor=serial", "progress=off")
    assert out.returncode == 0, out.stderr
    (sweep,) = tmp_path.glob("outputs/multirun/*/*")
    assert out.stdout.count(f"searchlab: sweep directory: {sweep.resolve()}\n") == 1


def test_resume_says_where_it_resumes(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=4",
                  "progress=off")
    assert out.returncode == 0, out.stderr
    (run_dir,) = [p.parent for p in tmp_path.glob("outputs/*/*/results.db")]
    out = run_cli(tmp_path, f"resume={run_dir}", "budget.evaluations=7", "progress=off")
    assert out.returncode == 0, out.stderr
    assert "searchlab: resuming at 4/7 evaluations" in out.stderr.splitlines()


def test_a_resumed_runs_eta_counts_only_its_own_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from searchlab.core.records import Candidate, Direction, Measurement, Result
    from searchlab.run.loop import Budget, LoopState
    from searchlab.run.progress import ProgressReporter

    def result(i: int, t_end: float) -> Result:
        return Result(Candidate(i, {"x": i}, {"x": i}), Measurement.ok(1.0), t_end=t_end)

    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)  # the clock stands still: a slow line must not move the eta
    state = LoopState(Direction.MINIMIZE, started=now - 10.0)  # this session: 10 s so far
    for i in range(65):  # the killed run's evaluations, finished long before
        state.add(result(i, now - 3600.0))
    state.add(result(65, now - 1.0))  # the one evaluation this session finished: 10 s each
    line = ProgressReporter("log", stream=io.StringIO()).line(state, Budget(evaluations=75))
    assert line.startswith("[66/75]") and "eta 1:30" in line, line  # 9 left x 10 s, not 9 x 10/66 s


def test_study_errors_resolve_paths_and_suggest_names(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    out = subprocess.run([sys.executable, "-m", "searchlab.study", "runs/nowhere"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        f"searchlab.study: error: study: '{tmp_path.resolve() / 'runs' / 'nowhere'}' is neither a directory nor "
        "a results.db file"]
