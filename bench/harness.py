"""One harness for every benchmark: a registry, one command, one result schema with provenance.

Why (issue 52, item 5): a benchmark is a claim the docs cite, so it must be re-runnable by one command and its
result must say where, when and how it was measured. As in Nevergrad's benchmark package: each benchmark is a
registered function with its options declared as data (a frozen dataclass, defaults beside the fields); the
harness parses the command line from those fields, times the run, reads the machine's load before and after,
and writes ``bench/results/<name>.json`` in one schema (:data:`SCHEMA`):

    {"schema": "searchlab-bench/1", "benchmark": NAME, "summary": ..., "options": {...}, "partial": false,
     "provenance": {"commit", "dirty", "command", "started", "wall_s", "machine", "load_average_start",
                    "load_average_end", "versions", "seeds"},
     "results": {...}}          # what the benchmark's function returned (JSON data)

``python -m bench list`` names every benchmark; ``python -m bench NAME --help`` its options;
``python -m bench report NAME [FILE]`` redraws a result's figures and tables (its ``report`` function) without
measuring again. Every benchmark runs with one BLAS/OpenMP thread (the machine is shared; a benchmark that wants
more says so in its options). A benchmark uses public searchlab names only and imports no other benchmark module,
only the harness and helpers (:mod:`bench.common`, or a family's helper module that registers nothing; no import
cycle: tests/bench/test_bench_rules.py; ``make lint`` checks bench/ with ruff and mypy).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import importlib
import json
import math
import os
import sys
import time
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from bench.provenance import load_average, provenance

SCHEMA = "searchlab-bench/1"
ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class UsageError(Exception):
    """Bad input to a benchmark (an unknown name, an option out of range): one line, exit status 2, nothing
    measured or written (``python -m bench`` prints it)."""


@dataclass
class Context:
    """What a running benchmark gets from the harness: where to write, how to say what it is doing."""

    name: str
    out: Path  # the result file (JSON); extra artefacts go beside it (:meth:`artefact`)
    quiet: bool = False
    seeds: list[int] = field(default_factory=list)  # every seed the benchmark used: recorded in provenance
    failed: bool = False  # set by a benchmark whose check failed: the result is written, the exit status is 1
    checkpoint: Callable[[Mapping[str, Any]], None] = field(default=lambda results: None, repr=False)

    def log(self, message: str) -> None:
        """A progress line on stderr (never silent for long: issue 54 item 3)."""
        if not self.quiet:
            print(f"bench {self.name}: {message}", file=sys.stderr, flush=True)

    def artefact(self, suffix: str) -> Path:
        """A file beside the result (``<name><suffix>``, e.g. ``.svg``, ``_table.md``), directory made."""
        path = self.out.with_name(self.out.name.removesuffix(".json") + suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def save_figure(self, figure: Any, suffix: str = ".svg") -> Path:
        """A matplotlib figure as a vector file beside the result (a paper can use it), then closed."""
        import matplotlib.pyplot as plt

        path = self.artefact(suffix)
        figure.savefig(path)
        plt.close(figure)
        self.log(f"wrote {path}")
        return path

    def save_data(self, suffix: str, data: Any) -> Path:
        """Data beside the result that is not the result (raw runs a later ``--merge`` or report reads), as JSON
        through the one writer (:func:`write`); gzip-compressed when ``suffix`` ends in ``.gz``."""
        path = self.artefact(suffix)
        write(path, data)
        self.log(f"wrote {path}")
        return path

    def load_data(self, suffix: str) -> Any:
        """What :meth:`save_data` wrote (None if there is no such file)."""
        path = self.artefact(suffix)
        if not path.is_file():
            return None
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        return json.loads(raw)

    def used_seeds(self, seeds: Sequence[int]) -> list[int]:
        """Record ``seeds`` as used (provenance) and return them as a list."""
        for seed in seeds:
            if int(seed) not in self.seeds:
                self.seeds.append(int(seed))
        return [int(s) for s in seeds]


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark: ``run(ctx, options) -> results`` with ``options`` an instance of ``options``."""

    name: str
    summary: str
    options: type[Any]  # a frozen dataclass, every field with a default; its fields are the command-line options
    run: Callable[[Context, Any], Mapping[str, Any]]
    report: Callable[[Context, Mapping[str, Any]], None] | None = None  # figures/tables from results alone
    cited_by: tuple[str, ...] = ()  # the docs that quote its numbers


@dataclass(frozen=True)
class NoOptions:
    """For a benchmark without options."""


# name -> module that defines it (imported only when that benchmark is described or run)
REGISTRY: dict[str, str] = {}
_LOADED: dict[str, Benchmark] = {}


def register(name: str, module: str) -> None:
    """Declare that ``bench.<module>`` defines the benchmark ``name`` (its module-level ``BENCHMARK``)."""
    if name in REGISTRY and REGISTRY[name] != module:
        raise ValueError(f"benchmark {name!r} registered twice ({REGISTRY[name]}, {module})")
    REGISTRY[name] = module


