"""Bad input, table-driven (issue 10): for every case, exit status 2, exactly one stderr line
naming the value, no traceback, and nothing written -- no output directory, no results.db,
and an existing run's records unchanged.

The cases run in process through :func:`searchlab.cli.main.precheck`, which is what
``python -m searchlab`` runs before Hydra makes an output directory; a few subprocess
tests at the end check that the command line itself behaves the same.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from searchlab.cli.main import precheck
from tests.test_security import _dump

KT_SMALL = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"
Case = Callable[[Path], tuple[list[str], str]]


def _table(tmp: Path, constraint: str) -> Path:
    payload = {"format": "searchlab-table/1", "direction": "minimize",
               "space": {"knobs": [{"name": "a", "kind": "int", "low": 0, "high": 3}], "constraints": [constraint]},
               "rows": [{"config": {"a": a}, "status": "ok", "objective": float(a + 1)} for a in range(4)]}
    path = tmp / "table.json"
    path.write_text(json.dumps(payload))
    return path


def _kt(tmp: Path, cache: dict[str, object]) -> Path:
    path = tmp / "kt.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump({"tune_params": {"x": [1, 2]}, "tune_params_keys": ["x"], "objective": "time", "cache": cache}, fh)
    return path


def _file(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


SETTINGS = ["problem=searcher_settings", "searcher=random"]
TWO = {"1": {"x": 1, "time": 1.0}, "2": {"x": 2, "time": 2.0}}
def _kt_shifted(tmp: Path) -> Path:
    """KT_SMALL's parameters, every block_size_x outside the problem's values: no overlap."""
    with gzip.open(KT_SMALL, "rt") as fh:
        doc = json.load(fh)
    doc["tune_params"]["block_size_x"] = [v + 1 for v in doc["tune_params"]["block_size_x"]]
    for entry in doc["cache"].values():
        entry["block_size_x"] += 1
    path = tmp / "shifted.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(doc, fh)
    return path


KT_PROBLEM = ["problem=kernel_tuner_cache", f"problem.path={KT_SMALL}"]
ALL_FAILED = {"1": {"x": 1, "time": "CompilationFailedConfig"}, "2": {"x": 2, "time": "InvalidConfig"}}
CASES: dict[str, Case] = {
    # the existing ones
    "unknown searcher": lambda t: (["searcher=nonexistent"], "nonexistent"),
    "negative budget": lambda t: (["budget.evaluations=-3"], "budget.evaluations=-3"),
    "space too big": lambda t: (["problem=synthetic_dag", "searcher=exhaustive", "searcher.max_size=10"], "max_size=10"),
    "no worker": lambda t: (["executor=ray", "executor.workers=0"], "executor.workers=0"),
    "missing table": lambda t: (["problem=table", "problem.path=nowhere.json.gz"], "nowhere.json.gz"),
    "incompatible pair": lambda t: (["problem=synthetic_dag", "searcher=probabilistic"], "searcher=probabilistic"),
    "typo": lambda t: (["searcher.max_siz=3"], "max_siz"),
    "wrong type": lambda t: (["budget.evaluations=many"], "many"),
    "bad grammar": lambda t: (["seed=["], "seed=["),
    "unknown problem": lambda t: (["problem=nope"], "nope"),
    "bad progress": lambda t: (["progress=sometimes"], "progress=sometimes"),
    "auto without a start": lambda t: (["problem=synthetic_knobs", "searcher=auto", "searcher.initial=0"],
                                       "searcher.initial=0"),
    "auto delegating to itself": lambda t: (["problem=synthetic_dag", "searcher=auto", "searcher.dag=auto"],
                                            "searcher.dag='auto'"),
    "auto negative prior": lambda t: (["problem=synthetic_knobs", "searcher=auto", "searcher.prior=-1"],
                                      "searcher.prior=-1"),
    "univariate TPE without a draw": lambda t: (["problem=synthetic_knobs", "searcher=optuna_tpe",
                                                 "searcher.univariate_retries=0"], "univariate_retries=0"),
    "auto prior nan": lambda t: (["problem=synthetic_knobs", "searcher=auto", "searcher.prior=nan"], "searcher.prior"),
    "auto feasibility 1": lambda t: (["problem=synthetic_knobs", "searcher=auto", "searcher.min_feasibility=1"],
                                     "searcher.min_feasibility=1"),
    "confirm k negative": lambda t: (["confirm.k=-1"], "confirm.k=-1"),
    "optuna_gp one local search": lambda t: (["problem=synthetic_knobs", "searcher=optuna_gp",
                                              "searcher.local_searches=1"], "searcher.local_searches=1"),
    "optuna_gp repair not a bool": lambda t: (["problem=synthetic_knobs", "searcher=optuna_gp", "searcher.repair=maybe"],
                                              "maybe"),
    "futhark without program": lambda t: (["problem=futhark"], "problem.program"),
    "futhark program missing": lambda t: (["problem=futhark", f"problem.program={t / 'x.fut'}"], "x.fut"),
    "futhark program not .fut": lambda t: (["problem=futhark", f"problem.program={_file(t, 'x.txt', b'hi')}"], "x.txt"),
    "futhark sizes not a bool": lambda t: (["problem=lud", "problem.sizes=maybe"], "maybe"),
    # issue 21: one problem.measure protocol; the former names say the new spelling
    "futhark runs renamed": lambda t: (["problem=lud", "problem.runs=3"], "problem.runs: no such option: renamed, "
                                       "use problem.measure.min_runs"),
    "futhark max_runs renamed": lambda t: (["problem=futhark", "problem.max_runs=3"], "use problem.measure.max_runs"),
    "opencl repeats renamed": lambda t: (["problem=lud_opencl", "problem.repeats=3"], "use problem.measure.min_runs"),
    "opencl validation_repeats renamed": lambda t: (["problem=matmul_opencl", "problem.validation_repeats=3"],
                                                    "use problem.validation_runs"),
    "opencl measure min_runs 0": lambda t: (["problem=loopmm_opencl", "problem.measure.min_runs=0"],
                                            "measure.min_runs=0"),
    # item 1: only registered classes
    "foreign target": lambda t: (["problem._target_=os.system"], "os.system"),
    # item 3: DoS
    "huge power": lambda t: (["problem=table", f"problem.path={_table(t, 'a <= 9**9**9**9')}"], "9 ** 387420489"),
    "huge string": lambda t: (["problem=table", f"problem.path={_table(t, chr(39) + 'x' + chr(39) + '*10**11 != a')}"],
                              "100000000000"),
    "dft too big": lambda t: (["problem=dft", "problem.size=1099511627776"], "problem.size=1099511627776"),
    "dft size 1": lambda t: (["problem=dft", "problem.size=1"], "problem.size=1"),
    "dft size 2^22+1": lambda t: (["problem=dft", "problem.size=4194305"], "problem.size=4194305"),
    "dft size not an integer": lambda t: (["problem=dft", "problem.size=10.5"], "10.5"),
    "dft scalar_codelets not a bool": lambda t: (["problem=dft", "problem.scalar_codelets=maybe"],
                                                 "problem.scalar_codelets=maybe: expected true or false, e.g. "
                                                 "problem.scalar_codelets=true"),
    "dft old flat protocol option": lambda t: (["problem=dft", "problem.min_runs=3"], "use problem.measure.min_runs"),
    "dft protocol option unknown": lambda t: (["problem=dft", "problem.measure.runs=3"], "problem.measure.runs"),
    # items 4-8
    "kt without path": lambda t: (["problem=kernel_tuner_cache"], "problem.path"),
    "negative seed": lambda t: (["seed=-1"], "seed=-1"),
    "huge seed": lambda t: (["seed=99999999999999999999999"], "seed=99999999999999999999999"),
    "cache is a directory": lambda t: ([f"cache={t}"], f"cache={t}"),
    "cache is corrupt": lambda t: ([f"cache={_file(t, 'c.db', b'SQLite format 3' + bytes(range(256)) * 8)}"], "cache="),
    "cache is text": lambda t: ([f"cache={_file(t, 'c.txt', b'hello, world' * 100)}"], "cache="),
    "cache read-only place": lambda t: (["cache=/proc/searchlab-cache.db"], "cache=/proc/searchlab-cache.db"),
    "target nan": lambda t: (["budget.target=nan"], "budget.target=nan"),
    "noise nan": lambda t: (["problem=synthetic_knobs", "problem.noise=nan"], "problem.noise=nan"),
    "kt no numeric time": lambda t: (["problem=kernel_tuner_cache", f"problem.path={_kt(t, ALL_FAILED)}"],
                                     "numeric 'time'"),
    "kt empty cache": lambda t: (["problem=kernel_tuner_cache", f"problem.path={_kt(t, {})}"], "holds no entry"),
    "kt recorded_failures": lambda t: (["problem=kernel_tuner_cache", f"problem.path={KT_SMALL}",
                                        "problem.recorded_failures=drop"], "problem.recorded_failures='drop'"),
    "kt known failures, missing invalid": lambda t: (["problem=kernel_tuner_cache", f"problem.path={KT_SMALL}",
                                                      "problem.recorded_failures=known", "problem.missing=invalid"],
                                                     "problem.missing=constraint"),
    "resume nowhere": lambda t: ([f"resume={t / 'nowhere'}"], "nowhere"),
    # issue 27 item 5: did you mean, the valid keys, resolved paths
    "searcher misspelt": lambda t: (["searcher=randmo"], "searcher/randmo' (did you mean 'random'?)"),
    "problem misspelt": lambda t: (["problem=synthetic_knob"], "(did you mean 'synthetic_knobs'"),
    "executor misspelt": lambda t: (["executor=sereal"], "(did you mean 'serial'?)"),
    "unknown searcher key": lambda t: (["searcher=random", "searcher.foo=1"],
                                       "searcher.foo: no such option (valid keys: tries)"),
    "misspelt budget key": lambda t: (["budget.evaluationz=3"],
                                      "budget.evaluationz: no such option (did you mean 'evaluations'?)"),
    "unknown budget key": lambda t: (["budget.zzz=3"], "budget.zzz: no such option (valid keys: evaluations, wall_time_s, "),
    "relative resume path": lambda t: (["resume=runs/nowhere"], f"{t / 'runs' / 'nowhere'}: no results.db"),
    "relative table path": lambda t: (["problem=table", "problem.path=tables/t.json.gz"], f"'{t / 'tables' / 't.json.gz'}'"),
    # issue 23: problem=searcher_settings
    "settings unknown searcher": lambda t: ([*SETTINGS, "problem.searcher=nope", f"problem.train=[{_kt(t, TWO)}]"],
                                            "problem.searcher=nope"),
    "settings no tunables": lambda t: ([*SETTINGS, "problem.searcher=random", f"problem.train=[{_kt(t, TWO)}]"],
                                       "problem.searcher=random"),
    "settings no train": lambda t: ([*SETTINGS, "problem.searcher=genetic"], "problem.train"),
    "settings missing train": lambda t: ([*SETTINGS, "problem.searcher=genetic", f"problem.train=[{t / 'no.json.gz'}]"],
                                         "no.json.gz"),
    "settings unsupported train": lambda t: ([*SETTINGS, "problem.searcher=genetic",
                                              f"problem.train=[{_file(t, 'x.txt', b'hi')}]"], "x.txt"),
    "settings seeds 0": lambda t: ([*SETTINGS, "problem.searcher=genetic", f"problem.train=[{_kt(t, TWO)}]",
                                    "problem.seeds=0"], "problem.seeds=0"),
    # issue 23, item 5: Kernel Tuner's strategies as searchers (searchlab/searchers/_kernel_tuner)
    "kt strategy bad method": lambda t: (["problem=synthetic_knobs", "searcher=kt_genetic_algorithm",
                                          "searcher.method=three_point"], "searcher.method='three_point'"),
    "kt strategy popsize 0": lambda t: (["problem=synthetic_knobs", "searcher=kt_pso", "searcher.popsize=0"],
                                        "searcher.popsize=0"),
    # issue 25: prior= (searchlab.run.priors)
    "prior missing file": lambda t: ([*KT_PROBLEM, "searcher=transfer", "prior=[nowhere.json.gz]"], "nowhere.json.gz"),
    "prior other parameters": lambda t: ([*KT_PROBLEM, "searcher=transfer", f"prior=[{_kt(t, {'1': {'x': 1, 'time': 1.0}})}]"],
                                         "lacks the problem's parameter"),
    "prior no overlap": lambda t: ([*KT_PROBLEM, "searcher=transfer", f"prior=[{_kt_shifted(t)}]"],
                                   "no successfully measured configuration"),
    "prior not a table": lambda t: ([*KT_PROBLEM, "searcher=transfer", f"prior=[{_file(t, 'p.json', b'[1, 2]')}]"],
                                    "not a Kernel Tuner cache"),
    "prior on a dag": lambda t: (["problem=synthetic_dag", "searcher=transfer", f"prior=[{KT_SMALL}]"],
                                 "priors work on knob spaces"),
    "prior twice": lambda t: ([*KT_PROBLEM, "searcher=transfer", f"prior=[{KT_SMALL},{KT_SMALL}]"], "names a path twice"),
    "prior bad base": lambda t: ([*KT_PROBLEM, "searcher=transfer_warm", "searcher.base=portfolio"], "searcher.base"),
    # issue 21: problem.measure is one typed option (user kernels: it was a free mapping, set with +)
    "measure with +, now typed": lambda t: (["problem=opencl_kernel", "+problem.measure.max_runs=5"],
                                            "problem.measure.max_runs=5"),
    "measure unknown field": lambda t: (["problem=command", "problem.measure.runs=3"], "runs"),
    "measure bad value": lambda t: (["problem=fir", "problem.measure.min_runs=0"], "measure.min_runs=0"),
    # issue 35: the confirm phase's sequential rule, executor=auto, and messages that say what to write
    "confirm max_rounds not an integer": lambda t: (["confirm.max_rounds=x"],
                                                    "confirm.max_rounds=x: expected an integer, e.g. confirm.max_rounds=40"),
    "confirm max_rounds below rounds": lambda t: (["confirm.rounds=8", "confirm.max_rounds=6"],
                                                  "confirm.max_rounds=6: must be >= confirm.rounds (8)"),
    "confirm max_rounds negative": lambda t: (["confirm.max_rounds=-1"], "confirm.max_rounds=-1: must be an integer >= 0"),
    "confirm equivalence too wide": lambda t: (["confirm.equivalence=0.9"], "confirm.equivalence=0.9: must be a finite"),
    "confirm equivalence not a number": lambda t: (["confirm.equivalence=tight"],
                                                   "confirm.equivalence=tight: expected a number, e.g. confirm.equivalence=0.02"),
    "confirm max_time_s negative": lambda t: (["confirm.max_time_s=-5"], "confirm.max_time_s=-5.0: must be a finite"),
    "confirm max_time_s inf": lambda t: (["confirm.max_time_s=inf"], "confirm.max_time_s=inf: must be a finite"),
    "auto workers 0": lambda t: (["executor=auto", "executor.workers=0"], "executor.workers=0: must be a positive integer"),
    "budget not an integer": lambda t: (["budget.evaluations=ten"],
                                        "budget.evaluations=ten: expected an integer, e.g. budget.evaluations=100"),
    "seed not an integer": lambda t: (["seed=abc"], "seed=abc: expected an integer"),
    "missing spec names the problem": lambda t: (["problem=opencl_kernel"], "problem=opencl_kernel needs problem.spec=..."),
    "incompatible pair names searchers that fit": lambda t: (["problem=synthetic_knobs", "searcher=dp"],
                                                             "searchers that fit: auto, "),
    # issue 46, item 4: --key value is not Hydra's 8-line usage but the override to write
    "dashed searcher": lambda t: (["--searcher", "auto"],
                                  "--searcher: not an option; overrides are key=value: use searcher=auto"),
    "dashed key=value": lambda t: (["problem=synthetic_knobs", "--budget.evaluations=5"], "use budget.evaluations=5"),
}


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, list[str]]:
    status = precheck([*argv, "executor=serial"] if not any(a.startswith("executor") for a in argv) else argv)
    return status, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_exit_2_and_nothing_written(name: str, in_tmp: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    argv, needle = CASES[name](in_tmp)
    before = set(in_tmp.rglob("*"))
    status, err = _refused(argv, capsys)
    assert status == 2, err
    assert len(err) == 1 and err[0].startswith("searchlab: error: ") and needle in err[0], err
    assert "Traceback" not in err[0]
    assert set(in_tmp.rglob("*")) == before  # no outputs/, no results.db, no cache file


def test_bad_thread_override_is_refused_before_anything_is_written(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SEARCHLAB_THREADS", "all")
    status, err = _refused(["problem=synthetic_knobs", "searcher=random"], capsys)
    assert status == 2 and len(err) == 1 and "SEARCHLAB_THREADS='all'" in err[0], err
    assert not list(in_tmp.rglob("*"))


def test_ray_auth_mode_typo_is_refused_before_joining(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Ray reads an unknown RAY_AUTH_MODE as 'disabled': a typo must not turn auth off (issue 24)."""
    monkeypatch.setenv("RAY_AUTH_MODE", "tokn")
    status, err = _refused(["problem=synthetic_knobs", "searcher=random", "executor=ray",
                            "executor.address=127.0.0.1:1"], capsys)
    assert status == 2 and len(err) == 1 and "RAY_AUTH_MODE='tokn'" in err[0], err
    assert not list(in_tmp.rglob("*"))


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from searchlab.run.lifecycle import execute
    from searchlab.study.execution.grid import _compose_run

    run_dir = tmp_path_factory.mktemp("run") / "run"
    execute(_compose_run(["problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=5",
                          "progress=off"]), run_dir, quiet=True)
    return run_dir


