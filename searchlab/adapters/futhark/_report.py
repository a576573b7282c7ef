"""Run-end artefacts of the Futhark programs: ``.tuning`` file, comparison log and the
validation table of paper 003 Table 6.2 (untuned, all-false, tuned and, when a reference
is given, the exhaustive best, on every validation dataset; tuning time and runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchlab.errors import ConfigError
from searchlab.problem import FinalizeContext
from searchlab.records import Config, Result, Status

if TYPE_CHECKING:
    from searchlab.adapters.futhark._program import FutharkProgram


def write_tuning(path: Path, assignment: Mapping[str, Any]) -> None:
    """Futhark's ``.tuning`` format (what ``futhark autotune`` writes): sorted name=value lines."""
    path.write_text("".join(f"{name}={int(assignment[name])}\n" for name in sorted(assignment)))


def read_tuning(path: str | Path) -> dict[str, int]:
    """Parse a ``.tuning`` file (``name=value`` lines; blank and ``--`` lines ignored)."""
    out: dict[str, int] = {}
    for number, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("--"):
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ConfigError(f"{path}:{number}: {raw!r} is not a name=value line")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise ConfigError(f"{path}:{number}: value {value!r} of {name.strip()} is not an integer") from None
    return out


def tuned_result(ctx: FinalizeContext) -> Result | None:
    """The tuner's answer: its last final-marked evaluation, else the best measured."""
    finals = [r for r in ctx.results if r.candidate.meta.get("final") and r.measurement.status is Status.OK]
    return finals[-1] if finals else ctx.best


def benchmark_runs(results: Any) -> tuple[int, int]:
    """(evaluations that ran a benchmark, those of them made while tuning: not the final check)."""
    ran = [r for r in results if not r.cache_hit and r.measurement.status is not Status.INFEASIBLE]
    return len(ran), sum(1 for r in ran if not r.candidate.meta.get("final"))


def format_table(name: str, rows: Mapping[str, Mapping[str, float]], datasets: list[str],
                 tuning_s: float, runs: int) -> str:
    """A Table 6.2-like text table, milliseconds."""
    head = f"{name}: validation run time (ms, median)"
    cols = [*datasets, "tuning s", "runs"]
    width = max(10, *(len(c) + 2 for c in cols))
    lines = [head, f"{'':<12}" + "".join(f"{c:>{width}}" for c in cols)]
    ref = rows.get("exhaustive")
    for label, times in rows.items():
        cells = "".join(f"{times[d] * 1e3:>{width}.4g}" for d in datasets)
        extra = (f"{tuning_s:>{width}.1f}{runs:>{width}d}" if label == "tuned"
                 else f"{'':>{width}}{'':>{width}}")
        lines.append(f"{label:<12}{cells}{extra}")
    if ref is not None and "tuned" in rows:
        ratio = sum(rows["tuned"].values()) / max(sum(ref.values()), 1e-300)
        lines.append(f"tuned / exhaustive (summed validation time): {ratio:.3f}")
    return "\n".join(lines)


NOTHING = "{}: no successful evaluation, no .tuning file written"


def _write_tuned(problem: Any, ctx: FinalizeContext, tuning: Path, log: Path) -> dict[str, Mapping[str, int]] | None:
    """The best result's ``.tuning`` file and comparison log (in the run directory, made here), and
    the untuned / all-false / tuned configurations to validate; None when no evaluation succeeded."""
    best = tuned_result(ctx)
    if best is None:
        return None
    tuning.parent.mkdir(parents=True, exist_ok=True)
    tuned = {k: int(v) for k, v in best.config.items()}  # type: ignore[arg-type]
    write_tuning(tuning, tuned)
    log.write_text("".join(line + "\n" for line in best.measurement.log))
    space = problem.space
    return {"untuned": {k: int(v) for k, v in space.default_config().items()},
            "all-false": {k: int(v) for k, v in space.all_false().items()},
            "tuned": tuned}


def _validation(problem: Any, ctx: FinalizeContext, configs: Mapping[str, Mapping[str, int]],
                table: Callable[..., str], path: Path) -> tuple[dict[str, Any], int, int, str]:
    """Every configuration timed on the validation datasets, the table (Table 6.2) written to ``path``:
    (rows, benchmark runs, tuning runs, the table's text)."""
    validation = [d.name for d in problem.space.validation_datasets()]
    rows = {label: ctx.call("validation_times", dict(c)) for label, c in configs.items()} if validation else {}
    ran, tuning_runs = benchmark_runs(ctx.results)
    text = (table(problem.name, rows, validation, ctx.wall_time_s, tuning_runs) if rows
            else f"{problem.name}: no validation datasets")
    path.write_text(text + "\n")
    return rows, ran, tuning_runs, text


