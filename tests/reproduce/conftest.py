"""Experiment files for the reproduce tests: a small one on the shared benchmark_hub, and the field's own files.

``../shared/data`` is found beside the checkout (a worktree under ``<dir>/wt/<name>`` finds ``<dir>/shared``); where
it is missing the tests that need it are skipped, saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
              ROOT.parent / "shared" / "data")
HUB = SHARED / "benchmark_hub"
METHODOLOGY = SHARED / "methodology"


def need_hub() -> None:
    if not (HUB / "cachefiles" / "convolution_milo" / "MI250X_T4.json").is_file():
        pytest.skip(f"no benchmark_hub at {HUB}")


def raw_experiment(tmp: Path, *, repeats: int = 2, strategies: list[dict[str, Any]] | None = None,
                   gpu: str = "MI250X", **changes: Any) -> dict[str, Any]:
    need_hub()
    raw: dict[str, Any] = {
        "version": "1.2.0", "name": "tiny", "parent_folder": str(tmp / "ref"),
        "experimental_groups_defaults": {
            "applications": [{"name": "convolution_milo", "folder": str(HUB / "kernels"),
                              "input_file": "convolution_milo.json", "objective_performance_keys": ["time"]}],
            "gpus": [gpu],
            "pattern_for_full_search_space_filenames": {
                "regex": str(HUB / "cachefiles" / "${applications}" / "${gpus}_T4.json")},
            "stochastic": True, "repeats": repeats, "samples": 32, "minimum_fraction_of_budget_valid": 0.1,
            "minimum_number_of_valid_search_iterations": 5, "ignore_cache": False, "autotuner": "KernelTuner"},
        "search_strategies": strategies or [
            {"name": "random", "search_method": "random_sample", "display_name": "Random"},
            {"name": "ga", "search_method": "genetic_algorithm", "display_name": "GA"}],
        "statistics_settings": {"cutoff_percentile": 0.9, "cutoff_percentile_start": 0.01, "cutoff_type": "time",
                                "objective_time_keys": ["all"]},
        "visualization_settings": {"plots": [{"scope": "aggregate", "style": "line"}], "resolution": 200.0,
                                   "confidence_level": 0.95, "compare_baselines": False, "compare_split_times": False}}
    raw.update(changes)
    return raw


def write(tmp: Path, raw: dict[str, Any], name: str = "experiment.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(raw))
    return path


def experiment(tmp: Path, **kwargs: Any) -> Path:
    return write(tmp, raw_experiment(tmp, **kwargs))


@pytest.fixture(scope="session")
def field(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hub copy and the field's files with only their paths changed (bench/reproduce_files.py)."""
    if not (METHODOLOGY / "mockfiles" / "test.json").is_file():
        pytest.skip(f"no methodology files at {METHODOLOGY}")
    need_hub()
    from bench.reproduce_files import derived, hub_copy

    out = tmp_path_factory.mktemp("field")
    hub = hub_copy(out)
    for name in ("mockfiles/test.json", "mockfiles/test_cached.json", "mockfiles/test_import_runs.json",
                 "mockfiles/test_bad_kernel_path.json", "experiment_files/compare_hypertuners_metastrategy.json",
                 "experiment_files/compare_meta_algorithms.json", "experiment_files/compare_hypertuners_milo.json"):
        derived(METHODOLOGY / name, out, hub)
    return out
