"""Kernel Tuner's ``tune_kernel`` arguments, checked and turned into a manifest (searchlab.adapters.user._manifest).

Each argument means what it means to Kernel Tuner 1.5 (``kernel_tuner/interface.py``, ``util.py``); what cannot be
recorded as data is refused in one line that says what to give instead (docs/python.md): a callable (a kernel
generator, a restriction function, a size or divisor function) is code, and a run's records hold data only, so it
could not be rebuilt by a Ray worker or a resume. Kernel Tuner refuses Python numbers as kernel arguments; so
does this (a ``numpy.int32(n)`` says the kernel's type).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.adapters.user._manifest import BLOCK_SIZE_NAMES, DTYPES, ArgumentEntry, KernelManifest, Size
from searchlab.errors import ConfigError

CODE = "is code, and a run's records hold data only (a Ray worker and a resume rebuild the problem from them)"
_EXTENSIONS = (".c", ".opencl", ".F", ".jl")  # Kernel Tuner's looks_like_a_filename


@dataclass(frozen=True)
class Inputs:
    """What ``searchlab.tune`` writes into ``RUN/inputs/``."""

    manifest: KernelManifest
    kernel_text: str
    arrays: dict[str, np.ndarray]  # file name -> array
    answers: tuple[np.ndarray | None, ...]


def _refuse(what: str, why: str) -> ConfigError:
    return ConfigError(f"searchlab.tune: {what} {why}")


def _looks_like_a_filename(text: str) -> bool:
    """Kernel Tuner's rule: short, no code characters or keywords, and a source file's extension."""
    return (len(text) <= 250 and not any(c in text for c in "();{}\\")
            and not any(s in text for s in ("__global__ ", "__kernel ", "void ", "float "))
            and any(s in text for s in _EXTENSIONS))


def kernel_text(source: Any) -> str:
    """The kernel source: a Path or a file name (Kernel Tuner's rule), else the code itself."""
    if isinstance(source, (list, tuple)) and len(source) == 1:
        source = source[0]
    if callable(source):
        raise _refuse("kernel_source: a generator function", CODE + "; give the source text or a file")
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_a_filename(source)):
        path = Path(source)
        if path.is_file():
            from searchlab.core import files

            return files.read_text(path, "kernel_source")
        if isinstance(source, Path):
            raise _refuse(f"kernel_source={str(source)!r}", "is not a file")
    if not isinstance(source, str) or not source.strip():
        raise _refuse(f"kernel_source={source!r}", "must be the kernel's source text, or a file holding it")
    return source


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _size(value: Any, what: str) -> Size:
    value = _plain(value)
    if callable(value):
        raise _refuse(f"{what}: a function", CODE + "; give an integer or an expression of the parameters (a string)")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, int) and value < 1):
        raise _refuse(f"{what}={value!r}", "must be a positive integer or an expression of the parameters (a string)")
    return value


def problem_size(value: Any) -> tuple[Size, ...]:
    sizes = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if not 1 <= len(sizes) <= 3:
        raise _refuse(f"problem_size={value!r}", "must hold 1 to 3 sizes")
    return tuple(_size(s, "problem_size") for s in sizes)


def grid_div(value: Any, axis: str) -> tuple[Size, ...] | None:
    if value is None:
        return None
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    return tuple(_size(v, f"grid_div_{axis}") for v in items)


