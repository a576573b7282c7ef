"""Datasets from a Futhark program's ``-- ==`` test stanzas (the format of ``futhark test``/``bench``).

Supported per case: ``input { literal }``, ``input @ file``, ``[compiled] random input { [n]t ... }``,
``output { literal }``, ``output @ file``, ``auto output``, and ``entry:``. Futhark 0.25 reads
``tags { ... }`` once per *program* (the first block; a later block's ``tags`` is a parse
error), so the tuning/validation split (paper 003 Listing 4.1) cannot be expressed with
tags: the problem's ``validation`` option names the validation datasets instead, and
every other case is a training case. A program tagged ``nobench``/``disable`` has no cases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

_BLOCK = re.compile(r"\{(.*?)\}", re.S)


@dataclass(frozen=True)
class Case:
    """One dataset of a test stanza."""

    name: str
    entry: str
    train: bool
    input_file: str | None = None  # `input @ file` (relative to the program)
    input_text: str | None = None  # `input { ... }`
    random_types: tuple[str, ...] = ()  # `random input { ... }`
    output_file: str | None = None
    output_text: str | None = None
    auto_output: bool = False

    @property
    def expects(self) -> bool:
        return self.auto_output or self.output_file is not None or self.output_text is not None


def _stanzas(source: str) -> list[str]:
    """Comment text after each ``-- ==`` line, up to the first non-comment line."""
    out: list[str] = []
    current: list[str] | None = None
    for line in source.splitlines():
        stripped = line.strip()
        if current is None:
            if stripped.startswith("--") and stripped[2:].strip() == "==":
                current = []
            continue
        if not stripped.startswith("--"):
            out.append("\n".join(current))
            current = None
            continue
        text = stripped[2:]
        if text.strip() == "==":
            out.append("\n".join(current))
            current = []
        else:
            current.append(text)
    if current is not None:
        out.append("\n".join(current))
    return out


def _take_block(text: str, pos: int) -> tuple[str, int]:
    m = _BLOCK.match(text, pos)
    if m is None:
        raise ConfigError(f"test stanza: expected {{...}} at {text[pos:pos + 30]!r}")
    return m.group(1).strip(), m.end()


def parse_cases(source: str, program: str, validation: tuple[str, ...] = ()) -> list[Case]:
    """Every benchmark case of every stanza, in program order; ``validation``: names of the
    validation cases (train=False)."""
    cases: list[Case] = []
    for index, stanza in enumerate(_stanzas(source)):
        entry_m = re.search(r"^\s*entry:\s*(.+)$", stanza, re.M)
        entries = entry_m.group(1).split() if entry_m else ["main"]
        tags_m = re.search(r"tags\s*\{([^}]*)\}", stanza)
        tags = set(tags_m.group(1).split()) if tags_m else set()
        if tags & {"nobench", "disable"}:
            continue
        body = re.sub(r"^\s*entry:.*$", "", stanza, flags=re.M)
        body = re.sub(r"tags\s*\{[^}]*\}", "", body)
        cases.extend(_cases(body, entries[0], True, program, index))
    if not cases:
        raise ConfigError(f"problem.program={program}: no `-- ==` test stanza with an input")
    names = [c.name for c in cases]
    unknown = [v for v in validation if v not in names]
    if unknown:
        raise ConfigError(f"problem.validation={list(validation)}: no datasets {unknown}; the program has {names}")
    out = [replace(c, train=c.name not in validation) for c in cases]
    if not any(c.train for c in out):
        raise ConfigError(f"problem.validation={list(validation)}: leaves no training dataset")
    return out


def _cases(body: str, entry: str, train: bool, program: str, stanza: int) -> list[Case]:
    found: list[dict[str, Any]] = []
    pos = 0
    token = re.compile(r"\s*(compiled\s+|nobench\s+|script\s+)*(random\s+input|input|output|auto\s+output|error:)")
    while pos < len(body):
        if not body[pos:].strip():
            break
        m = token.match(body, pos)
        if m is None:
            raise ConfigError(f"problem.program={program}: cannot read test stanza at {body[pos:pos + 40].strip()!r}")
        kind, pos = " ".join(m.group(2).split()), m.end()
        if kind == "error:":
            raise ConfigError(f"problem.program={program}: a case expecting an error cannot be benchmarked")
        if kind == "auto output":
            found[-1]["auto_output"] = True
            continue
        at = re.match(r"\s*@\s*(\S+)", body[pos:])
        if at is not None:
            value, pos, key = at.group(1), pos + at.end(), "file"
        else:
            value, pos = _take_block(body, len(body) - len(body[pos:].lstrip()))
            key = "types" if kind == "random input" else "text"
        if kind == "output":
            if not found:
                raise ConfigError(f"problem.program={program}: `output` before any input")
            found[-1]["output_" + key] = value
        else:
            found.append({"kind": kind, key: value})
    cases = []
    for i, f in enumerate(found):
        if f["kind"] == "random input":
            types = tuple(re.findall(r"(?:\[[^\]]*\])*[a-z]+[0-9]*", str(f["types"])))
            name = " ".join(types)
        elif "file" in f:
            name = str(f["file"])
        else:
            name = f"#{stanza}.{i}"
        cases.append(Case(name=name, entry=entry, train=train,
                          input_file=f.get("file"), input_text=f.get("text"),
                          random_types=types if f["kind"] == "random input" else (),
                          output_file=f.get("output_file"), output_text=f.get("output_text"),
                          auto_output=bool(f.get("auto_output"))))
    return cases


def resolve(program: Path, relative: str) -> Path:
    path = (program.parent / relative).resolve()
    if not path.exists():
        raise ConfigError(f"problem.program={program}: data file {relative} does not exist")
    return path
