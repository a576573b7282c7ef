"""Run-end artefacts of the Futhark programs: ``.tuning`` file (only when it measurably beats
untuned: searchlab.adapters.futhark._versus), the best found as ``.candidate.tuning``, comparison
log and the validation table of paper 003 Table 6.2 (untuned, all-false, tuned and, when a
reference is given, the exhaustive best, on every validation dataset, in interleaved rounds;
tuning time and runs).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import searchlab.adapters.futhark._versus as vs
from searchlab.adapters.futhark._chains import as_ints
from searchlab.core.problem import FinalizeContext
from searchlab.core.records import Config, Result, Status
from searchlab.core.units import run_time_unit
from searchlab.errors import ConfigError

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


def format_table(name: str, rows: Mapping[str, Mapping[str, Mapping[str, Any]]], datasets: list[str],
                 tuning_s: float, runs: int, unit: tuple[str, float] = ("ms", 1e3)) -> str:
    """Table 6.2 with each cell ``median [95 % interval]`` in the run's time unit."""
    label_unit, scale = unit
    lines = [f"{name}: validation run time, {label_unit}, median [95 % interval of the median]"]
    cells = {label: [f"{t[d]['median'] * scale:.3f} [{t[d]['ci95'][0] * scale:.3f}, {t[d]['ci95'][1] * scale:.3f}]"
                     for d in datasets] for label, t in rows.items()}
    width = max([24, *(len(d) + 2 for d in datasets), *(len(c) + 2 for cs in cells.values() for c in cs)])
    lines.append(f"{'':<12}" + "".join(f"{d:>{width}}" for d in datasets) + f"{'tuning s':>10}{'runs':>6}")
    for label, cs in cells.items():
        tail = f"{tuning_s:>10.1f}{runs:>6d}" if label == "tuned" else ""
        lines.append(f"{label:<12}" + "".join(f"{c:>{width}}" for c in cs) + tail)
    return "\n".join(lines)


NOTHING = "{}: no successful evaluation, no .tuning file written"


def _configs(problem: Any, tuned: Mapping[str, int]) -> dict[str, dict[str, int]]:
    space = problem.space
    return {"untuned": as_ints(problem.default_config()),
            "all-false": as_ints(space.all_false()),
            "tuned": as_ints(tuned)}


def _validate(problem: Any, ctx: FinalizeContext, configs: Mapping[str, Mapping[str, int]], runs: int,
              path: Path) -> tuple[dict[str, Any], dict[str, Any] | None, int, int, str]:
    """Interleaved validation rounds (searchlab.adapters.futhark._versus), the table written to
    ``path``: (rows, paired comparison tuned vs untuned, benchmark runs, tuning runs, table text)."""
    names = [d.name for d in problem.space.validation_datasets()]
    rows: dict[str, Any] = {}
    comparison = None
    if names:
        rounds = vs.validation_rounds(problem, ctx, configs, names, vs.round_runs(runs, ctx.rounds))
        rows = vs.summarise(rounds)
        if configs["tuned"] != configs["untuned"]:
            comparison = vs.paired(rounds["untuned"], rounds["tuned"], "validation")
    ran, tuning_runs = benchmark_runs(ctx.results)
    unit = run_time_unit(problem.objective_name, ctx.best.objective if ctx.best else None)
    text = (format_table(problem.name, rows, names, ctx.wall_time_s, tuning_runs, unit) if rows
            else f"{problem.name}: no validation datasets")
    path.write_text(text + "\n")
    return rows, comparison, ran, tuning_runs, text


def _finish(problem: Any, ctx: FinalizeContext, run_dir: Path, tuning: Path, stem: str, runs: int,
            reference: Mapping[str, int] | None, reference_label: str = "reference") -> dict[str, Any]:
    """Compare with untuned, write what is recommended, and the report both program kinds share."""
    best = tuned_result(ctx)
    assert best is not None
    config, source = vs.chosen(ctx, best)
    configs = _configs(problem, as_ints(config))
    if reference is not None:
        configs[reference_label] = dict(reference)
    candidate = run_dir / f"{stem}.candidate.tuning"
    write_tuning(candidate, configs["tuned"])
    logged = next((r for r in ctx.results if r.config.key == config.key and r.measurement.log), best)
    (run_dir / f"{stem}.comparisons.log").write_text("".join(line + "\n" for line in logged.measurement.log))
    rows, comparison, ran, tuning_runs, text = _validate(problem, ctx, configs, runs,
                                                          run_dir / f"{stem}.validation.txt")
    if comparison is None and not problem.space.validation_datasets() and ctx.confirm:
        comparison = ctx.confirm.get("versus_default")  # no validation data: the training datasets decide
    recommend, why = vs.decision(comparison, configs["tuned"] == configs["untuned"], ctx.equivalence)
    written = vs.write_or_remove(tuning, configs["tuned"] if recommend else None, write_tuning)
    return {"tuning_file": written, "candidate_tuning_file": str(candidate), "recommended": recommend,
            "recommendation": why, "chosen": source, "versus_default": comparison,
            "comparison_log": str(run_dir / f"{stem}.comparisons.log"), "tuned": configs["tuned"],
            "untuned": configs["untuned"], "rows": rows, "benchmark_runs": ran, "tuning_runs": tuning_runs,
            "tuning_time_s": ctx.wall_time_s, "code_versions": problem.code_versions, "report_text": text}


