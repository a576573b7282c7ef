"""Train/test splits of a study (issue 23, item 4): parsing, leave-one-out from table metadata,
and a grid that runs test problems only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from searchlab.errors import ConfigError
from searchlab.study.execution.split import Fold, fold_seed, folds, table_key, tune_spec
from tests.tuning.test_tuner_settings import kt_table

LABELS = {"a": None, "b": None, "c": None}


def test_no_split_tests_everything() -> None:
    assert folds({}, LABELS) == [Fold("all", (), ("a", "b", "c"))]


def test_explicit_lists() -> None:
    assert folds({"train": ["a", "b"], "test": "c"}, LABELS) == [Fold("split", ("a", "b"), ("c",))]


def test_explicit_folds_each_test_their_own_problems() -> None:
    got = folds({"folds": [{"train": ["a", "b"], "test": ["c"]}, {"train": ["c"], "test": ["a", "b"], "name": "back"}]},
                LABELS)
    assert got == [Fold("fold1", ("a", "b"), ("c",)), Fold("back", ("c",), ("a", "b"))]


@pytest.mark.parametrize("split, needle", [
    ({"train": ["a"], "test": ["a", "b"]}, "both train and test"),
    ({"train": ["a"], "test": ["z"]}, "'z'"),
    ({"train": ["a"]}, "study.split.test"),
    ({"test": ["a"], "leave_one_out": "device"}, "either train and test"),
    ({"leave_one_out": "colour"}, "leave_one_out='colour'"),
    ({"folds": 3}, "study.split.folds=3: give a non-empty list"),
    ({"folds": []}, "non-empty list"),
    ({"folds": [{"train": ["a"], "test": ["b"]}], "test": ["c"]}, "either train and test"),
    ({"folds": [{"train": ["a"], "test": ["b"], "colour": 1}]}, r"folds\[0\]: unknown key\(s\) \['colour'\]"),
    ({"folds": [{"train": ["a"], "test": ["a"]}]}, r"folds\[0\]: \['a'\] are both train and test"),
    ({"folds": [{"train": ["a"], "test": ["b"]}, {"train": ["c"], "test": ["b"]}]}, "test problems of two folds"),
    ({"folds": [{"train": ["a"], "test": ["b"], "name": "x"}, {"train": ["a"], "test": ["c"], "name": "x"}]},
     "names .* repeat"),
    ({"leave_one_out": "device"}, "replays no table"),
])
def test_bad_splits_are_refused(split: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        folds(split, LABELS)


@pytest.fixture()
def four(tmp_path: Path) -> dict[str, str | None]:
    times = {x: 1.0 + x for x in range(4)}
    out: dict[str, str | None] = {}
    for label, device in (("p1", "A100"), ("p2", "A100"), ("p3", "W6600"), ("p4", "MI250X")):
        out[label] = str(kt_table(tmp_path / f"{label}.json.gz", times, device))
    return out


def test_leave_one_out_by_device_reads_the_caches(four: dict[str, str | None]) -> None:
    got = folds({"leave_one_out": "device"}, four)
    assert got == [Fold("device=A100", ("p3", "p4"), ("p1", "p2")), Fold("device=W6600", ("p1", "p2", "p4"), ("p3",)),
                   Fold("device=MI250X", ("p1", "p2", "p3"), ("p4",))]


def test_leave_one_out_by_kernel_needs_two_kernels(four: dict[str, str | None]) -> None:
    with pytest.raises(ConfigError, match="one kernel only"):
        folds({"leave_one_out": "kernel"}, four)


def test_kernel_and_device_fall_back_to_the_file_name(tmp_path: Path) -> None:
    import gzip
    import json

    path = tmp_path / "convolution_A4000.json.gz"
    with gzip.open(path, "wt") as fh:  # no device_name, no kernel_name
        json.dump({"tune_params": {"x": [1, 2]}, "cache": {"1": {"x": 1, "time": 1.0}, "2": {"x": 2, "time": 2.0}}}, fh)
    assert (table_key(str(path), "kernel"), table_key(str(path), "device")) == ("convolution", "A4000")


def test_shared_tables_have_four_devices_and_one_kernel() -> None:
    data = Path(__file__).resolve().parents[3] / "shared" / "data" / "kernel_tuner"
    if not data.is_dir():
        pytest.skip("the shared Kernel Tuner tables are not here")
    paths = sorted(data.glob("convolution_*.json.gz"))
    assert {table_key(str(p), "kernel") for p in paths} == {"convolution_kernel"}
    assert len({table_key(str(p), "device") for p in paths}) == 4


@pytest.mark.parametrize("spec, needle", [({"tune": {}}, "overrides"), ({"overrides": "genetic", "tune": {"x": 1}}, "keys"),
                                          ({"overrides": "genetic", "extra": 1}, "extra")])
def test_bad_tune_specs(spec: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        tune_spec("s", spec)


def test_tune_spec_defaults() -> None:
    assert tune_spec("s", "genetic") == ("genetic", None)
    overrides, options = tune_spec("s", {"overrides": ["searcher=genetic"], "tune": {"evaluations": 7}})
    assert overrides == ["searcher=genetic"] and options is not None
    assert (options["searcher"], options["evaluations"], options["seeds"]) == ("optuna_tpe", 7, 5)
    assert options["options"] == []
    with pytest.raises(ConfigError, match="tune.options='popsize': give a list"):
        tune_spec("s", {"overrides": ["searcher=genetic"], "tune": {"options": "popsize"}})


def test_the_grid_runs_only_test_problems(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from searchlab.study.execution.config import StudyConfig
    from searchlab.study.execution.grid import make_cells

    base = OmegaConf.structured(StudyConfig)
    cfg = OmegaConf.merge(base, {"problems": {"k1": ["problem=synthetic_knobs", "problem.seed=1"],
                                              "k2": ["problem=synthetic_knobs", "problem.seed=2"]},
                                 "searchers": {"random": "random"}, "seeds": 2, "budget": {"evaluations": 5},
                                 "split": {"train": ["k1"], "test": ["k2"]}})
    cells, notes = make_cells(cfg, tmp_path)
    assert {c.problem for c in cells} == {"k2"} and len(cells) == 2
    assert any("train ['k1'], test ['k2']" in n for n in notes)


def test_a_tuned_searcher_is_tuned_per_fold_on_training_tables_only(tmp_path: Path, four: dict[str, str | None]) -> None:
    import json

    from omegaconf import OmegaConf

    from searchlab.study.execution.config import StudyConfig
    from searchlab.study.execution.grid import make_cells

    problems = {label: ["problem=kernel_tuner_cache", f"problem.path={path}"] for label, path in four.items()}
    cfg = OmegaConf.merge(OmegaConf.structured(StudyConfig), {
        "problems": problems, "seeds": 1, "budget": {"evaluations": 3}, "split": {"leave_one_out": "device"},
        "searchers": {"plain": "genetic", "tuned": {"overrides": ["searcher=genetic"],
                                                    "tune": {"searcher": "random", "evaluations": 2, "seeds": 1}}}})
    cells, notes = make_cells(cfg, tmp_path)
    assert sorted((c.problem, c.searcher) for c in cells) == sorted((p, s) for p in four for s in ("plain", "tuned"))
    runs = sorted((tmp_path / "tuning" / "tuned").iterdir())
    assert [r.name for r in runs] == ["device_A100", "device_MI250X", "device_W6600"]
    from searchlab.core.store import read_run

    seeds = {r.name: read_run(r)[0]["config"]["seed"] for r in runs}  # the meta-search's seed differs per fold
    assert seeds == {f"device_{d}": fold_seed(0, f"device={d}") for d in ("A100", "MI250X", "W6600")}
    assert len(set(seeds.values())) == 3
    for run in runs:  # each fold's tuning replayed its training tables only, at the study's budget
        summary = json.loads((run / "summary.json").read_text())
        report = summary["report"]  # the recommendation: the search's best only where it beat the defaults
        best = report["default_settings"] if report["tuned_is_default"] else summary["best"]["config"]
        held = {"device_A100": ("p1", "p2"), "device_MI250X": ("p4",), "device_W6600": ("p3",)}[run.name]
        problem = read_run(run)[0]["config"]["problem"]
        assert sorted(Path(t).name for t in problem["train"]) == sorted(f"{p}.json.gz" for p in four if p not in held)
        assert problem["budget"] == 3 and problem["seeds"] == 1
        for cell in cells:
            if cell.searcher == "tuned" and cell.problem in held:
                assert {k: cell.cfg["searcher"][k] for k in best} == best
    assert any("tuned tuned on ['p3', 'p4'] (device=A100)" in n for n in notes)
    train_of_a100 = [n for n in notes if n.startswith("split device=A100")]
    assert train_of_a100 == ["split device=A100: train ['p3', 'p4'], test ['p1', 'p2'] (test results only)"]


def test_the_meta_seed_is_a_function_of_the_study_seed_and_the_fold() -> None:
    names = ["train_A100_MI250X", "train_A4000_W6600", "device=A100", "device=W6600"]
    seeds = [fold_seed(0, n) for n in names]
    assert seeds == [fold_seed(0, n) for n in names]  # deterministic: a re-run tunes each fold as before
    assert len(set(seeds)) == len(names) and all(0 <= s < 2**31 for s in seeds)
    assert fold_seed(1, names[0]) != seeds[0]  # tune.seed still moves every fold
