"""Run a study's grid (problems x searchers x seeds) and report it.

Every cell is an ordinary run: its config is composed from ``searchlab/conf/`` as
``python -m searchlab`` would (problem and searcher overrides, ``seed=S``, the budget,
the study's extra overrides) and executed by :func:`searchlab.run.lifecycle.execute` into
``<study>/runs/<problem>/<searcher>/seed_<S>``. ``mode=replay`` runs cells as parallel
Ray tasks with the serial executor (one replay per task); ``mode=live`` runs them one
after another, each with its configured executor (Ray actors on devices by default).
A cell whose ``summary.json`` exists is kept, one with only ``results.db`` is resumed, so
re-running a study into the same directory completes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError, SearchlabError
from searchlab.study.analysis.spec import overrides_of
from searchlab.study.execution.cells import Cell, _compose_run
from searchlab.study.execution.config import seeds_of

BIG_BUDGET = 1_000_000_000  # an exhaustive run for a table stops when the space is exhausted
# the directory holding searchlab/ (a checkout's root): the shipped studies name their tables relative to it
# (``../shared/data/...``), so they mean the same files from any working directory (issue 45)
CHECKOUT = Path(__file__).resolve().parents[3]
PATH_KEYS = ("problem.path", "prior")  # overrides whose values are input files (prior: a list of them)


def anchor(value: str, where: str) -> str:
    """An input path of a study as an absolute path: relative ones are looked up under the checkout first, then
    under the working directory; one line naming both when neither has it."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return str(path)
    for base in (CHECKOUT, Path.cwd()):
        if (base / path).exists():
            return str((base / path).resolve())
    raise ConfigError(f"{where}={value!r}: no such file under the checkout ({CHECKOUT}) or the working directory "
                      f"({Path.cwd()}); give an absolute path")


def anchored(overrides: list[str], label: str) -> list[str]:
    """``problem.path=`` and ``prior=[...]`` overrides with their paths anchored (:func:`anchor`)."""
    out = []
    for item in overrides:
        key, _, value = item.partition("=")
        if key.lstrip("+") not in PATH_KEYS or not value or value == "null":
            out.append(item)
            continue
        where = f"study.problems.{label}: {key.lstrip('+')}"
        if value.startswith("[") and value.endswith("]"):
            parts = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
            value = "[" + ",".join(anchor(v, where) for v in parts) + "]"
        else:
            value = anchor(value.strip("'\""), where)
        out.append(f"{key}={value}")
    return out


def _table_by_exhaustive(label: str, overrides: list[str], tables_dir: Path) -> Path:
    """A finished exhaustive run of the problem (made once, reused): the replay table."""
    from searchlab.run.lifecycle import execute

    digest = hashlib.sha256(json.dumps(overrides).encode()).hexdigest()[:10]
    run_dir = tables_dir / f"{label}-{digest}"
    if (run_dir / "summary.json").is_file():
        return run_dir
    if (run_dir / "results.db").exists():
        raise ConfigError(f"study: {run_dir} holds an unfinished exhaustive run; delete it to rebuild the table")
    cfg = _compose_run([*overrides, "searcher=exhaustive", "executor=serial", f"budget.evaluations={BIG_BUDGET}",
                        "progress=off", f"name=table:{label}"])
    if "tree_aware" in cfg["searcher"]:  # a table needs every plateau combination, not the tree-wise shortcut
        cfg["searcher"]["tree_aware"] = False
    print(f"study: building the table of {label} by an exhaustive run into {run_dir}", flush=True)
    execute(cfg, run_dir, names=(label, "exhaustive"), quiet=True)
    return run_dir


def problem_overrides(label: str, spec: Any, mode: str, tables_dir: Path) -> list[str]:
    """The overrides that select this study problem (a table replay where one is given)."""
    if isinstance(spec, (str, list, tuple)) or (spec is not None and not hasattr(spec, "get")):
        spec = {"overrides": spec}
    spec = dict(spec or {})
    unknown = set(spec) - {"overrides", "table"}
    if unknown:
        raise ConfigError(f"study.problems.{label}: unknown key(s) {sorted(unknown)}; use overrides and table")
    table = spec.get("table")
    base = anchored(overrides_of(spec["overrides"], "problem", label), label) if spec.get("overrides") is not None else []
    if table == "auto":
        if not base:
            raise ConfigError(f"study.problems.{label}: table=auto needs the problem's overrides to run exhaustively")
        table = str(_table_by_exhaustive(label, base, tables_dir).resolve())  # made here: tables_dir is an output
    if table is not None:
        path = anchor(str(table), f"study.problems.{label}.table")
        return ["problem=table", f"problem.path={path}", "problem.sample_noise=true"]  # replay noise
    if not base:
        raise ConfigError(f"study.problems.{label}: give overrides (problem=NAME ...) or a table")
    return base


