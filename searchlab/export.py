"""Export any run or table in the field's formats.

    python -m searchlab.export t4 SOURCE -o results.json         # T4 results (validated)
    python -m searchlab.export kt-cache SOURCE -o cache.json     # a Kernel Tuner cache file
    python -m searchlab.export csv SOURCE -o evaluations.csv     # one row per evaluation (also: parquet)
    python -m searchlab.export optuna SOURCE --storage sqlite:///study.db [--study-name NAME]   # an Optuna study

SOURCE is a run directory (or its ``results.db``: every evaluation in the order it was
recorded, repeats included), one of our table files (``.json[.gz]``, every row), or a T4
file (so T4 converts to a Kernel Tuner cache). Formats: docs/byo.md and
:mod:`searchlab.interchange`. A bad source or output is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.core.outputs import check_target, write_atomic
from searchlab.core.records import Direction
from searchlab.core.signals import Interrupted, interruptible
from searchlab.errors import ConfigError, SearchlabError
from searchlab.interchange import open_table
from searchlab.interchange.kt_cache import kt_cache_document
from searchlab.interchange.t4 import Record, t4_document
from searchlab.interchange.table import Table
from searchlab.run.optuna_trials import Distributions, attributes, frozen_trial, wide


@dataclass(frozen=True)
class Source:
    """What an export needs from a run or a table."""

    records: tuple[Record, ...]
    objective: str
    direction: Direction
    names: tuple[str, ...]
    values: dict[str, tuple[Any, ...]]
    device: str = ""
    kernel: str = ""
    problem_size: Any = None
    origin: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def _observed(records: Sequence[Record]) -> dict[str, tuple[Any, ...]]:
    seen: dict[str, list[Any]] = {}
    for r in records:
        for k, v in r.config.items():
            if v not in seen.setdefault(k, []):
                seen[k].append(v)
    return {k: tuple(v) for k, v in seen.items()}


def from_run(run_dir: Path) -> Source:
    from searchlab.core.store import read_run

    info, results = read_run(run_dir)
    if not results:
        raise ConfigError(f"run {str(run_dir)!r} holds no evaluations")
    records = tuple(Record(r.config, r.measurement, r.t_end or None) for r in results)
    values = _observed(records)
    described = (info.get("space") or {}).get("knobs") or {}
    values.update({k: tuple(v) for k, v in described.items() if isinstance(v, list) and k in values})
    devices = sorted({str(d.get("name", "")) for d in info.get("devices") or [] if isinstance(d, dict)})
    params = ((info.get("config") or {}).get("problem") or {})
    return Source(records, str(info["objective_name"]), Direction(info["direction"]), tuple(values), values,
                  device=",".join(devices), kernel=str(info.get("problem") or ""),
                  problem_size=params.get("problem_size"), origin=str(run_dir))


def from_table(table: Table) -> Source:
    records = tuple(Record(c, m, None) for c, m in table.rows.items())
    space: Any = table.space
    if hasattr(space, "knobs"):
        values = {k.name: tuple(k.values) for k in space.knobs}
    else:
        values = _observed(records)
    return Source(records, table.objective_name, table.direction, tuple(values), values, device=table.device,
                  kernel=str(table.meta.get("kernel") or table.meta.get("problem") or ""),
                  problem_size=table.meta.get("problem_size"), origin=table.source)


def load_source(path: str | Path) -> Source:
    """A run's records as they are; any table file through the one door (searchlab.interchange.open_table)."""
    p = Path(path)
    if p.is_dir() or p.name == "results.db":
        return from_run(p if p.is_dir() else p.parent)
    return from_table(open_table(p, "SOURCE"))


def export(kind: str, source: Source) -> dict[str, Any]:
    if kind == "t4":
        unit = "s" if source.objective.endswith("_s") else "ms" if source.objective.endswith("_ms") else ""
        return t4_document(source.records, source.objective, unit=unit, source=source.origin)
    return kt_cache_document(source.records, source.names, source.values, objective=source.objective,
                             direction=source.direction, device=source.device, kernel=source.kernel,
                             problem_size=source.problem_size)


