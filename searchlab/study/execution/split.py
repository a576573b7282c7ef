"""Train/test discipline in studies (issue 23, item 4).

A study may split its problems into training and test problems (``study.split``):

- ``split: {train: [LABEL, ...], test: [LABEL, ...]}``: one fold, explicit lists of problem labels;
- ``split: {folds: [{train: [...], test: [...]}, ...]}``: several explicit folds (a k-fold cross-validation
  chosen by hand, e.g. two folds of two devices each, which costs half the tuning of leave-one-out on four);
  no problem may be a test problem of two folds, so each problem's default row runs once and a tuned
  searcher's rows pool over the folds as one method (searchlab.study.analysis.tuned);
- ``split: {leave_one_out: kernel | device}``: one fold per kernel (device) read from each problem's
  table; the fold's test problems are that kernel's (device's), its training problems all others.

Anything chosen from data is chosen on a fold's training problems only: a searcher given as
``{overrides: [searcher=NAME, ...], tune: {searcher: META, evaluations: E, seeds: S, budget: B, options: [...]}}``
(``budget`` defaults to the study's ``budget.evaluations``; ``options``, to every tunable setting) has its
Tunable settings tuned per fold by an ordinary ``problem=searcher_settings`` run on the fold's training tables
(``<study>/tuning/<searcher label>/<fold>``, resumed or kept like any run), and runs on the fold's
test problems with the tuned settings. Only test problems are run in the grid, so the report (its
paired intervals included) shows test-set results only.

The meta-search's seed differs per fold (:func:`fold_seed`: derived from ``tune.seed``, default 0, and the
fold's name): with one seed for every fold, a seeded meta-searcher such as ``optuna_tpe`` tried the same first
(random) settings in every fold, so the folds' tunings were not independent draws of the method "tune on the
other tables".

The kernel and device of a problem are read from its table: a Kernel Tuner cache's ``kernel_name``
and ``device_name``; our tables' ``meta.problem`` and ``device``; a T4 file's ``metadata``; where
the table names neither, its file name ``KERNEL_DEVICE.json[.gz]`` (the shared convolution tables).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

KEYS = ("kernel", "device")
TABLE_PROBLEMS = ("table", "kernel_tuner_cache", "t4")
TUNE_KEYS = {"searcher", "evaluations", "seeds", "budget", "score", "seed", "options"}


@dataclass(frozen=True)
class Fold:
    name: str
    train: tuple[str, ...]
    test: tuple[str, ...]
    tuned: dict[str, list[str]] = field(default_factory=dict)  # searcher label -> tuned overrides


def table_path(label: str, problem_cfg: Mapping[str, Any]) -> str:
    """The table a study problem replays (a split by metadata and tuning need one)."""
    from searchlab import registry

    name = registry.name_of_target(problem_cfg.get("_target_"), "problem")
    path = problem_cfg.get("path")
    if name not in TABLE_PROBLEMS or not isinstance(path, str):
        raise ConfigError(f"study.problems.{label}: a split by metadata or a tuned searcher needs a table replay "
                          f"(problem={'|'.join(TABLE_PROBLEMS)} or table: PATH), not problem={name}")
    return path


def table_key(path: str, key: str) -> str:
    """The kernel or device of the table in ``path`` (module docstring)."""
    from searchlab.interchange import open_table

    table = open_table(path, "study table")
    meta = dict(table.meta)
    raw = meta.get("metadata")
    t4: dict[str, Any] = raw if isinstance(raw, dict) else {}
    stem = Path(path).name.removesuffix(".gz").removesuffix(".json")
    kernel_name, _, device_name = stem.partition("_")
    if key == "kernel":
        found = meta.get("kernel") or meta.get("problem") or t4.get("kernel") or t4.get("kernel_name") or kernel_name
    else:
        found = table.device or t4.get("device") or t4.get("device_name") or device_name
    return str(found or "")


def _labels(value: Any, what: str, known: Sequence[str]) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else list(value or ())
    labels = tuple(str(v) for v in items)
    unknown = sorted(set(labels) - set(known))
    if unknown:
        raise ConfigError(f"study.split.{what}={list(labels)}: {unknown} are not problems of the study "
                          f"(problems: {list(known)})")
    if not labels:
        raise ConfigError(f"study.split.{what}: give at least one problem label")
    return labels


def folds(split: Mapping[str, Any] | None, paths: Mapping[str, str | None]) -> list[Fold]:
    """The study's folds; one fold testing every problem without a split. ``paths``: label -> table (or None)."""
    labels = list(paths)
    if not split:
        return [Fold("all", (), tuple(labels))]
    split = dict(split)
    unknown = set(split) - {"train", "test", "leave_one_out", "folds"}
    kinds = ("leave_one_out" in split) + ("test" in split or "train" in split) + ("folds" in split)
    if unknown or kinds != 1:
        raise ConfigError(f"study.split={split}: give either train and test (lists of problem labels), "
                          f"folds: [{{train: [...], test: [...]}}, ...] or leave_one_out: {' | '.join(KEYS)}")
    if "folds" in split:
        return _explicit_folds(split["folds"], labels)
    if "leave_one_out" not in split:
        return [_fold("split", split, labels, "study.split")]
    key = split["leave_one_out"]
    if key not in KEYS:
        raise ConfigError(f"study.split.leave_one_out={key!r}: must be one of {list(KEYS)}")
    groups: dict[str, list[str]] = {}
    for label, path in paths.items():
        if path is None:
            raise ConfigError(f"study.problems.{label}: leave_one_out by {key} reads the table's metadata; "
                              "this problem replays no table")
        groups.setdefault(table_key(path, key) or label, []).append(label)
    if len(groups) < 2:
        raise ConfigError(f"study.split.leave_one_out={key}: the problems span one {key} only ({next(iter(groups))}); "
                          "leave-one-out needs at least two")
    return [Fold(f"{key}={value}", tuple(lb for lb in labels if lb not in group), tuple(group))
            for value, group in groups.items()]


