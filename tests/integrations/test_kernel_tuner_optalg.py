"""searchlab inside the field's own tool (issue 45, item 1): ``SearchlabOptAlg`` named by an unchanged experiment file
of ``autotuning_methodology`` 1.1.0 through Kernel Tuner's ``custom_search_method_path``, run by the reference
``autotuning_experiment`` code on ../shared/data/benchmark_hub and scored by its ``get_strategy_scores``."""

from __future__ import annotations

import gzip
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.test_kernel_tuner_strategy import SMALL, simulate

pytest.importorskip("kernel_tuner")

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "searchlab" / "integrations" / "kernel_tuner.py"
HUB = ROOT.parent / "shared" / "data" / "benchmark_hub"
KT_CACHE = ROOT.parent / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz"


def hub(tmp_path: Path) -> Path:
    """The shared benchmark_hub subset as the reference reads it: its runner hands Kernel Tuner the T4 file's name
    without ``_T4`` (``generate_input_file``: "dirty fix"), so simulation mode needs Kernel Tuner's own cache
    ``A100.json`` beside ``A100_T4.json``: the same measurements, from ../shared/data/kernel_tuner."""
    root = tmp_path / "benchmark_hub"
    shutil.copytree(HUB / "kernels", root / "kernels")
    caches = root / "cachefiles" / "convolution_milo"
    caches.mkdir(parents=True)
    (caches / "A100_T4.json").symlink_to(HUB / "cachefiles" / "convolution_milo" / "A100_T4.json")
    with gzip.open(KT_CACHE, "rb") as src, (caches / "A100.json").open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return root


def experiment(tmp_path: Path, hyper: list[dict[str, Any]], repeats: int = 2) -> Path:
    """A schema-1.2.0 experiment file: one space (convolution_milo on A100), ``auto`` through SearchlabOptAlg,
    a small budget (the cutoff at 0.5 over evaluations)."""
    root = hub(tmp_path)
    doc = {
        "version": "1.2.0", "name": "searchlab_in_the_reference", "parent_folder": str(tmp_path / "experiment"),
        "experimental_groups_defaults": {
            "applications": [{"name": "convolution_milo", "folder": str(root / "kernels"),
                              "input_file": "convolution_milo.json", "objective_performance_keys": ["time"]}],
            "gpus": ["A100"],
            "pattern_for_full_search_space_filenames": {
                "regex": str(root / "cachefiles") + "/${applications}/${gpus}_T4.json"},
            "stochastic": True, "repeats": repeats, "samples": 32, "minimum_fraction_of_budget_valid": 0.1,
            "minimum_number_of_valid_search_iterations": 2, "ignore_cache": False, "autotuner": "KernelTuner"},
        "search_strategies": [{"name": "auto", "search_method": "SearchlabOptAlg", "display_name": "searchlab auto",
                               "custom_search_method_path": str(MODULE), "search_method_hyperparameters": hyper}],
        "statistics_settings": {"cutoff_percentile": 0.5, "cutoff_percentile_start": 0.01, "cutoff_type": "fevals",
                                "objective_time_keys": ["all"]},
        "visualization_settings": {"plots": [], "resolution": 100.0, "confidence_level": 0.95},
    }
    path = tmp_path / "experiment.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.skipif(not (HUB.is_dir() and KT_CACHE.is_file()), reason=f"the shared benchmark_hub subset is not at {HUB}")
def test_the_reference_runner_scores_auto_named_in_an_experiment_file(tmp_path: Path) -> None:
    pytest.importorskip("autotuning_methodology")
    from autotuning_methodology.report_experiments import get_strategy_scores

    scores = get_strategy_scores(str(experiment(tmp_path, [{"name": "searcher", "value": "auto"}])))
    assert set(scores) == {"auto"} and math.isfinite(scores["auto"]["score"])
    # one instance per repeat, each with its own drawn seed, recorded beside the reference's results
    record = tmp_path / "experiment" / "run" / "auto" / "A100_convolution_milo_auto.searchlab.jsonl"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(lines) >= 2 and all(line["searcher"] == "auto" and line["seed_drawn"] for line in lines)
    assert len({line["seed"] for line in lines}) == len(lines)  # repeats differ
    assert (tmp_path / "experiment" / "run" / "auto" / "A100_convolution_milo.npz").is_file()  # the reference's own


def test_the_module_loads_by_file_path_as_kernel_tuner_loads_it() -> None:
    from kernel_tuner.file_utils import import_class_from_file
    from kernel_tuner.strategies.wrapper import OptAlg

    cls = import_class_from_file(MODULE, "SearchlabOptAlg")
    alg = cls(searcher="random", seed=3)
    assert isinstance(alg, OptAlg) and alg.seed == 3 and not alg.seed_drawn
    assert alg.costfunc_kwargs == {"scaling": False, "snap": False}


def test_an_unknown_searcher_is_refused_when_built() -> None:
    from searchlab.errors import ConfigError
    from searchlab.integrations.kernel_tuner import SearchlabOptAlg

    with pytest.raises(ConfigError, match="searcher=nope"):
        SearchlabOptAlg(searcher="nope")


def _knob_searchers() -> list[str]:
    """Every registered searcher that works on a knob space (Kernel Tuner's spaces are knob spaces)."""
    from searchlab import registry
    from searchlab.core.spaces import KnobSpace, OrdinalKnob
    from searchlab.searchers import Searcher

    space = KnobSpace((OrdinalKnob("a", (1, 2, 4)), OrdinalKnob("b", (1, 2))))
    out = []
    for name in sorted(registry.entries("searcher")):
        cls = registry.searcher_class(name)
        assert issubclass(cls, Searcher)
        if cls.incompatibility(space) is None and not getattr(cls, "requires", frozenset()):
            out.append(name)
    return out


@pytest.mark.parametrize("searcher", _knob_searchers())
def test_any_registered_knob_searcher_runs_as_an_optalg(tmp_path: Path, searcher: str) -> None:
    from kernel_tuner.strategies.wrapper import OptAlgWrapper

    from searchlab.integrations.kernel_tuner import SearchlabOptAlg

    alg = SearchlabOptAlg(searcher=searcher)
    results, _ = simulate(SMALL, tmp_path, OptAlgWrapper(alg), 12)
    assert 1 <= len(results) <= 12
    assert alg.strategy.last is not None and alg.seed_drawn and alg.record is None  # not under tune_kernel_T1


def test_a_given_seed_repeats_the_trajectory_and_drawn_seeds_differ(tmp_path: Path) -> None:
    from kernel_tuner.strategies.wrapper import OptAlgWrapper

    from searchlab.integrations.kernel_tuner import SearchlabOptAlg

    def keys(alg: Any) -> list[tuple[Any, ...]]:
        results, cache = simulate(SMALL, tmp_path, OptAlgWrapper(alg), 15)
        return [tuple(r[n] for n in cache["tune_params_keys"]) for r in results]

    assert keys(SearchlabOptAlg(searcher="genetic", seed=5)) == keys(SearchlabOptAlg(searcher="genetic", seed=5))
    assert len({SearchlabOptAlg().seed for _ in range(5)}) == 5
