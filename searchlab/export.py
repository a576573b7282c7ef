"""Export any run or table in the field's formats.

    python -m searchlab.export t4 SOURCE -o results.json         # T4 results (validated)
    python -m searchlab.export kt-cache SOURCE -o cache.json     # a Kernel Tuner cache file

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

from searchlab.adapters.table import FORMAT, Table, load_table
from searchlab.errors import ConfigError, SearchlabError
from searchlab.interchange import load_document
from searchlab.interchange.kt_cache import kt_cache_document
from searchlab.interchange.t4 import Record, read_t4, t4_document
from searchlab.records import Direction


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
    from searchlab.store import read_run

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
    p = Path(path)
    if p.is_dir() or p.name == "results.db":
        return from_run(p if p.is_dir() else p.parent)
    doc = load_document(p, "SOURCE")
    if doc.get("format") == FORMAT:
        return from_table(load_table(p))
    if "results" in doc and "schema_version" in doc:
        return from_table(read_t4(p))
    raise ConfigError(f"SOURCE={str(path)!r}: not a run directory, a searchlab table ({FORMAT}) or a T4 file")


def export(kind: str, source: Source) -> dict[str, Any]:
    if kind == "t4":
        unit = "s" if source.objective.endswith("_s") else "ms" if source.objective.endswith("_ms") else ""
        return t4_document(source.records, source.objective, unit=unit, source=source.origin)
    return kt_cache_document(source.records, source.names, source.values, objective=source.objective,
                             direction=source.direction, device=source.device, kernel=source.kernel,
                             problem_size=source.problem_size)


def write(doc: dict[str, Any], out: Path) -> Path:
    if not out.parent.is_dir():
        raise ConfigError(f"-o {str(out)!r}: directory {str(out.parent)!r} does not exist")
    text = json.dumps(doc, indent=1, default=str)
    if out.suffix == ".gz":
        with gzip.open(out, "wt") as fh:
            fh.write(text)
    else:
        out.write_text(text)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m searchlab.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("format", choices=("t4", "kt-cache"), help="t4: T4 results; kt-cache: a Kernel Tuner cache file")
    parser.add_argument("source", help="a run directory, results.db, a searchlab table (.json[.gz]) or a T4 file")
    parser.add_argument("-o", "--output", required=True, help="the file to write (.json or .json.gz)")
    args = parser.parse_args(argv)
    try:
        out = write(export(args.format, load_source(args.source)), Path(args.output))
    except SearchlabError as exc:
        print(f"searchlab.export: error: {exc}", file=sys.stderr, flush=True)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
