"""The field's own experiment files (../shared/data/methodology) with only their paths changed: what the reference
1.1.0 runs runs here, what it refuses is refused in one line (issue 51, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchlab.errors import ConfigError
from searchlab.reproduce.cli import main, reproduce
from searchlab.reproduce.experiment import load_experiment
from tests.reproduce.conftest import METHODOLOGY


def test_the_strategy_names_are_kernel_tuners() -> None:
    from kernel_tuner.interface import strategy_map

    from searchlab.reproduce.checks import KERNEL_TUNER_STRATEGIES

    assert set(strategy_map) == KERNEL_TUNER_STRATEGIES


def test_the_mock_file_runs_with_its_objective_inferred_from_the_space(field: Path) -> None:
    experiment = load_experiment(field / "test.json")
    (space,) = experiment.spaces
    assert experiment.version == "1.2.0" and space.objective == "time" and space.minimization
    assert "inferred" in space.objective_from  # test.json gives no objective_performance_keys
    result = reproduce(str(field / "test.json"), str(field / "out_test"), workers=1, quiet=True)
    assert result["ran"] == 10 and set(result["scores"].aggregate["time"]) == {"random_sample_10_iter"}


def test_a_schema_1_1_0_file_runs(field: Path, tmp_path: Path) -> None:
    raw = json.loads((field / "test_cached.json").read_text())
    assert raw["version"] == "1.1.0"
    assert len(load_experiment(field / "test_cached.json").groups) == 1  # the file as it is: accepted
    raw["experimental_groups_defaults"]["repeats"] = 3  # a shorter run of it
    (tmp_path / "short.json").write_text(json.dumps(raw))
    assert reproduce(str(tmp_path / "short.json"), str(tmp_path / "out"), workers=1, quiet=True)["ran"] == 3


def test_the_hyperparameter_file_maximises_score(field: Path, tmp_path: Path) -> None:
    experiment = load_experiment(field / "compare_hypertuners_metastrategy.json")
    assert [sp.objective for sp in experiment.spaces] == ["score"] * 3
    assert not any(sp.minimization for sp in experiment.spaces) and experiment.resolution == 1_000_000
    raw = json.loads((field / "compare_hypertuners_metastrategy.json").read_text())
    raw["experimental_groups_defaults"]["repeats"] = 3
    raw["visualization_settings"]["resolution"] = 2000
    (tmp_path / "short.json").write_text(json.dumps(raw))
    result = reproduce(str(tmp_path / "short.json"), str(tmp_path / "out"), workers=1, quiet=True)
    assert result["ran"] == 36 and len(result["scores"].aggregate["time"]) == 4


@pytest.mark.parametrize(("name", "needle"), [
    ("test_import_runs.json", "KTT"),
    ("test_bad_kernel_path.json", "no such file"),
    ("compare_meta_algorithms.json", "no such file"),  # its spaces are not shared here; the reference fails too
    # Kernel Tuner 1.5 has no bayes_opt_BOTorch (the reference would fail there at run time), and dedispersion_milo's
    # spaces are not shared here (where the reference fails first)
    ("compare_hypertuners_milo.json", "bayes_opt_BOTorch"),
])
def test_what_the_reference_refuses_is_one_line(field: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                name: str, needle: str) -> None:
    assert main([str(field / name), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["ktt_coulomb_two_search_methods.json", "ktt_vectorAddition_two_search_methods.json"])
def test_the_ktt_1_0_0_files_are_refused_as_the_schema_refuses_them(name: str) -> None:
    path = METHODOLOGY / "experiment_files" / name
    if not path.is_file():
        pytest.skip(f"no {path}")
    with pytest.raises(ConfigError, match="'plots' is a required property"):
        load_experiment(path)


def test_every_shared_file_the_standardization_schema_takes_the_installed_one_takes() -> None:
    from autotuning_methodology.validators import get_experiment_schema_filepath
    from jsonschema import Draft202012Validator

    standard = METHODOLOGY / "standardization" / "experiments.json"
    if not standard.is_file():
        pytest.skip(f"no {standard}")
    new = Draft202012Validator(json.loads(standard.read_text()))
    installed = Draft202012Validator(json.loads(get_experiment_schema_filepath().read_text()))
    files = [*sorted((METHODOLOGY / "experiment_files").glob("*.json")), *sorted((METHODOLOGY / "mockfiles").glob(
        "test*.json")), METHODOLOGY / "standardization" / "experiments_defaults.json"]
    for path in files:
        raw = json.loads(path.read_text())
        if new.is_valid(raw):
            assert installed.is_valid(raw), path.name
