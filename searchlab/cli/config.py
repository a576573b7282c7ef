"""Structured configs (dataclasses in Hydra's ConfigStore).

Every registered problem and searcher (:mod:`searchlab.registry`: entry points, built-ins
included) is stored twice: as ``problem/NAME`` / ``searcher/NAME``, so ``problem=NAME``
works with no YAML file (a plugin ships none), and as ``schema/<group>/NAME``, which an
optional ``searchlab/conf/<group>/NAME.yaml`` extends to add data (a sensor model) or a
description line; where that file exists, the bare ``problem/NAME`` entry is left out (Hydra
would otherwise match the two by name, a deprecated behaviour). A typo or a wrong type in an
override fails at composition with Hydra's message either way.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from searchlab.core.groups import CONF_DIR
from searchlab.run.confirm import ConfirmConfig
from searchlab.run.loop import Budget


def mutable_schema(cls: type) -> type:
    """A Hydra schema of the frozen dataclass ``cls``: its fields, types and defaults, declared once
    there (Hydra makes a frozen dataclass's node read-only, so overrides need a mutable twin)."""
    hints = typing.get_type_hints(cls)
    return make_dataclass(f"{cls.__name__}Schema", [(f.name, hints[f.name], field(default=f.default))
                                                    for f in fields(cls)])


BudgetSchema = mutable_schema(Budget)  # the budget's options are Budget's fields (searchlab.run.loop)


@dataclass
class SearchlabConfig:
    """The run's top-level options, declared here only (conf/config.yaml adds the defaults list and
    Hydra's settings, no values)."""

    problem: Any = MISSING
    searcher: Any = MISSING
    executor: Any = MISSING
    budget: Any = field(default_factory=BudgetSchema)
    confirm: ConfirmConfig = field(default_factory=ConfirmConfig)  # the run-end confirm phase (searchlab.run.confirm)
    seed: int = 0
    resume: str | None = None  # a run directory to continue
    resume_changed: bool = False  # resume although an input changed (a new session, recorded so; searchlab.run.inputs)
    cache: str | None = None  # a measurement cache (SQLite file)
    progress: str = "auto"  # auto | bar | log | off
    name: str | None = None  # a label stored with the run
    prior: list[str] | None = None  # recorded tables/runs of this space on other devices (searchlab.run.priors)
    plot: bool = True  # best_so_far.png beside summary.json (~0.1-0.5 s; plot=false for large replay studies)
    live: str = "auto"  # the optuna-dashboard view: auto | true | false | a storage (searchlab.run.live)


def problem_schemas() -> dict[str, type]:
    from searchlab import registry

    return registry.schemas("problem")


def searcher_schemas() -> dict[str, type]:
    from searchlab import registry

    return registry.schemas("searcher")


_registered = False


def register_configs() -> None:
    """Store every schema in Hydra's ConfigStore (idempotent)."""
    global _registered
    if _registered:
        return
    from searchlab import registry

    cs = ConfigStore.instance()
    cs.store(name="searchlab_schema", node=SearchlabConfig)
    cs.store(group="schema/budget", name="budget", node=BudgetSchema)
    for kind in registry.KINDS:
        for name, node in registry.schemas(kind).items():
            cs.store(group=f"schema/{kind}", name=name, node=node)
            # A YAML file of that name extends schema/<kind>/NAME itself; a second entry of the same name
            # would trigger Hydra's deprecated automatic schema matching.
            if kind != "executor" and not (CONF_DIR / kind / f"{name}.yaml").is_file():
                cs.store(group=kind, name=name, node=node)
    _registered = True