def write(doc: dict[str, Any], out: Path, source: str | Path | None = None) -> Path:
    """``doc`` as JSON (``.gz``: gzipped) into ``out``, checked and written atomically (searchlab.core.outputs)."""
    check_target(out, "-o", [Path(source)] if source is not None else [])
    text = json.dumps(doc, indent=1, default=str)

    def dump(tmp: Path) -> None:
        if out.suffix == ".gz":
            with gzip.open(tmp, "wt") as fh:
                fh.write(text)
        else:
            tmp.write_text(text)

    return write_atomic(out, dump, "-o")


FORMATS = ("t4", "kt-cache", "csv", "parquet", "optuna")


def main(argv: Sequence[str] | None = None) -> int:
    from searchlab.core.commands import spelled

    parser = argparse.ArgumentParser(prog=spelled("searchlab.export"), description=__doc__.split("\n\n")[0])
    parser.add_argument("format", choices=FORMATS, help="t4: T4 results; kt-cache: a Kernel Tuner cache file; csv, "
                        "parquet: one row per evaluation; optuna: an Optuna study in --storage")
    parser.add_argument("source", help="a run directory, results.db, a searchlab table (.json[.gz]) or a T4 file")
    parser.add_argument("-o", "--output", help="the file to write (t4, kt-cache: .json or .json.gz; csv; parquet)")
    parser.add_argument("--storage", help="optuna: the RDB storage URL (e.g. sqlite:///study.db)")
    parser.add_argument("--study-name", help="optuna: the study's name (default: the source's name)")
    args = parser.parse_args(argv)
    try:
        with interruptible():  # SIGTERM like Ctrl-C: nothing half-written, exit 143 (issue 47, item 16)
            print(_export(args))
    except SearchlabError as exc:
        print(f"searchlab.export: error: {exc}", file=sys.stderr, flush=True)
        return exc.exit_status
    except Interrupted as exc:
        print(f"searchlab.export: interrupted ({exc}); nothing was written", file=sys.stderr, flush=True)
        return exc.exit_status
    return 0


def _export(args: argparse.Namespace) -> str:
    """Do the export the arguments ask for; the line saying what was written."""
    if args.format == "optuna":
        if not args.storage:
            raise ConfigError("export optuna needs --storage URL (e.g. sqlite:///study.db)")
        check_storage(args.storage, args.source)
        source = load_source(args.source)
        name = write_study(source, args.storage, args.study_name or Path(source.origin).name or "searchlab")
        return f"wrote study {name!r} ({len(source.records)} trials) to {args.storage}"
    if not args.output:
        raise ConfigError(f"export {args.format} needs -o FILE")
    out = Path(args.output)
    if args.format in ("csv", "parquet"):
        check_target(out, "-o", [Path(args.source)])
        frame = evaluations_frame(load_source(args.source))
        if args.format == "csv":
            write_atomic(out, lambda tmp: frame.to_csv(tmp, index=False), "-o")
        else:
            write_atomic(out, lambda tmp: frame.to_parquet(tmp, index=False), "-o")
    else:
        check_target(out, "-o", [Path(args.source)])
        write(export(args.format, load_source(args.source)), out, args.source)
    return f"wrote {out}"