@pytest.mark.parametrize("extra, needle", [
    (["searcher=exhaustive"], "searcher=exhaustive differs"),
    (["problem.noise=0.5"], "problem.noise=0.5 differs"),
    (["seed=-1"], "seed=-1"),
    (["budget.target=nan"], "budget.target=nan"),
    ([f"prior=[{KT_SMALL}]"], "prior="),  # a prior changes the search: not a resumable change
])
def test_a_refused_resume_leaves_the_run_unchanged(finished_run: Path, extra: list[str], needle: str, in_tmp: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = _dump(finished_run / "results.db")
    status, err = _refused([f"resume={finished_run}", *extra], capsys)
    assert status == 2 and len(err) == 1 and needle in err[0], err
    assert _dump(finished_run / "results.db") == before
    assert not list(in_tmp.iterdir())


# -- the command line itself -------------------------------------------------------------------
def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searchlab", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_cli_refusal_leaves_no_directory(tmp_path: Path) -> None:
    out = _cli(tmp_path, "seed=-1", "executor=serial")
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "searchlab: error: seed=-1: must be an integer in [0, 2**63)"]
    assert not list(tmp_path.iterdir())  # item 13: no outputs/<date>/<time>/.hydra, no cli.log


def test_cli_run_writes_no_empty_log_and_resume_makes_no_directory(tmp_path: Path) -> None:
    out = _cli(tmp_path, "problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=4",
               "progress=off")
    assert out.returncode == 0, out.stderr
    (run_dir,) = [p.parent for p in tmp_path.glob("outputs/*/*/results.db")]
    assert not (run_dir / "cli.log").exists()
    before = sorted(p for p in tmp_path.rglob("*") if ".hydra" not in p.parts)
    out = _cli(tmp_path, f"resume={run_dir}", "budget.evaluations=6", "progress=off")
    assert out.returncode == 0, out.stderr
    after = sorted(p for p in tmp_path.rglob("*") if ".hydra" not in p.parts)
    assert [p for p in after if p not in before] == []  # the resumed run grew in place; no new directory
    assert json.loads((run_dir / "summary.json").read_text())["evaluations"] == 6