def _check_pairs(cells: list[Cell], skip: bool) -> tuple[list[Cell], list[str]]:
    """Refuse (or, with skip_incompatible, leave out) problem/searcher pairs that cannot work."""
    from searchlab.searchers import searcher_class
    from searchlab.study.execution.batch import fresh_problem

    problems: dict[str, Any] = {}
    reasons: dict[tuple[str, str], str] = {}
    for cell in cells:
        key = (cell.problem, cell.searcher)
        if key in reasons:
            continue
        if cell.problem not in problems:
            problems[cell.problem] = fresh_problem(cell.cfg["problem"], cell.seed)[0]  # a table parsed once
        problem = problems[cell.problem]
        cls = searcher_class(cell.cfg["searcher"], f"study: searcher {cell.searcher}")  # registered classes only
        reasons[key] = cls.incompatibility(problem.space, problem.capabilities) or ""
    bad = {k: v for k, v in reasons.items() if v}
    if bad and not skip:
        raise ConfigError("study: incompatible problem/searcher pairs (set skip_incompatible=true to leave them "
                          "out): " + "; ".join(f"{p}/{s}: {r}" for (p, s), r in bad.items()))
    notes = [f"left out {p}/{s}: {r}" for (p, s), r in bad.items()]
    return [c for c in cells if (c.problem, c.searcher) not in bad], notes


