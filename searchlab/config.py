"""Structured configs (dataclasses in Hydra's ConfigStore).

Every ``conf/<group>/<name>.yaml`` for problems, searchers and executors extends a schema
stored as ``schema/<group>/<name>``, so a typo or a wrong type in an override fails at
composition with Hydra's message. Searcher schemas come from ``searchlab.searchers``;
problem schemas from the ``searchlab.schemas`` entry points (the adapters), so searchlab
never imports an adapter by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from searchlab.confirm import ConfirmConfig
from searchlab.execution import SerialExecutorConfig
from searchlab.execution._ray import RayExecutorConfig


@dataclass
class BudgetConfig:
    evaluations: int | None = 100
    wall_time_s: float | None = None
    target: float | None = None
    charged_time_s: float | None = None
    max_failure_rate: float | None = None
    failure_rate_after: int = 20
    max_infeasible_proposals: int | None = 10_000


@dataclass
class SearchlabConfig:
    problem: Any = MISSING
    searcher: Any = MISSING
    executor: Any = MISSING
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    confirm: ConfirmConfig = field(default_factory=ConfirmConfig)  # the run-end confirm phase (searchlab.confirm)
    seed: int = 0
    resume: str | None = None  # a run directory to continue
    cache: str | None = None  # a measurement cache (SQLite file)
    progress: str = "auto"  # auto | bar | log | off
    name: str | None = None  # a label stored with the run


def problem_schemas() -> dict[str, type]:
    merged: dict[str, type] = {}
    for ep in entry_points(group="searchlab.schemas"):
        merged.update(ep.load()())
    return merged


def searcher_schemas() -> dict[str, type]:
    from searchlab.searchers import SCHEMAS

    return dict(SCHEMAS)


_registered = False


def register_configs() -> None:
    """Store every schema in Hydra's ConfigStore (idempotent)."""
    global _registered
    if _registered:
        return
    cs = ConfigStore.instance()
    cs.store(name="searchlab_schema", node=SearchlabConfig)
    cs.store(group="schema/budget", name="budget", node=BudgetConfig)
    cs.store(group="schema/executor", name="serial", node=SerialExecutorConfig)
    cs.store(group="schema/executor", name="ray", node=RayExecutorConfig)
    for name, node in searcher_schemas().items():
        cs.store(group="schema/searcher", name=name, node=node)
    from searchlab.tables import TableProblemConfig

    cs.store(group="schema/problem", name="table", node=TableProblemConfig)
    for name, node in problem_schemas().items():
        cs.store(group="schema/problem", name=name, node=node)
    _registered = True
