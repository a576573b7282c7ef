"""The record of a kernel tuned from Python (``searchlab.tune``): ``kernel.json`` and its files, as data.

Kernel Tuner's ``tune_kernel`` takes a kernel string, numpy arrays and a dict of tunables; a run must be
rebuilt from its records alone (a Ray worker builds its own problem, a resume builds it again, docs/security.md:
records are data, never code). So ``searchlab.tune`` writes what it was given into ``RUN/inputs/``: the kernel
source (``kernel.cl``), each array argument and each reference answer as ``.npy`` (read without pickle), and this
manifest (JSON), which names them. :func:`read_manifest` reads it back, checking every value; a file it names
must lie in the manifest's own directory (a plain name, no path).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from searchlab.core import files
from searchlab.errors import ConfigError

FORMAT = "searchlab.python_kernel"
VERSION = 1
DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64")
BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")  # Kernel Tuner's default_block_size_names
Size = int | str  # a number, or an expression of the parameters (Kernel Tuner evaluates such strings)


@dataclass(frozen=True)
class ArgumentEntry:
    """One kernel argument, in the kernel's order: an array (a ``.npy`` file) or a scalar (its value)."""

    name: str
    dtype: str  # a numpy dtype name (DTYPES)
    kind: str  # array | scalar
    file: str = ""  # array: a .npy file beside the manifest
    size: int = 0  # array: its number of elements
    value: int | float = 0  # scalar


@dataclass(frozen=True)
class KernelManifest:
    """What ``tune_kernel``'s arguments meant, as plain data (module docstring)."""

    kernel_name: str
    kernel_file: str  # beside the manifest
    problem_size: tuple[Size, ...]  # 1 to 3 entries
    tune_params: tuple[tuple[str, tuple[Any, ...]], ...]  # in the caller's order
    restrictions: tuple[str, ...]
    grid_div: tuple[tuple[Size, ...] | None, ...]  # x, y, z; None: Kernel Tuner's default (that dimension's block size)
    block_size_names: tuple[str, ...]  # three names
    arguments: tuple[ArgumentEntry, ...]
    answer: tuple[str | None, ...]  # per argument: a .npy file of the correct output, or None (not checked)
    atol: float = 1e-6
    default: Mapping[str, Any] | None = None

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, **asdict(self)}, indent=1)


def _fail(path: Path, why: str) -> ConfigError:
    return ConfigError(f"{path}: {why}")


def _plain_name(value: Any, path: Path, what: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[\w.-]+", value) or value in (".", ".."):
        raise _fail(path, f"{what}={value!r} must be a file name beside the manifest")
    return value


def _size(value: Any, path: Path, what: str) -> Size:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _fail(path, f"{what}={value!r} must be an integer or an expression (a string)")
    return value


def _argument(raw: Any, path: Path, i: int) -> ArgumentEntry:
    if not isinstance(raw, dict) or raw.get("kind") not in ("array", "scalar") or raw.get("dtype") not in DTYPES:
        raise _fail(path, f"arguments[{i}] must be {{kind: array|scalar, dtype: one of {list(DTYPES)}, ...}}")
    if raw["kind"] == "array":
        size = raw.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise _fail(path, f"arguments[{i}].size={size!r} must be a positive integer")
        return ArgumentEntry(str(raw.get("name", f"arg{i}")), raw["dtype"], "array",
                             _plain_name(raw.get("file"), path, f"arguments[{i}].file"), size)
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, f"arguments[{i}].value={value!r} must be a finite number")
    return ArgumentEntry(str(raw.get("name", f"arg{i}")), raw["dtype"], "scalar", value=value)


def _params(raw: Any, path: Path) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(path, "tune_params must be a non-empty list of [name, [values]]")
    out = []
    for item in raw:
        ok = isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)
        if not ok or not item[1] or not all(isinstance(v, (bool, int, float, str)) for v in item[1]):
            raise _fail(path, f"tune_params entry {item!r} must be [name, [numbers or strings, ...]]")
        out.append((item[0], tuple(item[1])))
    return tuple(out)


def read_manifest(path: str | Path) -> KernelManifest:
    """The manifest at ``path``, every value checked (one ConfigError line for the first that is wrong)."""
    where = Path(path)
    raw = files.read_json(where, "problem.spec")
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise _fail(where, f"not a {FORMAT} manifest of version {VERSION} (searchlab.tune writes them)")
    arguments = tuple(_argument(a, where, i) for i, a in enumerate(raw.get("arguments") or []))
    answer = raw.get("answer") or [None] * len(arguments)
    if not isinstance(answer, list) or len(answer) != len(arguments):
        raise _fail(where, "answer must list one entry (a file or null) per argument")
    grid_div = raw.get("grid_div") or [None, None, None]
    if not isinstance(grid_div, list) or len(grid_div) != 3:
        raise _fail(where, "grid_div must list three entries (x, y, z)")
    names = raw.get("block_size_names") or list(BLOCK_SIZE_NAMES)
    if not isinstance(names, list) or len(names) != 3 or not all(isinstance(n, str) for n in names):
        raise _fail(where, "block_size_names must be three names")
    sizes = raw.get("problem_size")
    if not isinstance(sizes, list) or not 1 <= len(sizes) <= 3:
        raise _fail(where, "problem_size must list 1 to 3 sizes")
    atol, default = raw.get("atol", 1e-6), raw.get("default")
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not atol >= 0:
        raise _fail(where, f"atol={atol!r} must be a number >= 0")
    if default is not None and not isinstance(default, dict):
        raise _fail(where, f"default={default!r} must be a mapping of parameter -> value")
    restrictions = raw.get("restrictions") or []
    if not isinstance(restrictions, list) or not all(isinstance(r, str) for r in restrictions):
        raise _fail(where, "restrictions must be a list of expressions (strings)")
    return KernelManifest(
        kernel_name=str(raw.get("kernel_name") or ""), kernel_file=_plain_name(raw.get("kernel_file"), where, "kernel_file"),
        problem_size=tuple(_size(s, where, "problem_size") for s in sizes), tune_params=_params(raw.get("tune_params"), where),
        restrictions=tuple(restrictions),
        grid_div=tuple(None if d is None else tuple(_size(x, where, "grid_div") for x in (d if isinstance(d, list) else [d]))
                       for d in grid_div),
        block_size_names=tuple(names), arguments=arguments,
        answer=tuple(None if a is None else _plain_name(a, where, "answer") for a in answer),
        atol=float(atol), default=default)


def write_manifest(directory: Path, manifest: KernelManifest, kernel_text: str,
                   arrays: Mapping[str, Any], answers: Sequence[Any]) -> Path:
    """``directory/kernel.json`` with the kernel source and the ``.npy`` files it names; its path.

    ``arrays``: argument file name -> numpy array; ``answers``: per argument, None or the correct output."""
    import numpy as np

    directory.mkdir(parents=True, exist_ok=True)
    (directory / manifest.kernel_file).write_text(kernel_text)
    for name, array in arrays.items():
        np.save(directory / name, np.ascontiguousarray(array), allow_pickle=False)
    for file, want in zip(manifest.answer, answers):
        if file is not None:
            np.save(directory / file, np.ascontiguousarray(want), allow_pickle=False)
    path = directory / "kernel.json"
    path.write_text(manifest.to_json())
    return path