def _plain(value: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_object(value) if OmegaConf.is_config(value) else value


def _split_plan(cfg: Any, povers: dict[str, list[str]], searchers: dict[str, tuple[Any, Any]],
                study_dir: Path) -> tuple[list[Any], list[str]]:
    """The folds of ``study.split`` with each tuned searcher's settings per fold (tuned on its train problems)."""
    from searchlab.study.execution.split import folds, table_path, tune

    split = _plain(cfg.get("split")) or {}
    evaluations = (_plain(cfg.budget) or {}).get("evaluations") or 100
    tuned = {label: {**t, "budget": t["budget"] or evaluations} for label, (_, t) in searchers.items() if t is not None}
    need = "leave_one_out" in split or bool(tuned)
    paths = {label: table_path(label, _compose_run(p)["problem"]) if need else None for label, p in povers.items()}
    plan, notes = folds(split, paths), []
    for fold in plan:
        if split:
            notes.append(f"split {fold.name}: train {list(fold.train)}, test {list(fold.test)} (test results only)")
        for label, options in tuned.items():
            sover = overrides_of(searchers[label][0], "searcher", label)
            name = next(o.split("=", 1)[1] for o in sover if o.split("=", 1)[0].lstrip("+") == "searcher")
            run_dir = study_dir / "tuning" / label / fold.name.replace("=", "_").replace("/", "_")
            fold.tuned[label] = tune(label, name, options, [str(paths[t]) for t in fold.train], run_dir, fold.name)
            notes.append(f"{label} tuned on {list(fold.train)} ({fold.name}): {' '.join(fold.tuned[label])}")
    return plan, notes


def _copy(value: Any) -> Any:
    """A copy of a composed run config (plain dicts, lists and scalars, as ``OmegaConf.to_container``
    gives): a cell per seed, at about a fifth of ``copy.deepcopy``'s cost."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def make_cells(cfg: Any, study_dir: Path) -> tuple[list[Cell], list[str]]:
    """Every run of the grid, composed and checked before anything runs (tuning for a split runs first)."""
    from searchlab.study.execution.split import tune_spec

    if not cfg.problems or not cfg.searchers:
        raise ConfigError("study: give at least one problem and one searcher (study.problems, study.searchers)")
    seeds = seeds_of(_plain(cfg.seeds))
    budget = [f"budget.{k}={'null' if v is None else v}" for k, v in (cfg.budget or {}).items()]
    tables_dir = Path(cfg.tables_dir)
    povers = {str(label): problem_overrides(str(label), _plain(spec), cfg.mode, tables_dir)
              for label, spec in cfg.problems.items()}
    searchers = {str(label): tune_spec(str(label), _plain(spec)) for label, spec in cfg.searchers.items()}
    plan, notes = _split_plan(cfg, povers, searchers, study_dir)
    cells = []
    for fold in plan:
        for plabel in fold.test:
            for slabel, (sspec, _) in searchers.items():
                sover = [*overrides_of(sspec, "searcher", slabel), *fold.tuned.get(slabel, [])]
                extra = ["executor=serial"] if cfg.mode == "replay" else []
                # composed once per pair: the seed is a plain top-level value, set per cell below
                base = _compose_run([*povers[plabel], *sover, *extra, *budget, "progress=off", *cfg.overrides])
                for seed in seeds:
                    run_dir = study_dir / "runs" / plabel / slabel / f"seed_{seed}"
                    cells.append(Cell(plabel, slabel, seed, run_dir, {**_copy(base), "seed": seed}))
    cells, more = _check_pairs(cells, bool(cfg.skip_incompatible))
    return cells, [*notes, *more]


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C during a study's grid: every cell written so far is kept; ``study_dir`` resumes it."""

    def __init__(self, study_dir: Path) -> None:
        super().__init__(str(study_dir))
        self.study_dir = study_dir


def _unmake(study_dir: Path, created: list[Path]) -> None:
    """Bad input makes no study directory: remove what this study made, if nothing ran into it."""
    if not created or [p.name for p in study_dir.iterdir()] != ["study.yaml"]:
        return
    (study_dir / "study.yaml").unlink()
    for path in created:  # the study directory, then the <date> directory above it, if this study made them
        try:
            path.rmdir()
        except OSError:  # not empty: another study's
            break


def run_study(cfg: Any, extra_paths: Sequence[str] = (), out: str | None = None) -> dict[str, Any]:
    """Run the grid of a composed study config, then write its report; returns what was written."""
    from omegaconf import OmegaConf

    from searchlab.study.analysis.collect import collect_runs, study_sources
    from searchlab.study.analysis.outputs import default_study_dir, report
    from searchlab.study.execution.batch import parsed_table
    from searchlab.study.execution.replay import run_cells

    study_dir = Path(out or cfg.out or default_study_dir(cfg.name)).resolve()
    created = [p for p in (study_dir, *study_dir.parents) if not p.exists()]  # deepest first
    study_dir.mkdir(parents=True, exist_ok=True)
    (study_dir / "study.yaml").write_text(OmegaConf.to_yaml(cfg))
    started = time.time()
    try:
        cells, notes = make_cells(cfg, study_dir)
        records = run_cells(cells, cfg)
    except SearchlabError:
        _unmake(study_dir, created)
        raise
    except KeyboardInterrupt:
        raise StudyInterrupted(study_dir) from None
    grid_s = time.time() - started
    runs, more = collect_runs([*study_sources(study_dir), *cfg.extra_runs, *extra_paths],
                              allow_mixed=bool(cfg.allow_mixed))
    runs, pairs, tuned_notes = _pool_tuned(cfg, runs)
    meta = {"name": cfg.name, "mode": cfg.mode, "cells": len(cells), "kept (already done)": sum(
        r.get("kept", False) for r in records), "grid wall time (s)": round(grid_s, 2),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "directory": str(study_dir), "config_yaml": OmegaConf.to_yaml(cfg)}
    return report(runs, [*notes, *more, *tuned_notes], study_dir, meta, cfg.reference, pairs, tables=parsed_table)


def _pool_tuned(cfg: Any, runs: list[Any]) -> tuple[list[Any], dict[str, str], list[str]]:
    """Tuned searchers' runs pooled over the folds, and each tuned label's default (searchlab.study.analysis.tuned)."""
    from searchlab.study.analysis.tuned import defaults_of, pool
    from searchlab.study.execution.split import tune_spec

    specs = {str(label): tune_spec(str(label), _plain(spec)) for label, spec in cfg.searchers.items()}
    pairs, notes = defaults_of(specs)
    return pool(runs, [label for label, (_, tune) in specs.items() if tune is not None]), pairs, notes
