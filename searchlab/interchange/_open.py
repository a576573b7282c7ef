"""One door for every table format: :func:`open_table` decides what a file is and reads it once.

Why one function (issue 45, item 4): the run's priors, the settings problem's training tables, the
table problem and export each decided on their own which format a file was (by peeking at its first
bytes, or by parsing it and looking at its keys), each with its own per-process cache and key, so the
same file could be read as different things, or parsed three times, depending on who asked. Here:

- a directory holding ``results.db`` (or the file itself) is a recorded run: its table is built by
  the run reader that ``searchlab.adapters.table`` registers (:func:`set_run_reader`), because a
  run's space is rebuilt from its stored problem config through the registry, a layer above this one;
- a ``.json``/``.json.gz``/``.yaml`` file is parsed once (bounded, :mod:`searchlab.core.files`) and
  is a Kernel Tuner cache (``tune_params`` and ``cache``), a searchlab table (``format``) or a T4
  results file (``results``), in that order;
- the result is cached per process by (resolved path, size, modification time, options): a replay
  study's worker, a settings problem's hundreds of inner replays and a run's priors parse a file once.

Tables are read-only once built (every user copies what it changes, e.g. ``TableProblem.reseeded``),
so sharing one is safe.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.interchange.table import FORMAT, Table

RunReader = Callable[[Path], Table]
_RUN_READER: list[RunReader] = []
_RUN_READER_MODULE = "searchlab.adapters.table"  # registers table_from_run on import (by name: a layer above)
_CACHE: OrderedDict[tuple[Any, ...], Table] = OrderedDict()
_CACHE_SIZE = 32
KINDS = ("a Kernel Tuner cache", "a T4 results file", "a searchlab table", "a recorded run's directory")


def set_run_reader(reader: RunReader) -> None:
    """Register how a recorded run becomes a table (``searchlab.adapters.table`` does, on import)."""
    _RUN_READER[:] = [reader]


def _run_reader(where: str) -> RunReader:
    if not _RUN_READER:  # nobody imported the table adapter yet: load it by name, as the registry loads problems
        import importlib

        importlib.import_module(_RUN_READER_MODULE)
    if not _RUN_READER:
        raise ConfigError(f"{where}: recorded runs are read by {_RUN_READER_MODULE}, which registered no reader")
    return _RUN_READER[0]


def table_kind(path: str | Path) -> str:
    """Which of :data:`KINDS` ``path`` is, from its name alone for runs, else from its content."""
    p = Path(path).expanduser()
    if p.is_dir() or p.name == "results.db":
        return KINDS[3]
    return _kind_of(_document(p, f"table={str(path)!r}"), f"table={str(path)!r}")


def open_table(path: str | Path, where: str = "table", **options: Any) -> Table:
    """The table in ``path``, whatever its format (module docstring); ``options`` go to the format's reader
    (a Kernel Tuner cache's ``missing``/``model``/``recorded_failures``, a T4 file's ``objective``/``direction``).

    Every refusal is one :class:`ConfigError` line that starts with ``where`` and names the path."""
    p = Path(os.path.expanduser(str(path)))
    shown = f"{where}={str(path)!r}"
    if not p.exists():
        raise ConfigError(f"{shown}: does not exist (no such file or run directory)")
    run = p.is_dir() or p.name == "results.db"
    run_dir = (p if p.is_dir() else p.parent)
    stamped = run_dir / "results.db" if run else p
    if run and not stamped.is_file():
        raise ConfigError(f"{shown}: a directory without results.db (give {', '.join(KINDS[:3])} or a run directory)")
    key = (*_stamp(stamped, run), tuple(sorted((k, repr(v)) for k, v in options.items())))
    table = _CACHE.get(key)
    if table is None:
        table = _run_reader(shown)(run_dir) if run else _read_file(p, shown, options)
        _CACHE[key] = table
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    return table


def _stamp(path: Path, run: bool) -> tuple[Any, ...]:
    """What identifies the file's content on disk: path, size and modification time (a run's WAL too)."""
    parts: list[Any] = [str(path.resolve())]
    for each in (path, path.with_name(path.name + "-wal")) if run else (path,):
        try:
            st = os.stat(each)
            parts += [st.st_mtime_ns, st.st_size]
        except FileNotFoundError:
            parts += [0, 0]
    return tuple(parts)


def _document(p: Path, shown: str) -> Mapping[str, Any]:
    from searchlab.core import files
    from searchlab.interchange._documents import resolve

    files.regular_file(p, shown)  # a device (/dev/zero) or a FIFO is refused, never read
    if not p.name.endswith((".json", ".json.gz", ".yaml", ".yml")):
        raise ConfigError(f"{shown}: not a table file (.json, .json.gz or .yaml: {', '.join(KINDS[:3])}) "
                          "nor a run directory")
    text = files.read_text(resolve(p, shown), shown)
    doc = files.load_yaml(text, shown) if p.suffix in (".yaml", ".yml") else _json(text, shown)
    if not isinstance(doc, dict):
        raise ConfigError(f"{shown}: not {KINDS[0]}, {KINDS[1]} or {KINDS[2]} (its top level is a "
                          f"{type(doc).__name__}, not a mapping)")
    return doc


def _json(text: str, shown: str) -> Any:
    from searchlab.core import jsondata

    try:
        return jsondata.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{shown} is not readable JSON: {str(exc).splitlines()[0][:200]}") from None


def _kind_of(doc: Mapping[str, Any], shown: str) -> str:
    if "tune_params" in doc and "cache" in doc:
        return KINDS[0]
    if doc.get("format") == FORMAT:
        return KINDS[2]
    if "results" in doc:
        return KINDS[1]
    raise ConfigError(f"{shown}: not a run directory, {KINDS[0]}, {KINDS[1]} or {KINDS[2]} (no 'tune_params' and "
                      "'cache', 'format' or 'results' at its top level)")


def _read_file(p: Path, shown: str, options: Mapping[str, Any]) -> Table:
    from searchlab.interchange.kt_cache import load_kernel_tuner_cache
    from searchlab.interchange.t4 import read_t4
    from searchlab.interchange.table import read_table_file

    doc = _document(p, shown)
    kind = _kind_of(doc, shown)
    if kind == KINDS[0]:
        return load_kernel_tuner_cache(p, doc=doc, **options)
    if options:
        allowed = {"objective", "direction"} if kind == KINDS[1] else set()
        extra = sorted(set(options) - allowed)
        if extra:
            raise ConfigError(f"{shown}: {kind} takes no option {extra[0]!r}")
    if kind == KINDS[1]:
        return read_t4(p, doc=doc, **options)
    return read_table_file(p, doc=doc)