def load(name: str) -> Benchmark:
    """The benchmark ``name`` (its module imported now); one line if there is none."""
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY)) or "none"
        raise UsageError(f"unknown benchmark {name!r} (known: {known})")
    if name not in _LOADED:
        module = importlib.import_module(f"bench.{REGISTRY[name]}")
        found = getattr(module, "BENCHMARK", None)
        for bench in found if isinstance(found, (list, tuple)) else [found]:
            if isinstance(bench, Benchmark):
                _LOADED[bench.name] = bench
        if name not in _LOADED:
            raise UsageError(f"bench.{REGISTRY[name]} defines no BENCHMARK named {name!r}")
    return _LOADED[name]


# -- the command line ----------------------------------------------------------------------------------------


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise TypeError(f"option {f.name!r} has no default")


def _argument(kind: Any) -> dict[str, Any]:
    """argparse keywords for an option's type: int/float/str, bool, Literal, X | None, tuple[X, ...]."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _argument(inner[0]) if len(inner) == 1 else {"type": str}
    if origin is typing.Literal:
        return {"type": type(args[0]), "choices": list(args)}
    if origin in (list, tuple):
        return {**_argument(args[0]), "nargs": "*"}
    if kind is bool:
        return {"action": argparse.BooleanOptionalAction}
    return {"type": kind if kind in (int, float, str) else str}


def parser(bench: Benchmark) -> argparse.ArgumentParser:
    """The command line of a benchmark, made from its options dataclass."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {bench.name}", description=bench.summary)
    hints = get_type_hints(bench.options)
    for f in dataclasses.fields(bench.options):
        default = _default(f)
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else default
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=default,
                            help=f"default: {shown}", **_argument(hints.get(f.name, str)))
    parser.add_argument("--out", default=None, help=f"result file (default: bench/results/{bench.name}.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def _plain(value: Any) -> Any:
    """JSON data from what a benchmark returned (numpy numbers and arrays, tuples, paths, dataclasses; a
    non-finite float becomes null)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist") and callable(value.tolist):
        return _plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):  # JSON has no NaN or infinity: null
        return None
    return value


def write(path: Path, document: Any) -> None:
    """The one JSON writer of bench/, atomically: a killed benchmark never leaves half a file (gzip for ``.gz``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    text = json.dumps(_plain(document), indent=1, allow_nan=False, default=str) + "\n"
    tmp.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    os.replace(tmp, path)


def one_thread() -> None:
    """One BLAS/OpenMP thread unless the caller chose otherwise (before numpy is imported)."""
    for key in THREAD_VARIABLES:
        os.environ.setdefault(key, "1")


def run(name: str, argv: Sequence[str]) -> tuple[Path, int]:
    """Run one benchmark with its command-line options: the result file written and the exit status."""
    one_thread()
    bench = load(name)
    args = vars(parser(bench).parse_args(list(argv)))
    out = Path(args.pop("out") or RESULTS / f"{bench.name}.json").resolve()
    quiet = bool(args.pop("quiet"))
    options = bench.options(**{k: tuple(v) if isinstance(v, list) else v for k, v in args.items()})
    ctx = Context(bench.name, out, quiet)
    load_start = load_average()
    started, clock = time.time(), time.perf_counter()

    def document(results: Mapping[str, Any], partial: bool) -> dict[str, Any]:
        prov = provenance(bench.name, ctx.seeds, argv, started, time.perf_counter() - clock, load_start)
        return {"schema": SCHEMA, "benchmark": bench.name, "summary": bench.summary, "partial": partial,
                "options": dataclasses.asdict(options), "provenance": prov, "results": results}

    ctx.checkpoint = lambda results: write(out, document(results, True))
    results = bench.run(ctx, options)
    write(out, document(results, False))
    ctx.log(f"wrote {out} ({time.perf_counter() - clock:.1f} s)")
    if bench.report is not None:
        bench.report(ctx, read(out)["results"])
    return out, 1 if ctx.failed else 0


def report(name: str, path: str | None) -> Path:
    """Redraw a result's figures and tables (``bench.report``) from the file alone, measuring nothing.

    A historical file (bench/results/historical/, written before this schema) is read as its results: the
    converted benchmarks kept the layout of what they write inside ``results``."""
    bench = load(name)
    if bench.report is None:
        raise UsageError(f"{name} has no report (its result file is all there is)")
    out = Path(path) if path else RESULTS / f"{name}.json"
    if not out.is_file():
        raise UsageError(f"no result file {out}")
    data = json.loads(out.read_text(encoding="utf-8"))
    results = data["results"] if data.get("schema") == SCHEMA else data
    try:
        bench.report(Context(name, out.resolve()), results)
    except (KeyError, TypeError, IndexError) as exc:  # an older layout than the benchmark writes today
        raise UsageError(f"{out}: not the layout {name} writes today ({type(exc).__name__}: {exc}); "
                         "a historical file older than its benchmark's last change") from None
    return out


def read(path: str | Path) -> dict[str, Any]:
    """A result file of this schema (refuses another schema in one line)."""
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, not {SCHEMA}")
    return data