@pytest.mark.parametrize("text", ["a <= 9**9**9**9", "'x'*10**11 != a", "'%0999999999d' % 1 != a", "-" * 200 + "a",
                                  "2.0**100000 > a", "a * 2**5000 > 1", "(" * 50 + "a" + ")" * 50])
def test_expressions_are_bounded_at_parse_time(text: str) -> None:
    import time

    from searchlab.core.expr import Expression
    from searchlab.errors import ConfigError

    started = time.process_time()  # CPU time: a loaded machine stretches wall time, not this
    if text.startswith("(" * 50):  # deep but legal nesting of parentheses is fine
        assert Expression(text)({"a": 1}) == 1
        return
    with pytest.raises(ConfigError):
        Expression(text)
    assert time.process_time() - started < 1


def test_expressions_are_bounded_at_evaluation() -> None:
    from searchlab.core.expr import Expression
    from searchlab.errors import ConfigError

    with pytest.raises(ConfigError, match="bits"):
        Expression("a ** b < 1")({"a": 9, "b": 10**9})
    with pytest.raises(ConfigError, match="characters"):
        Expression("s * n != ''")({"s": "xy", "n": 10**9})
    assert Expression("a ** b")({"a": 2, "b": 64}) == 2**64


@pytest.mark.parametrize("value", ["maybe", "2", "null", "[true]"])
def test_a_bad_study_run_dirs_is_one_line_exit_2_and_nothing_written(value: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from searchlab.study.__main__ import main

    status = main(["study=kt_replay", f"run_dirs={value}", "--out", str(tmp_path / "study")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "study.run_dirs=" in err[0] and "true or false" in err[0], err
    assert not (tmp_path / "study").exists()



@pytest.mark.parametrize("argv", [["problem=lud2"], ["searcher=tagg"], ["searcher=zzzzqq"], ["budget.zzzzzz=1"],
                                  ["problem=synthetic_knobs", "searcher=random", "searcher.zzzz=1"]])
def test_a_refusal_that_lists_names_stays_within_160_characters(argv: list[str], in_tmp: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: the did-you-mean line was 624 characters; now a few names, then where the rest are."""
    status, err = _refused(argv, capsys)
    assert status == 2 and len(err) == 1 and len(err[0]) <= 160, err
    assert "did you mean" in err[0] or "--help" in err[0] or "valid keys" in err[0]


def test_a_study_key_that_needs_a_plus_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """issue 46, item 4: Hydra's "To append ... use +key=value" was dropped from the one line."""
    from searchlab.study.__main__ import main

    assert main(["study=kt_replay", "searchers.tpe=optuna_tpe"]) == 2  # kt_replay has no searchers.tpe (auto it has)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("Could not override 'searchers.tpe'; to add it, use +searchers.tpe=optuna_tpe"), line


@pytest.mark.parametrize("module", ["searchlab", "searchlab.study"])
def test_a_python_without_our_dependencies_says_which_to_use(module: str) -> None:
    """issue 46, item 1: a bare ``python -m searchlab`` (no hydra: ``-S`` leaves only the standard library) in
    the repository gave a ModuleNotFoundError, or a half-working --help."""
    root = Path(__file__).parents[2]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-S", "-m", module, "--help"], cwd=root, capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 2 and out.stdout == "", out.stdout[-500:]
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("searchlab: error: ") and "lacks searchlab's dependencies (hydra" in line
    assert f".venv/bin/python -m {module}" in line and "make setup" in line
