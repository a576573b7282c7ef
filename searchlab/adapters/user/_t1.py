"""T1 ("TuningSchema", the kernel-tuner benchmarking suite's input format) read as data.

:func:`read_t1` validates a JSON or YAML file against the T1 schema and turns it into a
typed, frozen :class:`KernelSpec`. Kernel Tuner 1.5's reader (``tune_kernel_T1``) ``eval``s
the parameter values, sizes and restrictions; here every expression string is parsed by
:mod:`searchlab.core.expr` (scalars) or :mod:`searchlab.core.expr` (reference outputs):
a spec is data. Semantics follow Kernel Tuner where it has them (docs/byo.md lists each):

- ``KernelSpecification.ProblemSize`` (Kernel Tuner's key; not in the schema): an int or
  a list; formulas read ``ProblemSize[i]`` (and ``ProblemSize`` when it is one int).
- ``TuningParameters[].Values``: what Kernel Tuner's ``eval`` accepts of list expressions (literals,
  arithmetic, ``range``, ``list``, comprehensions), read by the one T1 reader
  (:mod:`searchlab.interchange.t1`) and cast to the declared ``Type``; parameters are passed to
  the kernel as ``#define NAME VALUE`` lines, as Kernel Tuner does.
- ``Conditions[].Expression``: restrictions over the parameters (known constraints).
- ``Arguments[].Size``: a formula of ProblemSize where a parameter name stands for the list
  of its values (Kernel Tuner's ``max(filter_width)``); ``GlobalSize``/``LocalSize``:
  formulas of the parameters (per configuration). ``GlobalSizeType: CUDA`` counts blocks.

What T1 leaves open sits under the top-level key ``Searchlab`` (see :class:`Extras`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.adapters.user._formulas import cast_values, evaluate_int, formula
from searchlab.core.expr import ArrayExpression, Expression
from searchlab.errors import ConfigError
from searchlab.interchange import resolve
from searchlab.interchange.t1 import read_t1_file

DTYPES = {"int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
          "uint32": "uint32", "int64": "int64", "uint64": "uint64", "half": "float16", "float": "float32",
          "double": "float64"}
FILLS = ("Constant", "Random", "Generator", "BinaryRaw")
METHODS = ("AbsoluteDifference", "SideBySideComparison", "SideBySideRelativeComparison")
EXTRA_KEYS = {"Arguments", "Defines", "ReferenceKernel", "Measurement", "Limits", "Default"}


@dataclass(frozen=True)
class Argument:
    """One kernel argument and its initial data."""

    name: str
    dtype: str  # numpy dtype name
    memory: str  # Vector | Scalar | Local
    size: Expression | None  # elements (Vector: formula of ProblemSize; Local: of the parameters)
    shape: tuple[Expression, ...]  # Searchlab.Arguments.<name>.Shape (reference expressions see this shape)
    fill: str  # Constant | Random | Generator | BinaryRaw
    value: float = 0.0
    source: str = ""  # a file (BinaryRaw: raw bytes or .npy) or a Generator expression of i
    seed: int = 0
    access: str = "ReadWrite"

    @property
    def is_output(self) -> bool:
        return self.memory == "Vector" and self.access in ("WriteOnly", "ReadWrite")


@dataclass(frozen=True)
class Check:
    """What an output argument must hold after a launch (T1 ``ReferenceArguments``)."""

    target: str
    fill: str  # Constant | BinaryRaw (file) | Generator (array expression) | Kernel (Searchlab.ReferenceKernel)
    value: float = 0.0
    source: str = ""
    method: str = "SideBySideComparison"
    threshold: float = 1e-3


@dataclass(frozen=True)
class ReferenceKernel:
    file: Path
    name: str
    global_size: tuple[Expression, ...]
    local_size: tuple[Expression, ...]
    defines: Mapping[str, Expression] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelSpec:
    path: Path
    kernel_file: Path
    kernel_name: str
    problem_size: tuple[int, ...]
    params: tuple[tuple[str, tuple[Any, ...]], ...]
    conditions: tuple[str, ...]
    global_size: tuple[Expression, ...]
    local_size: tuple[Expression, ...]
    cuda_grid: bool
    arguments: tuple[Argument, ...]
    checks: tuple[Check, ...]
    defines: Mapping[str, Expression]
    reference: ReferenceKernel | None
    measurement: Mapping[str, Any]
    limits: Mapping[str, float]
    default: Mapping[str, Any] | None = None  # Searchlab.Default: parameter -> value (checked by the problem)

    def size_env(self) -> dict[str, Any]:
        """Names a ProblemSize formula may read."""
        env: dict[str, Any] = {f"ProblemSize_{i}": n for i, n in enumerate(self.problem_size)}
        env["ProblemSize"] = self.problem_size[0] if len(self.problem_size) == 1 else self.problem_size
        return env


def _sizes(block: Mapping[str, Any], what: str) -> tuple[Expression, ...]:
    return tuple(formula(block[d], f"{what}.{d}") for d in ("X", "Y", "Z") if d in block)


def _problem_size(kernel: Mapping[str, Any]) -> tuple[int, ...]:
    raw = kernel.get("ProblemSize", [1])
    items = raw if isinstance(raw, list) else [raw]
    sizes = tuple(evaluate_int(formula(v, "ProblemSize"), {}, "KernelSpecification.ProblemSize") for v in items)
    if not sizes:
        raise ConfigError("KernelSpecification.ProblemSize: must not be empty")
    return sizes


def _argument(raw: Mapping[str, Any], i: int, extras: Mapping[str, Any], base: Path) -> Argument:
    name = str(raw.get("Name", f"arg{i}"))
    what = f"Arguments[{i}] ({name})"
    if raw["Type"] not in DTYPES:
        raise ConfigError(f"{what}: Type={raw['Type']!r} is not supported (supported: {sorted(DTYPES)})")
    memory = raw["MemoryType"]
    if memory not in ("Vector", "Scalar", "Local"):
        raise ConfigError(f"{what}: MemoryType={memory!r} is not supported (Vector, Scalar, Local)")
    fill = str(raw.get("FillType", "Constant"))
    if fill not in FILLS:
        raise ConfigError(f"{what}: FillType={fill!r} is not supported ({', '.join(FILLS)}; Script runs code and is refused)")
    if memory != "Scalar" and "Size" not in raw:
        raise ConfigError(f"{what}: a {memory} argument needs Size")
    extra = dict(extras.get(name) or {})
    shape = tuple(formula(s, f"Searchlab.Arguments.{name}.Shape") for s in extra.get("Shape", ()))
    source = str(raw.get("DataSource", ""))
    if fill == "BinaryRaw":
        source = str(resolve(source, f"{what} DataSource", base))
    elif fill == "Generator":
        ArrayExpression(source)  # parsed here; evaluated over i = 0..Size-1
    return Argument(name, DTYPES[raw["Type"]], memory, formula(raw["Size"], f"{what} Size") if "Size" in raw else None,
                    shape, fill, float(raw.get("FillValue", 0.0)), source, int(raw.get("RandomSeed", 0)),
                    str(raw.get("AccessType", "ReadWrite")))


def _check(raw: Mapping[str, Any], i: int, base: Path) -> Check:
    what = f"ReferenceArguments[{i}] ({raw['Name']})"
    fill = raw["FillType"]
    if fill == "Generator":
        ArrayExpression(str(raw.get("DataSource", "")))  # parsed here, evaluated once per worker
    if fill not in ("Constant", "BinaryRaw", "Generator"):
        raise ConfigError(f"{what}: FillType={fill!r} cannot give a reference (Constant, BinaryRaw, Generator)")
    source = str(raw.get("DataSource", ""))
    if fill == "BinaryRaw":
        source = str(resolve(source, f"{what} DataSource", base))
    method = str(raw.get("ValidationMethod", "SideBySideComparison"))
    threshold = float(raw.get("ValidationThreshold", 1e-3))
    if threshold < 0:
        raise ConfigError(f"{what}: ValidationThreshold={threshold} must be >= 0")
    return Check(str(raw["TargetName"]), fill, float(raw.get("FillValue", 0.0)), source, method, threshold)


def _reference_kernel(raw: Mapping[str, Any] | None, base: Path,
                      default_outputs: list[str]) -> tuple[ReferenceKernel | None, tuple[Check, ...]]:
    if not raw:
        return None, ()
    for key in ("KernelFile", "KernelName", "GlobalSize", "LocalSize"):
        if key not in raw:
            raise ConfigError(f"Searchlab.ReferenceKernel: needs {key}")
    ref = ReferenceKernel(resolve(raw["KernelFile"], "Searchlab.ReferenceKernel.KernelFile", base), str(raw["KernelName"]),
                          _sizes(raw["GlobalSize"], "ReferenceKernel.GlobalSize"),
                          _sizes(raw["LocalSize"], "ReferenceKernel.LocalSize"),
                          {str(k): formula(v, f"ReferenceKernel.Defines.{k}") for k, v in (raw.get("Defines") or {}).items()})
    method = str(raw.get("ValidationMethod", "SideBySideComparison"))
    if method not in METHODS:
        raise ConfigError(f"Searchlab.ReferenceKernel.ValidationMethod={method!r}: must be one of {list(METHODS)}")
    outputs = raw.get("Outputs", default_outputs)
    if not isinstance(outputs, list) or not outputs:
        raise ConfigError(f"Searchlab.ReferenceKernel.Outputs={outputs!r}: must be a non-empty list of argument names")
    checks = tuple(Check(str(t), "Kernel", method=method, threshold=float(raw.get("ValidationThreshold", 1e-3)))
                   for t in outputs)
    return ref, checks


def _defines(kernel: Mapping[str, Any], extras: Mapping[str, Any]) -> dict[str, Expression]:
    defines = {str(k): formula(v, f"Searchlab.Defines.{k}") for k, v in (extras.get("Defines") or {}).items()}
    for option in kernel.get("CompilerOptions") or ():
        match = re.fullmatch(r"-D\s*(\w+)(?:=(.+))?", option.strip())
        if not match:
            raise ConfigError(f"CompilerOptions: {option!r} is not supported (only -DNAME[=VALUE]; see docs/byo.md)")
        defines[match.group(1)] = formula(match.group(2) or "1", f"CompilerOptions {option}")
    return defines


def read_t1(path: str | Path) -> KernelSpec:
    """Read, validate and type a T1 spec; every error is one ConfigError line."""
    t1 = read_t1_file(path, "problem.spec")  # bounded read, T1 schema, values evaluated safely
    doc = t1.document
    spec_path = t1.path
    base = spec_path.parent
    extras = doc.get("Searchlab") or {}
    if not isinstance(extras, dict) or set(extras) - EXTRA_KEYS:
        raise ConfigError(f"Searchlab: unknown keys {sorted(set(extras) - EXTRA_KEYS) if isinstance(extras, dict) else extras!r}"
                          f" (known: {sorted(EXTRA_KEYS)})")
    for key, value in extras.items():
        nested = value.values() if key == "Arguments" and isinstance(value, dict) else ()
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in nested):
            raise ConfigError(f"Searchlab.{key}: must be a mapping" + (" of argument name -> mapping" if nested else ""))
    kernel = doc["KernelSpecification"]
    if kernel["Language"] != "OpenCL":
        raise ConfigError(f"KernelSpecification.Language={kernel['Language']!r}: only OpenCL kernels run here")
    texts = [str(p["Values"]) for p in doc["ConfigurationSpace"]["TuningParameters"]]
    params = tuple((p.name, cast_values(p.values, p.kind, p.name, text)) for p, text in zip(t1.parameters, texts))
    if len({n for n, _ in params}) != len(params):
        raise ConfigError("TuningParameters: names must be distinct")
    arguments = tuple(_argument(a, i, extras.get("Arguments") or {}, base) for i, a in enumerate(kernel.get("Arguments") or ()))
    names = [a.name for a in arguments]
    if len(set(names)) != len(names):
        raise ConfigError(f"Arguments: names must be distinct, got {names}")
    unknown = set(extras.get("Arguments") or {}) - set(names)
    if unknown:
        raise ConfigError(f"Searchlab.Arguments: {sorted(unknown)} are not arguments (arguments: {names})")
    outputs = {a.name for a in arguments if a.is_output}
    reference, kernel_checks = _reference_kernel(extras.get("ReferenceKernel"), base, sorted(outputs))
    checks = tuple(_check(r, i, base) for i, r in enumerate(kernel.get("ReferenceArguments") or ())) + kernel_checks
    for c in checks:
        if c.target not in outputs:
            raise ConfigError(f"reference for {c.target!r}: not a Vector argument with AccessType WriteOnly/ReadWrite "
                              f"(outputs: {sorted(outputs)})")
    return KernelSpec(
        path=spec_path, kernel_file=resolve(kernel["KernelFile"], "KernelSpecification.KernelFile", base),
        kernel_name=str(kernel["KernelName"]), problem_size=_problem_size(kernel), params=params,
        conditions=t1.conditions,
        global_size=_sizes(kernel["GlobalSize"], "GlobalSize"), local_size=_sizes(kernel["LocalSize"], "LocalSize"),
        cuda_grid=kernel.get("GlobalSizeType") == "CUDA", arguments=arguments, checks=checks,
        defines=_defines(kernel, extras), reference=reference, measurement=dict(extras.get("Measurement") or {}),
        limits=dict(extras.get("Limits") or {}), default=extras.get("Default"),
    )


def check_names(spec: KernelSpec, knobs: Sequence[str]) -> None:
    """Every formula reads only names it may: parameters, ProblemSize, and (sizes) nothing else."""
    size_names = set(spec.size_env()) | set(knobs)
    launch_names = size_names | set(spec.defines)
    checks = [("GlobalSize", spec.global_size, launch_names), ("LocalSize", spec.local_size, launch_names)]
    checks += [(f"Arguments {a.name} Size", (a.size,) if a.size else (), size_names) for a in spec.arguments]
    for what, exprs, allowed in checks:
        for e in exprs:
            unknown = e.names - allowed
            if unknown:
                raise ConfigError(f"{what}={e.text!r}: unknown names {sorted(unknown)} (known: {sorted(allowed)})")
    arrays = {a.name for a in spec.arguments if a.memory == "Vector"} | set(spec.size_env())
    sources = [(f"ReferenceArguments {c.target} DataSource", c.source, arrays) for c in spec.checks if c.fill == "Generator"]
    sources += [(f"Arguments {a.name} DataSource", a.source, {"i"}) for a in spec.arguments if a.fill == "Generator"]
    for what, text, known in sources:
        unknown = ArrayExpression(text).names - known
        if unknown:
            raise ConfigError(f"{what}={text!r}: unknown names {sorted(unknown)} (known: {sorted(known)})")
