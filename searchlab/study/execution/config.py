"""Study configs: ``conf/study/NAME.yaml`` composed with Hydra's compose API.

Why not a second ``@hydra.main`` app: ``python -m searchlab.study`` also takes run
directories as plain arguments, which ``@hydra.main`` would reject; the compose API gives
the same config files, defaults lists, structured-config type checks and override grammar
(``seeds=20``, ``budget.evaluations=50``, ``~searchers.uct`` drops a searcher,
``+searchers.ex=exhaustive`` adds one; a ``{...}`` value merges into a mapping)
without taking over argv, the working directory or logging. Each run of the grid is then
composed from ``searchlab/conf/`` exactly as ``python -m searchlab`` composes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from searchlab.errors import ConfigError, did_you_mean

SCHEMA_NAME = "searchlab_study_schema"
MODES = ("replay", "live")


@dataclass
class StudyConfig:
    """One study: a grid problems x searchers x seeds with one budget, run then reported."""

    name: str = "study"
    mode: str = "replay"  # replay: tables, parallel Ray tasks; live: ordinary runs one after another
    # label -> {overrides: [problem=..., problem.x=...], table: null | auto | PATH}, or just "NAME"
    problems: dict[str, Any] = field(default_factory=dict)
    # label -> [searcher=..., searcher.x=...], or just "NAME"
    searchers: dict[str, Any] = field(default_factory=dict)
    seeds: Any = 10  # a count (seeds 0..n-1) or a list of seeds
    budget: dict[str, Any] = field(default_factory=lambda: {"evaluations": 100})
    overrides: list[str] = field(default_factory=list)  # added to every run (e.g. executor.workers=1)
    workers: int | None = None  # Ray CPUs for replays (None: every core this process may use)
    ray_address: str | None = None  # join a running Ray cluster instead of starting one
    out: str | None = None  # study directory (None: outputs/study/<date>/<time>_<name>)
    tables_dir: str = "outputs/tables"  # exhaustive runs made for `table: auto`, reused across studies
    extra_runs: list[str] = field(default_factory=list)  # more run directories to report with the grid
    allow_mixed: bool = False  # pool runs of one problem with different fingerprints
    reference: str = "auto"  # auto | table | known | study (see searchlab.study.analysis.aggregate)
    skip_incompatible: bool = False  # leave out problem/searcher pairs that cannot work together
    # {train: [LABEL...], test: [LABEL...]} | {leave_one_out: kernel | device}: only test problems are run and
    # reported; searchers given with `tune:` are tuned on each fold's training problems (searchlab/study/execution/split.py)
    split: dict[str, Any] = field(default_factory=dict)
    # replay mode: false: the cells are replayed in batches into one records file (<out>/results.db);
    # true: each cell is a whole run into runs/<problem>/<searcher>/seed_<S> (results.db, summary.json, plot)
    run_dirs: Any = False  # true | false, checked by compose_study (a bool field would take 2 as true)


def register() -> None:
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name=SCHEMA_NAME, node=StudyConfig)


def available() -> list[str]:
    from searchlab.cli.compose import config_names

    return config_names("study")


def compose_study(name: str, overrides: list[str]) -> Any:
    """The study config ``conf/study/<name>.yaml`` with ``overrides`` applied (a DictConfig), composed by the one
    composer (:func:`searchlab.cli.compose.compose_config`)."""
    from searchlab.cli.compose import compose_config

    if name not in available():
        raise ConfigError(f"study={name}: no conf/study/{name}.yaml{did_you_mean(name, available())} "
                          f"(available: {', '.join(available())})")
    register()
    cfg = compose_config(overrides, name=name, group="study", where=f"study={name}: ")
    if cfg.mode not in MODES:
        raise ConfigError(f"study.mode={cfg.mode!r}: must be one of {list(MODES)}")
    if not isinstance(cfg.run_dirs, bool):
        raise ConfigError(f"study.run_dirs={cfg.run_dirs!r}: must be true or false")
    return cfg


def seeds_of(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise ConfigError(f"study.seeds={value!r}: give a count or a list of integers")
    if isinstance(value, int):
        if value < 1:
            raise ConfigError(f"study.seeds={value}: must be a positive count or a list of integers")
        return list(range(value))
    try:
        seeds = [int(s) for s in value]
    except (TypeError, ValueError):
        raise ConfigError(f"study.seeds={value!r}: give a count or a list of integers") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"study.seeds={seeds}: must be a non-empty list without repeats")
    return seeds


