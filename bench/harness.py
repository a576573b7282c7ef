"""One harness for every benchmark: a registry, one command, one result schema with provenance.

Why (issue 52, item 5): a benchmark is a claim the docs cite, so it must be re-runnable by one command and its
result must say where, when and how it was measured. As in Nevergrad's benchmark package: each benchmark is a
registered function with its options declared as data (a frozen dataclass, defaults beside the fields); the
harness parses the command line from those fields, times the run, reads the machine's load before and after,
and writes ``bench/results/<name>.json`` in one schema (:data:`SCHEMA`):

    {"schema": "searchlab-bench/1", "benchmark": NAME, "summary": ..., "options": {...},
     "provenance": {"commit", "dirty", "command", "started", "wall_s", "machine", "load_average_start",
                    "load_average_end", "versions", "seeds"},
     "results": {...}}          # what the benchmark's function returned (JSON data)

``python -m bench list`` names every benchmark; ``python -m bench NAME --help`` its options. A benchmark uses public
searchlab names only (``make lint`` checks bench/ with ruff and mypy like the package).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_type_hints

SCHEMA = "searchlab-bench/1"
ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


@dataclass
class Context:
    """What a running benchmark gets from the harness: where to write, how to say what it is doing."""

    name: str
    out: Path  # the result file (JSON); extra artefacts go beside it (:meth:`artefact`)
    quiet: bool = False
    seeds: list[int] = field(default_factory=list)  # every seed the benchmark used: recorded in provenance
    _last: float = field(default_factory=time.monotonic)

    def log(self, message: str) -> None:
        """A progress line on stderr (never silent for long: issue 54 item 3)."""
        self._last = time.monotonic()
        if not self.quiet:
            print(f"bench {self.name}: {message}", file=sys.stderr, flush=True)

    def artefact(self, suffix: str) -> Path:
        """A file beside the result (``<name><suffix>``, e.g. ``.svg``, ``_table.md``), directory made."""
        path = self.out.with_name(self.out.name.removesuffix(".json") + suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def used_seeds(self, seeds: Sequence[int]) -> list[int]:
        """Record ``seeds`` as used (provenance) and return them as a list."""
        for seed in seeds:
            if seed not in self.seeds:
                self.seeds.append(int(seed))
        return list(seeds)


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark: ``run(ctx, options) -> results`` with ``options`` an instance of ``Options``."""

    name: str
    summary: str
    options: type[Any]  # a dataclass; its fields are the command-line options (``--field value``)
    run: Callable[[Context, Any], Mapping[str, Any]]
    cited_by: tuple[str, ...] = ()  # the docs that quote its numbers


@dataclass(frozen=True)
class NoOptions:
    """For a benchmark without options."""


# name -> module that defines it (imported only when that benchmark is listed in detail or run)
REGISTRY: dict[str, str] = {}
_LOADED: dict[str, Benchmark] = {}


def register(name: str, module: str) -> None:
    """Declare that ``bench.<module>`` defines the benchmark ``name`` (its module-level ``BENCHMARK``)."""
    if name in REGISTRY and REGISTRY[name] != module:
        raise ValueError(f"benchmark {name!r} registered twice ({REGISTRY[name]}, {module})")
    REGISTRY[name] = module


def load(name: str) -> Benchmark:
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY)) or "none"
        raise SystemExit(f"python -m bench: unknown benchmark {name!r} (known: {known})")
    if name not in _LOADED:
        module = importlib.import_module(f"bench.{REGISTRY[name]}")
        found = getattr(module, "BENCHMARK", None)
        benchmarks = found if isinstance(found, (list, tuple)) else [found]
        for bench in benchmarks:
            if isinstance(bench, Benchmark):
                _LOADED[bench.name] = bench
        if name not in _LOADED:
            raise SystemExit(f"python -m bench: bench.{REGISTRY[name]} defines no BENCHMARK named {name!r}")
    return _LOADED[name]


# -- provenance -----------------------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def _load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine() -> dict[str, Any]:
    """Where it ran: host, CPU model and count, memory, OS, Python."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {"host": socket.gethostname(), "cpu": model, "cpus": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "memory_gib": mem_gib, "os": platform.platform(), "python": platform.python_version()}


def versions() -> dict[str, str]:
    from searchlab.core.store import package_versions

    found = package_versions()
    from importlib.metadata import PackageNotFoundError, version

    for extra in ("kernel_tuner", "autotuning_methodology"):
        try:
            found[extra] = version(extra)
        except PackageNotFoundError:
            pass
    return found


def provenance(ctx: Context, argv: Sequence[str], started: float, wall: float,
               load_start: list[float]) -> dict[str, Any]:
    return {"commit": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "command": " ".join(shlex.quote(a) for a in ("python", "-m", "bench", ctx.name, *argv)),
            "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
            "wall_s": round(wall, 3), "machine": machine(), "load_average_start": load_start,
            "load_average_end": _load_average(), "versions": versions(), "seeds": list(ctx.seeds)}


# -- the command line ----------------------------------------------------------------------------------------


def _parser(bench: Benchmark) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m bench {bench.name}", description=bench.summary)
    hints = get_type_hints(bench.options)
    for f in dataclasses.fields(bench.options):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        kind = hints.get(f.name, str)
        if kind is bool:
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=default)
        elif getattr(kind, "__origin__", None) in (list, tuple):
            inner = kind.__args__[0]
            parser.add_argument(flag, dest=f.name, type=inner, nargs="+", default=default)
        else:
            plain = kind if kind in (int, float, str) else str
            parser.add_argument(flag, dest=f.name, type=plain, default=default,
                                help=f"default {default!r}")
    parser.add_argument("--out", default=None, help=f"result file (default bench/results/{bench.name}.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def _plain(value: Any) -> Any:
    """JSON data from what a benchmark returned (numpy numbers, tuples, paths, dataclasses)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def write(path: Path, document: Mapping[str, Any]) -> None:
    """Atomically: a killed benchmark never leaves half a result file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(_plain(document), indent=1, allow_nan=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run(name: str, argv: Sequence[str]) -> Path:
    """Run one benchmark with its command-line options; returns the result file written."""
    bench = load(name)
    args = vars(_parser(bench).parse_args(list(argv)))
    out = Path(args.pop("out") or RESULTS / f"{bench.name}.json")
    quiet = bool(args.pop("quiet"))
    options = bench.options(**args)
    ctx = Context(bench.name, out, quiet)
    load_start = _load_average()
    started, clock = time.time(), time.perf_counter()
    results = bench.run(ctx, options)
    wall = time.perf_counter() - clock
    document = {"schema": SCHEMA, "benchmark": bench.name, "summary": bench.summary,
                "options": dataclasses.asdict(options), "provenance": provenance(ctx, argv, started, wall, load_start),
                "results": results}
    write(out, document)
    ctx.log(f"wrote {out} ({wall:.1f} s)")
    return out


def read(path: str | Path) -> dict[str, Any]:
    """A result file of this schema (refuses another schema in one line)."""
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, not {SCHEMA}")
    return data