def _fold(name: str, spec: Mapping[str, Any], labels: Sequence[str], where: str) -> Fold:
    unknown = sorted(set(spec) - {"train", "test", "name"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; a fold takes train, test and name")
    train, test = _labels(spec.get("train"), "train", labels), _labels(spec.get("test"), "test", labels)
    both = sorted(set(train) & set(test))
    if both:
        raise ConfigError(f"{where}: {both} are both train and test problems: a test problem must be unseen")
    return Fold(str(spec.get("name") or name), train, test)


def _explicit_folds(value: Any, labels: Sequence[str]) -> list[Fold]:
    """``split.folds``: each a {train, test[, name]} mapping; test sets disjoint, names unique."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value \
            or not all(isinstance(f, Mapping) for f in value):
        raise ConfigError(f"study.split.folds={value!r}: give a non-empty list of {{train: [...], test: [...]}}")
    out = [_fold(f"fold{i + 1}", spec, labels, f"study.split.folds[{i}]") for i, spec in enumerate(value)]
    seen: dict[str, str] = {}
    for fold in out:
        twice = sorted(t for t in fold.test if t in seen)
        if twice:
            raise ConfigError(f"study.split.folds: {twice} are test problems of two folds ({seen[twice[0]]} and "
                              f"{fold.name}); each problem may be tested in one fold only")
        seen.update({t: fold.name for t in fold.test})
    if len({f.name for f in out}) != len(out):
        raise ConfigError(f"study.split.folds: fold names {[f.name for f in out]} repeat")
    return out


def tune_spec(label: str, spec: Any) -> tuple[Any, dict[str, Any] | None]:
    """(the searcher's overrides spec, its tuning options or None) from a study searcher entry."""
    if not isinstance(spec, Mapping):
        return spec, None
    unknown = set(spec) - {"overrides", "tune"}
    if unknown or "overrides" not in spec:
        raise ConfigError(f"study.searchers.{label}: a mapping takes overrides (required) and tune, not {sorted(unknown)}")
    tune = spec.get("tune")
    if tune is None:
        return spec["overrides"], None
    if not isinstance(tune, Mapping) or set(tune) - TUNE_KEYS:
        raise ConfigError(f"study.searchers.{label}.tune: a mapping with keys from {sorted(TUNE_KEYS)}")
    # budget None: the study's own budget.evaluations (filled in by the grid)
    out = {"searcher": "optuna_tpe", "evaluations": 30, "seeds": 5, "budget": None, "score": "fraction", "seed": 0,
           "options": [], **dict(tune)}
    if isinstance(out["options"], str) or not all(isinstance(o, str) for o in out["options"]):
        raise ConfigError(f"study.searchers.{label}.tune.options={out['options']!r}: give a list of setting names")
    return spec["overrides"], out


def fold_seed(seed: int, fold: str) -> int:
    """The meta-search's seed in the fold named ``fold``: a function of ``(seed, fold)`` only, so a study
    re-run (or resumed) tunes each fold as before, and two folds get unrelated seeds (numpy's SeedSequence
    over the study's ``tune.seed`` and the CRC-32 of the fold's name; below 2**31, as any run seed)."""
    import zlib

    import numpy as np

    state = np.random.SeedSequence([int(seed), zlib.crc32(fold.encode())]).generate_state(1)
    return int(state[0]) % 2**31


def tune(label: str, searcher: str, options: Mapping[str, Any], train: Sequence[str], run_dir: Path,
         fold: str = "") -> list[str]:
    """Tune ``searcher`` on the tables ``train`` by a searcher_settings run (kept when done); its overrides.

    The meta-search runs with :func:`fold_seed` of ``options['seed']`` and ``fold`` (the fold's name)."""
    from searchlab.run.lifecycle import execute
    from searchlab.study.execution.cells import _compose_run

    if not train:
        raise ConfigError(f"study.searchers.{label}.tune: the fold has no training problem; give study.split")
    summary_path = run_dir / "summary.json"
    if not summary_path.is_file():
        cfg = _compose_run(["problem=searcher_settings", f"problem.searcher={searcher}",
                            f"problem.train=[{','.join(train)}]", f"problem.seeds={options['seeds']}",
                            f"problem.budget={options['budget']}", f"problem.score={options['score']}",
                            f"problem.options=[{','.join(options.get('options') or [])}]",
                            f"searcher={options['searcher']}", f"budget.evaluations={options['evaluations']}",
                            f"seed={fold_seed(options['seed'], fold)}", "executor=serial", "progress=off"])
        if (run_dir / "results.db").exists():
            cfg["resume"] = str(run_dir)
        print(f"study: tuning {label} ({searcher}) on {len(train)} training table(s) into {run_dir}", flush=True)
        execute(cfg, run_dir, names=("searcher_settings", str(options["searcher"])), quiet=True)
    summary = json.loads(summary_path.read_text())
    tuned = (summary.get("report") or {}).get("tuned_overrides")
    if not tuned:
        raise ConfigError(f"study: tuning {label} in {run_dir} found no settings that ran")
    return [o for o in tuned if not o.startswith("searcher=")]