def check_storage(storage: str, source: str) -> None:
    """Refuse an Optuna storage that keeps nothing (``sqlite:///``, ``:memory:``: issue 47, item 17) or that is a
    run's own records (issue 47, item 7: 13 Optuna tables were added to a run's ``results.db``)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(storage)
    except (ArgumentError, ValueError):
        return  # Optuna's own message, below
    if url.get_backend_name() != "sqlite":
        return
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:") or url.query.get("mode") == "memory":
        raise ConfigError(f"--storage {storage!r} is an in-memory database: the study would be lost when the export "
                          f"ends; give a file (e.g. sqlite:///study.db)")
    path = Path(database)
    if path.is_dir():
        raise ConfigError(f"--storage {storage!r}: {database!r} is a directory; give a file")
    if path.exists() or path.parent.is_dir():
        check_target(path, "--storage", [Path(source)])


def evaluations_frame(source: Source) -> Any:
    """One row per evaluation of one source (a single run, a table, a T4 file), in recorded order."""
    import pandas as pd

    rows = []
    wider = {k for r in source.records for k, v in r.config.items() if wide(v) is not v}  # a column of one type
    for number, r in enumerate(source.records):
        m = r.measurement
        rows.append({"number": number, **{f"param_{k}": str(v) if k in wider else _cell(v) for k, v in r.config.items()},
                     "status": m.status.value, "failure_mode": m.failure_mode.value, source.objective: m.objective,
                     "samples": json.dumps(list(m.samples)), "compile_s": m.compile_s, "run_s": m.run_s,
                     "message": m.message, "device": source.device})
    return pd.DataFrame(rows)


def _cell(value: Any) -> Any:
    return wide(value) if isinstance(value, (int, float, str, bool)) or value is None else json.dumps(value, default=str)


# -- export optuna (issue 36, item 4) -------------------------------------------------------------
# Every evaluation becomes one trial, in recorded order, by the one Optuna writer the live view also uses
# (searchlab.run.optuna_trials: parameters, value, state and user attributes). An existing study of that name is
# refused (one line); a study left half-written by an error is deleted.
def optuna_trials(source: Source) -> list[Any]:
    """The source's evaluations as Optuna frozen trials."""
    distributions = Distributions(values={n: source.values[n] for n in source.names})
    return [frozen_trial({n: r.config[n] for n in source.names if n in r.config}, r.measurement, distributions,
                         attributes(r.measurement, source.device)) for r in source.records]


MARK = "searchlab_export"  # study attribute: {"source": ..., "complete": bool}; complete only once every trial is in


def write_study(source: Source, storage: str, name: str) -> str:
    """Create study ``name`` in ``storage`` holding every evaluation of ``source``; its name.

    Atomic in effect (issue 47, item 16): the study is marked incomplete until its last trial is in; an error
    or a signal (SIGINT, SIGTERM) deletes it, and one left behind by SIGKILL is recognised by its mark and
    replaced by the rerun, which used to refuse it for ever ("a study of that name exists")."""
    import optuna

    from searchlab.searchers._optuna.base import quiet_optuna

    built = optuna_trials(source)
    with quiet_optuna():
        study = _create(optuna, storage, name, source)
        try:
            study.set_user_attr("source", source.origin)
            study.set_user_attr("objective", source.objective)
            study.set_user_attr("device", source.device)
            study.add_trials(built)
            study.set_user_attr(MARK, {"source": source.origin, "complete": True})
        except BaseException:
            optuna.delete_study(study_name=name, storage=storage)  # nothing half-written
            raise
    return name


def _create(optuna: Any, storage: str, name: str, source: Source) -> Any:
    from optuna.exceptions import DuplicatedStudyError

    try:
        try:
            study = optuna.create_study(storage=storage, study_name=name, direction=source.direction.value)
        except DuplicatedStudyError:
            mark = optuna.load_study(study_name=name, storage=storage).user_attrs.get(MARK)
            if not (isinstance(mark, dict) and mark.get("source") == source.origin and mark.get("complete") is False):
                raise
            optuna.delete_study(study_name=name, storage=storage)  # our own, half-written by a killed export
            print(f"searchlab.export: note: replacing study {name!r}, left incomplete by an export of the same "
                  f"source that was killed", file=sys.stderr, flush=True)
            study = optuna.create_study(storage=storage, study_name=name, direction=source.direction.value)
        study.set_user_attr(MARK, {"source": source.origin, "complete": False})
        return study
    except DuplicatedStudyError:
        raise ConfigError(f"--study-name {name!r}: a study of that name exists in {storage}; choose another name") from None
    except (ValueError, ImportError, optuna.exceptions.OptunaError) as exc:
        raise ConfigError(f"--storage {storage!r}: {' '.join(str(exc).split())[:300]}") from None
    except Exception as exc:  # SQLAlchemy's errors (a bad URL, an unreachable server)
        raise ConfigError(f"--storage {storage!r}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None


if __name__ == "__main__":
    sys.exit(main())