def finalize_run(problem: FutharkProgram, ctx: FinalizeContext) -> dict[str, Any]:
    """The OpenCL imitations: ``<problem>.fut.tuning`` when recommended, log, validation table."""
    if tuned_result(ctx) is None:
        return {"report_text": NOTHING.format(problem.name)}
    reference = None
    if problem.reference_tuning:
        reference = read_tuning(problem.reference_tuning)
        problem.space.validate(Config(reference))
    run_dir = Path(ctx.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    out = _finish(problem, ctx, run_dir, run_dir / f"{problem.name}.fut.tuning", problem.name,
                  problem.validation_runs, reference, "exhaustive")
    rows = out.pop("rows")
    out["validation_ms"] = {label: {d: v["median"] * 1e3 for d, v in times.items()} for label, times in rows.items()}
    if "exhaustive" in rows and "tuned" in rows:
        ratio = sum(v["median"] for v in rows["tuned"].values()) / max(
            sum(v["median"] for v in rows["exhaustive"].values()), 1e-300)
        out["report_text"] += f"\ntuned / exhaustive (summed validation time): {ratio:.3f}"
    return out


def finalize_server_run(problem: Any, ctx: FinalizeContext) -> dict[str, Any]:
    """``.tuning`` when recommended (accepted by ``futhark bench --tuning``; with ``problem.sizes`` it
    holds the sizes too), the best found as ``<stem>.candidate.tuning``, comparison log, spec file,
    validation table (untuned and all-false at default sizes)."""
    if tuned_result(ctx) is None:
        return {"report_text": NOTHING.format(problem.name)}
    run_dir = Path(ctx.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = write_spec(problem, run_dir)
    reference = None
    if problem.reference_tuning:
        untuned = as_ints(problem.space.default_config())
        reference = {**untuned, **read_tuning(problem.reference_tuning)}
        unknown = sorted(set(reference) - set(untuned))
        if unknown:
            raise ConfigError(f"problem.reference_tuning={problem.reference_tuning}: names {unknown} are not "
                              f"tuning parameters of {problem.source.name} (with problem.sizes={problem.sizes})")
        problem.tree.validate(Config({k: reference[k] for k in problem.tree.names}))
    out = _finish(problem, ctx, run_dir, run_dir / f"{problem.source.name}.tuning", problem.source.stem,
                  problem.validation_runs, reference)
    rows = out.pop("rows")
    out["candidate_tuning_file"] = str(Path(out["candidate_tuning_file"]).resolve())
    if out["tuning_file"]:
        out["tuning_file"] = str(Path(out["tuning_file"]).resolve())
        out["use_command"] = use_command(problem, run_dir.resolve(), Path(out["tuning_file"]))
    else:  # undecided or kept: the candidate and the one command that checks it later (issue 54, item 1)
        out["check_command"] = use_command(problem, run_dir.resolve(), Path(out["candidate_tuning_file"]),
                                           extension=False)
    out["spec_file"] = str(spec)
    out["validation"] = {label: {d: {"median_ms": v["median"] * 1e3, "ci95_ms": [x * 1e3 for x in v["ci95"]],
                                     "cv": v["cv"]} for d, v in times.items()} for label, times in rows.items()}
    return out


def use_command(problem: Any, run_dir: Path, tuning: Path, extension: bool = True) -> str:
    """The one command that runs the program with the written ``.tuning`` (issue 46 item 2), pasteable in
    a fresh shell: the compiler by its absolute path (``.venv/bin`` is on ``make``'s PATH, not the
    user's). ``futhark bench --tuning=EXT`` takes an *extension*, not a file: it uses
    ``PROG.fut.tuning`` beside ``PROG.fut``. So a bundled program (no imports) is copied into the run
    directory beside its ``.tuning`` (nothing is written into the installed package); a program of the
    user's own, or any other file (``extension=False``: the ``.candidate.tuning`` of a run that kept the
    default, issue 54), gets the file through the compiled program's own ``--tuning FILE`` option."""
    futhark = os.path.abspath(shutil.which(problem.binary) or problem.binary)
    head = [futhark, "bench", f"--backend={problem.backend}"]
    program = problem.source
    bundled = getattr(type(problem), "default_program", None)
    if bundled is not None and Path(bundled).resolve() == problem.source:
        program = run_dir / problem.source.name
        shutil.copyfile(problem.source, program)
        if extension:
            return shlex.join([*head, str(program)])
    return shlex.join([*head, "--no-tuning", f"--pass-option=--tuning={tuning}", str(program)])


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
