"""The suite in two parts (docs/testing.md): ``make test`` runs the ``parallel_safe`` files on two
xdist workers, then the rest one at a time.

Why: on CI's two cores the suite took 16-18 min, over its 15-minute goal. The files listed
here are pure computation (searchers on synthetic spaces, statistics, parsing, error paths of
the CLI): they start no Ray cluster, pin no core, run no OpenCL device and time nothing, so two
of them at once cannot disturb each other. Everything else (Ray, clusters, signals, device
measurements, subprocess timing) stays serial, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PARALLEL_SAFE = (
    "searchers/",
    "core/test_expr.py", "core/test_measure.py", "core/test_sampler.py", "core/test_sequential.py",
    "core/test_spaces.py", "core/test_store.py", "core/test_commands.py",
    "registry/", "bench/",
    "tuning/test_live.py", "tuning/test_tuner.py", "tuning/test_tuner_split.py",
    "study/test_study_data.py", "study/test_study_tuned.py", "study/test_study_stats.py",
    "study/test_study_metrics.py", "study/test_study_methodology.py", "study/test_study_paper.py",
    "adapters/test_byo_t4.py", "adapters/test_dft_compact.py", "adapters/test_dft_sizes.py",
    "adapters/test_grammar.py", "adapters/test_grammar_dft.py", "adapters/test_peers_counting.py",
    "integrations/test_export_optuna.py", "integrations/test_optuna_sampler.py",
    "integrations/test_integration_faults.py", "cli/test_cli.py", "cli/test_bad_input.py",
    "reproduce/test_reproduce_tables.py", "reproduce/test_reproduce_budget_escape.py", "interchange/test_t1.py",
    "run/test_loop.py", "run/test_budget_schedules.py", "run/test_run_lifecycle.py", "run/test_default_check.py",
    "run/test_confirm.py", "run/test_failures.py", "run/test_transfer_priors.py", "run/test_handover.py",
    "adapters/test_kernel_tuner.py", "adapters/test_table_replay_paths.py", "adapters/test_byo_t1.py",
    "study/test_study_baseline.py", "adapters/test_open_table.py", "test_security.py", "test_properties.py",
    "test_architecture.py", "test_readme.py", "test_packaging.py", "run/test_cluster_records.py",
    "run/test_executor_auto.py", "integrations/test_library_manners.py", "adapters/test_futhark_versus.py",
    "adapters/test_user_default.py", "test_install_script.py",
)
# Files whose tests share an expensive module fixture (a wheel and a venv): one xdist worker runs
# the whole file (``--dist loadgroup``), so the fixture is built once, not once per worker.
ONE_WORKER = ("test_packaging.py",)
SERIAL_ONLY = ("searchers/test_probabilistic_fed.py",)  # runs OpenCL problems on pinned cores

HERE = Path(__file__).parent


def parallel_safe(path: Path) -> bool:
    rel = path.resolve().relative_to(HERE).as_posix()
    return rel.startswith(PARALLEL_SAFE) and not rel.startswith(SERIAL_ONLY)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if parallel_safe(path):
            item.add_marker(pytest.mark.parallel_safe)
        rel = path.resolve().relative_to(HERE).as_posix()
        if rel.startswith(ONE_WORKER):
            item.add_marker(pytest.mark.xdist_group(rel))
