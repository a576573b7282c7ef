"""Initial data and correct outputs of a T1 kernel (the ``Arguments`` and ``ReferenceArguments``).

Initial data (made once per worker, reproducibly): ``Constant`` (``FillValue``; zeros are
``FillValue: 0``), ``Random`` (seeded by ``RandomSeed``, default 0: standard normal for
floats as Kernel Tuner's ``numpy.random.randn``, integers uniform in [0, 128)),
``Generator`` (a safe array expression of ``i``, the element index), ``BinaryRaw`` (a
``.npy`` file, read without pickle, or raw bytes of the argument's type).

Correctness (KTT's validation methods, which T1 names): ``AbsoluteDifference``: the sum
of |got - want| is at most the threshold; ``SideBySideComparison``: every |got - want| is;
``SideBySideRelativeComparison``: every |got - want| <= threshold * |want|. NaN never passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.adapters.user._formulas import evaluate_int
from searchlab.adapters.user._t1 import Argument, Check, KernelSpec
from searchlab.core.expr import MAX_ELEMENTS, ArrayExpression
from searchlab.core.mismatch import number, wrong_output
from searchlab.errors import ConfigError


def vector_size(arg: Argument, spec: KernelSpec, knobs: Mapping[str, tuple[Any, ...]]) -> int:
    """Elements of a Vector argument: ``Size`` with each parameter standing for its values (Kernel Tuner)."""
    assert arg.size is not None
    size = evaluate_int(arg.size, {**spec.size_env(), **knobs}, f"Arguments {arg.name} Size")
    if size > MAX_ELEMENTS:
        raise ConfigError(f"Arguments {arg.name} Size={arg.size.text!r} gives {size} elements: more than {MAX_ELEMENTS}")
    return size


def shape_of(arg: Argument, spec: KernelSpec, size: int) -> tuple[int, ...]:
    if not arg.shape:
        return (size,)
    shape = tuple(evaluate_int(s, spec.size_env(), f"Searchlab.Arguments.{arg.name}.Shape") for s in arg.shape)
    if int(np.prod(shape)) != size:
        raise ConfigError(f"Searchlab.Arguments.{arg.name}.Shape={[s.text for s in arg.shape]} gives {shape}, "
                          f"not Size={size} elements")
    return shape


def _from_file(path: str, dtype: np.dtype[Any], size: int, what: str) -> np.ndarray:
    import io

    from searchlab.core import files

    raw = files.read_bytes(path, f"{what} DataSource")  # bounded, regular files only (issue 37, item 3)
    try:
        data = np.load(io.BytesIO(raw), allow_pickle=False) if path.endswith(".npy") else np.frombuffer(raw, dtype=dtype).copy()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{what} DataSource={path!r} is not readable: {exc}") from None
    if data.size != size:
        raise ConfigError(f"{what} DataSource={path!r} holds {data.size} elements, Size says {size}")
    return np.ascontiguousarray(data.reshape(-1), dtype=dtype)


def fill(arg: Argument, size: int) -> np.ndarray:
    """The initial data of a Vector argument (flat, in the argument's type)."""
    dtype = np.dtype(arg.dtype)
    what = f"Arguments {arg.name}"
    if arg.fill == "Constant":
        return np.full(size, arg.value, dtype=dtype)
    if arg.fill == "Random":
        rng = np.random.default_rng(arg.seed)
        if dtype.kind == "f":
            return rng.standard_normal(size).astype(dtype)
        return rng.integers(0, 128, size).astype(dtype)
    if arg.fill == "Generator":
        values = ArrayExpression(arg.source)({"i": np.arange(size)})
        return np.ascontiguousarray(np.broadcast_to(values, (size,)), dtype=dtype)
    return _from_file(arg.source, dtype, size, what)


def scalar(arg: Argument) -> Any:
    if arg.fill != "Constant":
        raise ConfigError(f"Arguments {arg.name}: a Scalar argument takes FillType Constant and FillValue")
    return np.dtype(arg.dtype).type(arg.value)


def expected(check: Check, arrays: Mapping[str, np.ndarray], shapes: Mapping[str, tuple[int, ...]],
             env: Mapping[str, Any]) -> np.ndarray:
    """The correct content of ``check.target`` (flat), from a constant, a file or an expression."""
    size = arrays[check.target].size
    dtype = np.dtype(np.float64)
    what = f"ReferenceArguments {check.target}"
    if check.fill == "Constant":
        return np.full(size, check.value, dtype=dtype)
    if check.fill == "BinaryRaw":
        return _from_file(check.source, arrays[check.target].dtype, size, what).astype(dtype)
    inputs = {name: a.reshape(shapes[name]) for name, a in arrays.items()}
    value = ArrayExpression(check.source)({**env, **inputs})
    if value.size != size:
        raise ConfigError(f"{what} DataSource={check.source!r} gives {value.size} values, the argument holds {size}")
    return value.reshape(-1).astype(dtype)


def compare(got: np.ndarray, want: np.ndarray, method: str, threshold: float) -> str | None:
    """None when ``got`` passes, else why not (one line)."""
    got64, want64 = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
    diff = np.abs(got64 - want64)
    if method == "AbsoluteDifference":
        total = float(np.sum(diff))
        ok = bool(np.isfinite(total) and total <= threshold)
        return None if ok else f"wrong output: sum of absolute differences {number(total)}, want at most {threshold:g}"
    bound = threshold * np.abs(want64) if method == "SideBySideRelativeComparison" else threshold
    bad = ~(diff <= bound)  # NaN fails
    if not bad.any():
        return None
    rule = f"{threshold:g} x |want|" if method == "SideBySideRelativeComparison" else f"{threshold:g}"
    return wrong_output(got64, want64, bad, rule)