def finalize_run(problem: FutharkProgram, ctx: FinalizeContext) -> dict[str, Any]:
    run_dir = Path(ctx.run_dir)
    tuning, log = run_dir / f"{problem.name}.fut.tuning", run_dir / f"{problem.name}.comparisons.log"
    configs = _write_tuned(problem, ctx, tuning, log)
    if configs is None:
        return {"report_text": NOTHING.format(problem.name)}
    if problem.reference_tuning:
        reference = read_tuning(problem.reference_tuning)
        problem.space.validate(Config(reference))
        configs["exhaustive"] = reference
    rows, ran, tuning_runs, text = _validation(problem, ctx, configs, format_table,
                                               run_dir / f"{problem.name}.validation.txt")
    return {
        "tuning_file": str(tuning),
        "comparison_log": str(log),
        "tuned": configs["tuned"],
        "validation_ms": {label: {d: t * 1e3 for d, t in times.items()} for label, times in rows.items()},
        "benchmark_runs": ran,
        "tuning_runs": tuning_runs,
        "tuning_time_s": ctx.wall_time_s,
        "code_versions": problem.code_versions,
        "report_text": text,
    }


def format_interval_table(name: str, rows: Mapping[str, Mapping[str, Mapping[str, Any]]], datasets: list[str],
                          tuning_s: float, runs: int) -> str:
    """Table 6.2 with each cell ``median [95 % interval]`` in milliseconds."""
    lines = [f"{name}: validation run time, ms, median [95 % interval of the median]"]
    cells = {label: [f"{t[d]['median'] * 1e3:.3f} [{t[d]['ci95'][0] * 1e3:.3f}, {t[d]['ci95'][1] * 1e3:.3f}]"
                     for d in datasets] for label, t in rows.items()}
    width = max([24, *(len(d) + 2 for d in datasets), *(len(c) + 2 for cs in cells.values() for c in cs)])
    lines.append(f"{'':<12}" + "".join(f"{d:>{width}}" for d in datasets) + f"{'tuning s':>10}{'runs':>6}")
    for label, cs in cells.items():
        tail = f"{tuning_s:>10.1f}{runs:>6d}" if label == "tuned" else ""
        lines.append(f"{label:<12}" + "".join(f"{c:>{width}}" for c in cs) + tail)
    return "\n".join(lines)


def finalize_server_run(problem: Any, ctx: FinalizeContext) -> dict[str, Any]:
    """``.tuning`` (accepted by ``futhark bench --tuning``; with ``problem.sizes`` it holds the
    sizes too), comparison log, validation table (untuned and all-false at default sizes)."""
    run_dir = Path(ctx.run_dir)
    tuning, log = run_dir / f"{problem.source.name}.tuning", run_dir / f"{problem.source.stem}.comparisons.log"
    configs = _write_tuned(problem, ctx, tuning, log)
    if configs is None:
        return {"report_text": NOTHING.format(problem.name)}
    spec = write_spec(problem, run_dir)
    if problem.reference_tuning:
        reference = {**configs["untuned"], **read_tuning(problem.reference_tuning)}
        unknown = sorted(set(reference) - set(configs["untuned"]))
        if unknown:
            raise ConfigError(f"problem.reference_tuning={problem.reference_tuning}: names {unknown} are not "
                              f"tuning parameters of {problem.source.name} (with problem.sizes={problem.params['sizes']})")
        problem.tree.validate(Config({k: reference[k] for k in problem.tree.names}))
        configs["reference"] = reference
    rows, ran, tuning_runs, text = _validation(problem, ctx, configs, format_interval_table,
                                               run_dir / f"{problem.source.stem}.validation.txt")
    return {
        "tuning_file": str(tuning),
        "comparison_log": str(log),
        "spec_file": str(spec),
        "tuned": configs["tuned"],
        "validation": {label: {d: {"median_ms": v["median"] * 1e3, "ci95_ms": [x * 1e3 for x in v["ci95"]],
                                   "cv": v["cv"]} for d, v in times.items()} for label, times in rows.items()},
        "benchmark_runs": ran,
        "tuning_runs": tuning_runs,
        "tuning_time_s": ctx.wall_time_s,
        "code_versions": problem.code_versions,
        "report_text": text,
    }


def write_spec(problem: Any, run_dir: Path) -> Path:
    """A ``--spec-file`` naming the exact data files of this run, so that
    ``futhark bench --spec-file=F --tuning`` (and ``futhark autotune``) see the same datasets."""
    lines = ["=="]
    entries = sorted({d.entry for d in problem.data.values()})
    for entry in entries:
        lines.append(f"entry: {entry}")
        for data in problem.data.values():
            if data.entry == entry:
                lines.append(f"input @ {data.input}")
                if data.expected_path is not None:
                    lines.append(f"output @ {data.expected_path}")
    path = run_dir / f"{problem.source.stem}.spec"
    path.write_text("\n".join(lines) + "\n")
    return path
