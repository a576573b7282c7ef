"""T1, the tuning-problem input format (Kernel Tuner's ``tune_kernel_T1``), read as data: the one T1 reader.

Every door that reads a T1 file reads it here (issue 51, item 1): the OpenCL kernel adapter
(``searchlab.adapters.user._t1`` types the rest of the spec on top of this) and ``searchlab reproduce``
(which hands the parameters and restrictions to Kernel Tuner's ``tune_kernel``). What this reader does:

- the file is read through the bounded reader (:mod:`searchlab.core.files`: a regular file, at most
  ``SEARCHLAB_MAX_READ_MB``, JSON or YAML) and validated against the shipped T1 schema (Kernel Tuner 1.5's own,
  which ``tune_kernel_T1`` validates against too);
- ``TuningParameters[].Values`` are evaluated as Kernel Tuner evaluates them (Python list expressions,
  comprehensions included: ``"[2**i for i in range(0, 6)]"``), but by the safe evaluator
  (:func:`searchlab.core.expr.evaluate_values`: literals, arithmetic, ``range``, ``list``, comprehensions, bounded
  sizes; no other names, no attributes): a value text that would run code is one line, exit 2;
- ``Conditions[].Expression`` must parse as a searchlab expression over the parameters' names (Kernel Tuner
  compiles these texts itself; checking them here first means a file cannot smuggle code through them).

A parameter named twice is kept twice in :attr:`T1File.parameters`; :meth:`T1File.tune_params` gives what
Kernel Tuner makes of it (a ``dict``: the last values, in the first one's place), and each door decides whether
to accept it (``reproduce`` does, as the reference does: the hub's ``metatuning_pso.json`` names ``popsize``
twice; the kernel adapter refuses it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.core.expr import Expression, evaluate_values
from searchlab.errors import ConfigError
from searchlab.interchange._documents import load_document, resolve, validate

__all__ = ["T1File", "T1Parameter", "parameter_values", "read_t1_file"]


@dataclass(frozen=True)
class T1Parameter:
    """One tuning parameter: its name, declared type and values (exactly as Kernel Tuner's ``eval`` gives them)."""

    name: str
    kind: str  # int | uint | float | bool | string
    values: tuple[Any, ...]
    default: Any = None


@dataclass(frozen=True)
class T1File:
    path: Path
    parameters: tuple[T1Parameter, ...]
    conditions: tuple[str, ...]
    kernel: Mapping[str, Any] = field(repr=False)  # KernelSpecification, as written
    document: Mapping[str, Any] = field(repr=False, compare=False)

    def tune_params(self) -> dict[str, list[Any]]:
        """The parameters as Kernel Tuner's ``tune_kernel_T1`` builds its ``tune_params`` dict."""
        out: dict[str, list[Any]] = {}
        for p in self.parameters:
            out[p.name] = list(p.values)
        return out

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.tune_params())


def parameter_values(text: Any, name: str, where: str = "TuningParameters") -> tuple[Any, ...]:
    """A ``Values`` text evaluated safely; a refusal names the parameter, the text and the rule."""
    try:
        return evaluate_values(text)
    except ConfigError as exc:
        raise ConfigError(f"{where} {name!r} Values={str(text)[:200]!r}: {exc}") from None


def _conditions(space: Mapping[str, Any], names: set[str], shown: str) -> tuple[str, ...]:
    out: list[str] = []
    for i, cond in enumerate(space.get("Conditions") or ()):
        text = cond.get("Expression") if isinstance(cond, Mapping) else None
        if not isinstance(text, str):
            raise ConfigError(f"{shown}: Conditions[{i}].Expression must be a string, not {text!r}")
        try:
            unknown = Expression(text).names - names
        except ConfigError as exc:
            raise ConfigError(f"{shown}: Conditions[{i}]: {exc}") from None
        if unknown:
            raise ConfigError(f"{shown}: Conditions[{i}] {text!r} reads {sorted(unknown)}, which are not parameters "
                              f"(parameters: {sorted(names)})")
        out.append(text)
    return tuple(out)


def read_t1_file(path: str | Path, what: str = "T1 file", base: Path | None = None) -> T1File:
    """Read, validate and evaluate a T1 file (module docstring); every refusal is one ConfigError line."""
    resolved = resolve(path, what, base)
    shown = f"{what} {str(path)!r}"
    doc = load_document(resolved, what)
    validate(doc, "T1", shown)
    space = doc["ConfigurationSpace"]
    params = tuple(T1Parameter(str(p["Name"]), str(p["Type"]), parameter_values(p["Values"], p["Name"], shown),
                               p.get("Default")) for p in space["TuningParameters"])
    if not params:
        raise ConfigError(f"{shown}: ConfigurationSpace.TuningParameters is empty: nothing to tune")
    conditions = _conditions(space, {p.name for p in params}, shown)
    return T1File(resolved, params, conditions, doc["KernelSpecification"], doc)