def tune_params(params: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if not isinstance(params, Mapping) or not params:
        raise _refuse("tune_params", "must be a non-empty dict of parameter name -> list of values")
    out = []
    for name, values in params.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise _refuse(f"tune_params: {name!r}", "is not a name the kernel can see as a #define")
        items = [_plain(v) for v in (values.tolist() if isinstance(values, np.ndarray) else values)] \
            if isinstance(values, (list, tuple, range, np.ndarray)) else None
        if not items or not all(isinstance(v, (bool, int, float, str)) for v in items):
            raise _refuse(f"tune_params[{name!r}]={values!r}", "must be a non-empty list of numbers or strings")
        out.append((name, tuple(items)))
    return tuple(out)


def restrictions(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) or callable(value) else list(value)
    for item in items:
        if callable(item):
            raise _refuse("restrictions: a function", CODE + "; give each restriction as an expression (a string), "
                          "e.g. \"block_size_x * tile_size_x <= 1024\"")
        if not isinstance(item, str):
            raise _refuse(f"restrictions: {item!r}", "must be an expression (a string)")
    return tuple(items)


def block_size_names(value: Any) -> tuple[str, ...]:
    names = list(value or ())
    if len(names) > 3 or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise _refuse(f"block_size_names={value!r}", "must list up to 3 names")
    return (*names, *BLOCK_SIZE_NAMES[len(names):])


def _argument(i: int, arg: Any) -> tuple[ArgumentEntry, np.ndarray | None]:
    name = f"arg{i}"
    if isinstance(arg, np.ndarray):
        if arg.dtype.name not in DTYPES or arg.size == 0:
            raise _refuse(f"arguments[{i}]: an array of {arg.dtype} and {arg.size} elements",
                          f"is not supported (non-empty, of {', '.join(DTYPES)})")
        return ArgumentEntry(name, arg.dtype.name, "array", f"{name}.npy", int(arg.size)), arg
    if isinstance(arg, np.generic) and arg.dtype.name in DTYPES:
        value = arg.item()
        if isinstance(value, int) and abs(value) > 2**53:
            raise _refuse(f"arguments[{i}]={value}", "is beyond 2**53 and would not be kept exactly")
        return ArgumentEntry(name, arg.dtype.name, "scalar", value=value), None
    hint = f"; give numpy.int32({arg!r}) or the kernel's type" if isinstance(arg, (int, float)) else ""
    raise _refuse(f"arguments[{i}]: {type(arg).__name__}", f"is not a numpy array or numpy scalar (as Kernel Tuner "
                  f"requires){hint}")


def _answer(i: int, want: Any, entry: ArgumentEntry, arg: np.ndarray | None) -> np.ndarray | None:
    if want is None:
        return None
    if arg is None or not isinstance(want, np.ndarray):
        raise _refuse(f"answer[{i}]", "must be None or a numpy array for an array argument")
    if want.size != arg.size or not np.can_cast(arg.dtype, want.dtype) or want.dtype.name not in DTYPES:
        raise _refuse(f"answer[{i}] ({want.dtype}, {want.size} elements)", f"does not match argument {i} "
                      f"({arg.dtype}, {arg.size} elements; Kernel Tuner's rule: the same size, a dtype it casts to)")
    return want


def default_config(value: Any, params: Sequence[tuple[str, tuple[Any, ...]]]) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _refuse(f"default={value!r}", "must be a dict of parameter -> value (what you run today)")
    return {str(k): _plain(v) for k, v in value.items()}  # checked against the space by the problem (one line)


def inputs(kernel_name: Any, source: Any, size: Any, arguments: Any, params: Any, *, grid: Sequence[Any],
           restrict: Any, answer: Any, atol: Any, default: Any, names: Any) -> Inputs:
    """Every argument checked, in ``tune_kernel``'s order; the first that is wrong is one ConfigError line."""
    if not isinstance(kernel_name, str) or not kernel_name.isidentifier():
        raise _refuse(f"kernel_name={kernel_name!r}", "must be the kernel function's name")
    text = kernel_text(source)
    sizes = problem_size(size)
    if not isinstance(arguments, (list, tuple)):
        raise _refuse("arguments", "must be a list of numpy arrays and numpy scalars, in the kernel's order")
    entries = [_argument(i, a) for i, a in enumerate(arguments)]
    tuned = tune_params(params)
    answers = [None] * len(entries) if answer is None else list(answer)
    if len(answers) != len(entries):
        raise _refuse(f"answer ({len(answers)} entries)", f"must have one entry per argument ({len(entries)})")
    wants = tuple(_answer(i, w, e, a) for i, (w, (e, a)) in enumerate(zip(answers, entries)))
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not atol >= 0:
        raise _refuse(f"atol={atol!r}", "must be a number >= 0")
    manifest = KernelManifest(
        kernel_name=kernel_name, kernel_file="kernel.cl", problem_size=sizes, tune_params=tuned,
        restrictions=restrictions(restrict), grid_div=tuple(grid_div(g, "xyz"[i]) for i, g in enumerate(grid)),
        block_size_names=block_size_names(names), arguments=tuple(e for e, _ in entries),
        answer=tuple(None if w is None else f"answer{i}.npy" for i, w in enumerate(wants)), atol=float(atol),
        default=default_config(default, tuned))
    arrays = {e.file: a for e, a in entries if a is not None}
    return Inputs(manifest, text, arrays, wants)
