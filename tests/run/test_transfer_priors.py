"""``prior=[PATH,...]`` (issue 25): every format loads as data, the matching rule, the CLI path."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from searchlab.adapters.knobs.kernel_tuner import load_kernel_tuner_cache
from searchlab.adapters.table import Table, TableKnobSpace, save_table
from searchlab.core.records import Config, Direction, Measurement
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.core.store import read_run
from searchlab.errors import ConfigError
from searchlab.interchange.t4 import Record, t4_document
from searchlab.run.priors import give_prior, load_prior, read_prior
from searchlab.searchers import RandomSearcher, TransferTopKSearcher

KT_SMALL = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"
ROOT = Path(__file__).resolve().parents[2]
SPACE = KnobSpace((OrdinalKnob("a", (1, 2, 4)), OrdinalKnob("b", (1, 2))))


def _table_file(tmp: Path, knobs: dict[str, tuple[int, ...]], rows: dict[tuple[int, ...], float],
                direction: Direction = Direction.MINIMIZE) -> Path:
    names = list(knobs)
    space = TableKnobSpace(tuple(OrdinalKnob(n, v) for n, v in knobs.items()),
                           members=frozenset(Config(dict(zip(names, k))) for k in rows))
    table = Table(space, {Config(dict(zip(names, k))): Measurement.ok(v) for k, v in rows.items()}, direction)
    return save_table(table, tmp / f"t{len(list(tmp.iterdir()))}.json.gz")


def test_a_kernel_tuner_cache_prior_ranks_its_own_optimum_first() -> None:
    table = load_kernel_tuner_cache(KT_SMALL)
    prior = load_prior([str(KT_SMALL)], table.space, table.direction)
    assert prior is not None
    best = table.best()
    assert best is not None and prior.ranking()[0] == best[0]
    (only,) = prior.tables
    assert only.speed[best[0]] == 1.0 and only.dropped == 0
    failed = [c for c, m in table.rows.items() if m.objective is None]
    assert failed and all(only.speed[c] == 0.0 for c in failed)


def test_matching_drops_a_constant_extra_parameter_and_fills_a_single_valued_knob(tmp_path: Path) -> None:
    extra = _table_file(tmp_path, {"a": (1, 2, 4), "b": (1, 2), "c": (7,)}, {(1, 1, 7): 4.0, (4, 2, 7): 1.0})
    prior = load_prior([str(extra)], SPACE, Direction.MINIMIZE)
    assert prior is not None and prior.ranking()[0] == Config({"a": 4, "b": 2})
    single = KnobSpace((OrdinalKnob("a", (1, 2, 4)), OrdinalKnob("b", (1, 2)), OrdinalKnob("d", (9,))))
    lacking = _table_file(tmp_path, {"a": (1, 2, 4), "b": (1, 2)}, {(2, 1): 2.0, (1, 1): 1.0})
    prior = load_prior([str(lacking)], single, Direction.MINIMIZE)
    assert prior is not None and prior.ranking() == [Config({"a": 1, "b": 1, "d": 9}), Config({"a": 2, "b": 1, "d": 9})]


def test_rows_outside_the_problems_values_are_dropped_and_counted(tmp_path: Path) -> None:
    wider = _table_file(tmp_path, {"a": (1, 2, 4, 8), "b": (1, 2)}, {(8, 1): 0.5, (2, 2): 1.0, (1, 1): 2.0})
    prior = load_prior([str(wider)], SPACE, Direction.MINIMIZE)
    assert prior is not None
    assert prior.tables[0].dropped == 1 and Config({"a": 8, "b": 1}) not in prior.tables[0].speed
    assert prior.ranking()[0] == Config({"a": 2, "b": 2})  # the best inside the space: speed 1 after matching


@pytest.mark.parametrize("knobs,rows,direction,needle", [
    ({"a": (1, 2, 4), "c": (1, 2)}, {(1, 1): 1.0, (2, 2): 2.0}, Direction.MINIMIZE, "lacks the problem's parameter 'b'"),
    ({"a": (1, 2, 4), "b": (1, 2), "c": (1, 2)}, {(1, 1, 1): 1.0, (1, 1, 2): 2.0}, Direction.MINIMIZE,
     "has parameter 'c' with several values"),
    ({"a": (16, 32), "b": (1, 2)}, {(16, 1): 1.0}, Direction.MINIMIZE, "no successfully measured configuration"),
    ({"a": (1, 2, 4), "b": (1, 2)}, {(1, 1): 1.0}, Direction.MAXIMIZE, "same objective"),
])
def test_priors_of_another_space_are_refused_in_one_line(tmp_path: Path, knobs: dict[str, tuple[int, ...]],
                                                         rows: dict[tuple[int, ...], float], direction: Direction,
                                                         needle: str) -> None:
    path = _table_file(tmp_path, knobs, rows, direction)
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(")) as info:
        load_prior([str(path)], SPACE, Direction.MINIMIZE)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_t4_file_is_a_prior(tmp_path: Path) -> None:
    records = [Record(Config({"a": a, "b": b}), Measurement.ok(float(a * b))) for a in (1, 2, 4) for b in (1, 2)]
    path = tmp_path / "t4.json"
    path.write_text(json.dumps(t4_document(records, "time")))
    prior = load_prior([str(path)], SPACE, Direction.MINIMIZE)
    assert prior is not None and prior.ranking()[:2] == [Config({"a": 1, "b": 1}), Config({"a": 1, "b": 2})]


def test_a_run_is_a_prior_read_as_records_without_building_anything(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.run.lifecycle import execute

    cfg = {"problem": {"_target_": "searchlab.adapters.knobs.KernelTunerCache", "path": str(KT_SMALL)},
           "searcher": {"_target_": "searchlab.searchers.RandomSearcher"},
           "executor": {"_target_": "searchlab.run.execution.SerialExecutor"},
           "budget": {"evaluations": 12}, "seed": 0, "progress": "off", "plot": False, "confirm": {"k": 0}}
    execute(cfg, tmp_path / "run", quiet=True)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("loading a prior must not build a problem")

    monkeypatch.setattr("searchlab.run.execution.build_problem", refuse)
    monkeypatch.setattr("searchlab.recompose.recompose", refuse)
    raw = read_prior(str(tmp_path / "run"))
    assert len(raw.rows) == 12 and raw.direction is Direction.MINIMIZE
    table = load_kernel_tuner_cache(KT_SMALL)
    prior = load_prior([str(tmp_path / "run" / "results.db")], table.space, table.direction)
    assert prior is not None and len(prior.configs) == 12


def test_a_cold_searcher_gets_a_note_and_a_transfer_searcher_the_prior() -> None:
    prior = load_prior([str(KT_SMALL)], load_kernel_tuner_cache(KT_SMALL).space, Direction.MINIMIZE)
    space = load_kernel_tuner_cache(KT_SMALL).space
    assert "does not learn from priors" in str(give_prior(RandomSearcher(space, seed=0), prior, "random"))
    transfer = TransferTopKSearcher(space, seed=0, k=2)
    assert give_prior(transfer, prior, "transfer_topk") is None and transfer.prior is prior


def test_cli_runs_transfer_with_a_prior(tmp_path: Path) -> None:
    other = tmp_path / "other.json.gz"  # the same space "on another device": times scaled and one row slower
    with gzip.open(KT_SMALL, "rt") as fh:
        doc = json.load(fh)
    for entry in doc["cache"].values():
        if isinstance(entry.get("time"), float):
            entry["time"] *= 1.7
    with gzip.open(other, "wt") as fh:
        json.dump(doc, fh)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "searchlab", "problem=kernel_tuner_cache", f"problem.path={KT_SMALL}",
                           f"prior=[{other}]", "searcher=transfer", "budget.evaluations=8", "executor=serial",
                           "progress=off", "plot=false", f"hydra.run.dir={tmp_path / 'run'}"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["evaluations"] == 8
    best = load_kernel_tuner_cache(KT_SMALL).best()
    assert best is not None and summary["best"]["objective"] == best[1].objective  # the prior's top: the optimum here
    # issue 35/38: which priors, their weights and the fallback decision, in the records and printed
    priors = summary["priors"]
    assert [t["source"] for t in priors["tables"]] == [str(other)] and priors["tables"][0]["used"]
    assert priors["cold_auto"] is False and priors["fell_back_at"] is None
    assert "searchlab: note: prior: used other.json.gz (weight 1.00" in proc.stdout
    assert "cold auto did not take over" in proc.stdout
    _, results = read_run(tmp_path / "run")
    assert all(r.candidate.meta["cold"] is False and r.candidate.meta["prior_weights"] == [1.0] for r in results)
