"""Find and read the runs of a study: every ``results.db`` under the given paths.

Runs are grouped by problem name; within a name every run must share one problem
fingerprint (problem parameters, code version, devices), otherwise the study refuses
and says which runs differ and in what -- unless ``allow_mixed``: then each fingerprint
is an *instance*, normalised on its own, and instances of one problem are pooled (as
paper 001 §8.2 pools application/architecture combinations after normalising each).
Searchers are labelled by name; runs of one searcher name with different options get
the differing options in their label (``exhaustive[shuffle=True]``).

The evaluations axis counts what a budget counts -- measurements (device runs, table
look-ups) and cache hits -- in recorded order. Known-infeasible proposals (status
``infeasible``: a known constraint rejects them, nothing is measured) are left out of it
and counted apart (``RunData.infeasible``): random search's baseline draws only from the
members the known constraints allow, so a curve that spent evaluations on rejected
proposals would not be comparable with it (docs/study.md, "The random baseline").
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchlab.core.records import Direction
from searchlab.errors import ConfigError
from searchlab.study.analysis.summary import read_summary

if TYPE_CHECKING:
    from searchlab.core.store import RecordedRun

SUMMARY = "summary.json"


@dataclass(frozen=True)
class RunData:
    """One run as a study sees it: per-evaluation arrays in recorded (= told) order."""

    path: Path
    problem: str
    searcher: str
    seed: int
    fingerprint: str
    direction: Direction
    objective_name: str
    known_optimum: float | None
    config: Mapping[str, Any]
    devices: tuple[str, ...]
    status: str
    stop_reason: str
    losses: np.ndarray  # loss(): smaller is better, +inf for failures and sub-problems
    charged: np.ndarray  # charged seconds per evaluation
    statuses: tuple[str, ...]
    modes: tuple[str, ...]  # failure mode of each evaluation ("none" when OK)
    report: Mapping[str, Any] = field(default_factory=dict)  # summary.json's run-end report
    wall_time_s: float | None = None
    infeasible: int = 0  # known-infeasible proposals recorded (not on the evaluations axis)
    nodes: Mapping[str, int] | None = None  # evaluations per Ray node ("" unknown), as recorded

    @property
    def evaluations(self) -> int:
        return len(self.losses)

    @property
    def instance(self) -> tuple[str, str]:
        return self.problem, self.fingerprint

    def objective(self, loss_value: float) -> float:
        return loss_value if self.direction is Direction.MINIMIZE else -loss_value


def find_sources(paths: Iterable[str | Path]) -> list[Path]:
    """The records files under each path (searchlab.core.store.find_records: ``results.db`` of a run directory,
    a study or a reproduce; a study's ``replays.db`` of before issue 52); a bad path is one ConfigError line."""
    from searchlab.core.store import find_records

    try:
        return find_records(paths)
    except ConfigError as exc:
        raise ConfigError(f"study: {exc}") from None


def _losses(run: RecordedRun, direction: Direction) -> np.ndarray:
    """A study's loss per evaluation: a success's objective (signed), +inf for a failure or a sub-problem.

    A replay with ``sample_noise`` shows the searcher one recorded sample, but a study scores the
    configuration at its recorded value (``extra["recorded_objective"]``): the exact random baseline is
    defined over recorded values, and a lucky draw must not count as progress."""
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    o = run.outcomes
    out = np.full(len(o.status), math.inf)
    for i, (objective, recorded, status, sub) in enumerate(zip(o.objective, o.recorded, o.status, o.subproblem)):
        value = recorded if recorded is not None else objective
        if status == "ok" and value is not None and not sub:
            out[i] = sign * value
    return out


def run_data(run: RecordedRun) -> RunData:
    """One recorded run as a study sees it (known-infeasible proposals taken off the evaluations axis)."""
    info, o = run.info, run.outcomes
    keep = [i for i, s in enumerate(o.status) if s != "infeasible"]
    direction = Direction(info["direction"])
    summary = {} if run.many else read_summary(run.location)
    losses = _losses(run, direction)[keep] if keep else np.array([], dtype=float)
    nodes: dict[str, int] = defaultdict(int)
    for node in o.node:
        nodes[node] += 1
    return RunData(
        path=run.location, problem=str(info["problem"]), searcher=str(info["searcher"]), seed=int(info["seed"] or 0),
        fingerprint=str(info["fingerprint"]), direction=direction,
        objective_name=str(info.get("objective_name") or "objective"),
        known_optimum=None if info.get("known_optimum") is None else float(info["known_optimum"]),
        config=info.get("config") or {},
        devices=tuple(sorted(str(d.get("name", "")) for d in info.get("devices") or [] if isinstance(d, Mapping))),
        status=str(info["status"]), stop_reason=str(info.get("stop_reason") or ""),
        losses=losses, charged=np.array([o.charged[i] for i in keep], dtype=float),
        statuses=tuple(o.status[i] for i in keep),
        modes=tuple(o.failure_mode[i] if o.status[i] != "ok" else "none" for i in keep),
        report=summary.get("report") or {},
        wall_time_s=summary.get("wall_time_s") if not run.many else run.wall_time_s,
        infeasible=len(o.status) - len(keep), nodes=dict(nodes))


def read_run_data(path: str | Path) -> list[RunData]:
    """Every run of one records file -- a run directory, a study, a reproduce directory alike -- as RunData:
    the one reader (searchlab.core.store.read_runs), whoever wrote the records."""
    from searchlab.core.store import read_runs

    return [run_data(run) for run in read_runs(path)]


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings and lists as one level of dotted keys (``a.b``, ``rows.0.time``)."""
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, (list, tuple)) and any(isinstance(v, (Mapping, list, tuple)) for v in value):
        items = enumerate(value)
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for k, v in items:
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _differences(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Keys (dotted) whose values differ between the given configs."""
    flats = [_flat(c) for c in configs]
    keys = sorted(set().union(*flats))
    return [k for k in keys if len({json.dumps(f.get(k), sort_keys=True, default=str) for f in flats}) > 1]


def label_searchers(runs: Sequence[RunData]) -> list[RunData]:
    """Runs relabelled so that one label means one searcher configuration."""
    from dataclasses import replace

    by_name: dict[str, list[RunData]] = defaultdict(list)
    for run in runs:
        by_name[run.searcher].append(run)
    out: list[RunData] = []
    for name, group in by_name.items():
        options = [dict(r.config.get("searcher") or {}) for r in group]
        keys = _differences(options)
        for run, opts in zip(group, options):
            flat = _flat(opts)
            label = name if not keys else f"{name}[{','.join(f'{k}={flat.get(k)}' for k in keys)}]"
            out.append(replace(run, searcher=label))
    return out


def check_fingerprints(runs: Sequence[RunData], allow_mixed: bool) -> list[str]:
    """Refuse runs of one problem with different fingerprints (unless allowed); notes otherwise."""
    by_problem: dict[str, dict[str, list[RunData]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        by_problem[run.problem][run.fingerprint].append(run)
    problems, notes = [], []
    for problem, prints in sorted(by_problem.items()):
        if len(prints) < 2:
            continue
        firsts = [group[0] for group in prints.values()]
        what = _differences([{"problem": r.config.get("problem"), "devices": list(r.devices)} for r in firsts])
        listing = "; ".join(f"{fp}: {len(group)} run(s), e.g. {group[0].path}" for fp, group in prints.items())
        text = (f"problem {problem!r} has {len(prints)} fingerprints ({listing}); they differ in "
                f"{', '.join(what) if what else 'the device or code version (same problem config)'}")
        problems.append(text)
        notes.append(f"mixed fingerprints pooled, each normalised on its own: {text}")
    if problems and not allow_mixed:
        raise ConfigError("study: runs of one problem must share a fingerprint; pass --allow-mixed "
                          "(or allow_mixed=true) to pool them, normalising each: " + " | ".join(problems))
    return notes


def study_sources(study_dir: Path) -> list[Path]:
    """What a study directory's own runs are read from: ``runs/`` (run directories), its records file and a
    ``replays.db`` of before issue 52, where present."""
    from searchlab.core.store import DB_NAME
    from searchlab.core.store import LEGACY_STORE as OLD

    found = [p for p in (study_dir / "runs", study_dir / DB_NAME, study_dir / OLD) if p.exists()]
    return found or [study_dir / "runs"]


def collect_runs(paths: Iterable[str | Path], *, allow_mixed: bool = False) -> tuple[list[RunData], list[str]]:
    """Every run under ``paths`` -- run directories, studies, reproduce directories (their records files hold
    many runs) -- relabelled, fingerprint-checked, and notes for the report."""
    paths = list(paths)
    files = find_sources(paths)
    if not files:
        raise ConfigError(f"study: no results.db found under {[str(p) for p in paths]}")
    runs, notes = [], []
    found = [run for db in files for run in read_run_data(db)]
    for data in found:
        run_dir = data.path
        if data.evaluations == 0:
            notes.append(f"skipped {run_dir}: no evaluation recorded")
            continue
        if data.status != "finished":
            notes.append(f"{run_dir} has status {data.status!r} (killed or still running): "
                         f"{data.evaluations} evaluations used")
        runs.append(data)
    if not runs:
        raise ConfigError("study: none of the runs found has an evaluation")
    notes += check_fingerprints(runs, allow_mixed)
    runs = label_searchers(runs)
    directions = {(r.problem, r.direction) for r in runs}
    if len(directions) != len({r.problem for r in runs}):
        raise ConfigError("study: runs of one problem disagree on the objective's direction")
    if any(math.isnan(v) for r in runs for v in r.losses):
        raise ConfigError("study: a recorded objective is NaN")
    return sorted(runs, key=lambda r: (r.problem, r.searcher, r.seed, str(r.path))), notes
