"""Property tests (hypothesis, fixed seed, few examples): random override strings and random
files (bytes and JSON) as tables, Kernel Tuner caches and grammars never end in a traceback
-- only in searchlab's one-line errors (issue 10, "Done when")."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from searchlab.errors import SearchlabError

KEYS = ["seed", "budget.evaluations", "budget.target", "budget.wall_time_s", "budget.max_failure_rate",
        "problem.size", "problem.noise", "problem.arity", "searcher.max_size", "executor.workers", "progress",
        "cache", "name", "problem.path", "+problem.x", "~budget.target"]
PROBLEMS = ["synthetic_dag", "synthetic_knobs", "synthetic_thresholds", "dft", "table", "kernel_tuner_cache"]
VALUES = st.one_of(
    st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["nan", "inf", "-inf", "null", "[]", "[1,2]", "{}", "1e400", "${oc.env:HOME}", "???"]),
)
OVERRIDES = st.lists(st.one_of(
    st.tuples(st.sampled_from(KEYS), VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"),
    st.sampled_from(PROBLEMS).map(lambda p: f"problem={p}"),
    st.text(max_size=20),
), max_size=4)
FAST = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)


@seed(10)
@FAST
@given(argv=OVERRIDES)
def test_random_overrides_never_end_in_a_traceback(argv: list[str]) -> None:
    from searchlab.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            status = cli.precheck([a for a in argv if not a.startswith("-")] + ["executor=serial"])
        finally:
            os.chdir(cwd)
    assert status in (None, 0, 2)


def _write(path: Path, data: bytes) -> Path:
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)
    return path


def _kt_like(value: Any) -> Any:
    """Random JSON, half the time shaped like a Kernel Tuner cache so loading gets further."""
    if isinstance(value, dict) and value:
        keys = list(value)
        return {"tune_params": value, "cache": {k: value for k in keys[:2]}, "tune_params_keys": keys}
    return value


LOADERS = {
    "table": lambda p: __import__("searchlab.adapters.table", fromlist=["load_table"]).load_table(p),
    "kernel_tuner": lambda p: __import__("searchlab.adapters.knobs.kernel_tuner", fromlist=["x"]).load_kernel_tuner_cache(p),
    "grammar problem": lambda p: __import__("searchlab.run.execution", fromlist=["build_problem"]).build_problem(
        {"_target_": "searchlab.adapters.grammar.GrammarProblem", "grammar": str(p)}),
    "table problem": lambda p: __import__("searchlab.run.execution", fromlist=["build_problem"]).build_problem(
        {"_target_": "searchlab.adapters.table.TableProblem", "path": str(p)}),
}


@pytest.mark.parametrize("loader", list(LOADERS))
@seed(11)
@FAST
@given(data=st.one_of(st.binary(max_size=300), JSON.map(lambda v: json.dumps(_kt_like(v)).encode())),
       suffix=st.sampled_from([".json", ".json.gz", ".yaml"]))
def test_random_files_never_end_in_a_traceback(loader: str, data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / f"file{suffix}", data)
        try:
            LOADERS[loader](path)
        except SearchlabError as exc:
            assert "\n" not in " ".join(str(exc).split())
