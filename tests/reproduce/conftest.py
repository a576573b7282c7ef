"""A small schema-1.2.0 experiment on the shared benchmark_hub (one space, two strategies, two repeats)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

HUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "benchmark_hub"


def experiment(tmp: Path, *, repeats: int = 2, strategies: list[dict[str, Any]] | None = None,
               gpu: str = "MI250X", **changes: Any) -> Path:
    if not (HUB / "cachefiles" / "convolution_milo" / f"{gpu}_T4.json").is_file():
        pytest.skip(f"no benchmark_hub at {HUB}")
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
        "visualization_settings": {"plots": [], "resolution": 200.0, "confidence_level": 0.95,
                                   "compare_baselines": False, "compare_split_times": False}}
    raw.update(changes)
    path = tmp / "experiment.json"
    path.write_text(json.dumps(raw))
    return path
