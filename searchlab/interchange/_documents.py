"""Reading the field's interchange documents (the package's lowest part; :mod:`searchlab.interchange` re-exports it).

The field's interchange formats: T1 (tuning-problem input), T4 (tuning results) and
Kernel Tuner cache files (docs/byo.md); :func:`open_table` is the one door that decides which
format a file is and reads it.

The T1 and T4 JSON schemas ship in ``schemas/`` (copied unchanged from Kernel Tuner 1.5.0,
Apache-2.0; ``schemas/NOTICE``). :func:`validate` checks a document against one of them and
reports the first violation as one :class:`~searchlab.errors.ConfigError` line.
:func:`load_document` reads a user's JSON or YAML file as *data* (``json``,
``yaml.safe_load``; never executed).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from searchlab.core import files, jsondata
from searchlab.errors import ConfigError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SCHEMA_FILES = {
    "T1": "T1-input-1.0.0.json",
    "T4": "T4-results-1.0.0.json",
    "T4-metadata": "T4-metadata-1.0.0.json",
}
T4_VERSION = "1.0.0"


@cache
def schema(name: str) -> dict[str, Any]:
    """One of the shipped schemas: ``T1``, ``T4`` (results) or ``T4-metadata``."""
    data: dict[str, Any] = json.loads((SCHEMA_DIR / SCHEMA_FILES[name]).read_text())
    return data


def validate(data: Any, name: str, what: str) -> None:
    """Validate ``data`` against schema ``name``; the first violation as one line."""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema(name))(schema(name))
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{what}: not a valid {name} document at {where}: {err.message[:200]}")


def resolve(path: str | Path, what: str, base: Path | None = None) -> Path:
    """An existing file: ``path`` as given (absolute, or relative to the current directory),
    else relative to ``base`` (the directory of the spec that names it)."""
    p = Path(str(path)).expanduser()
    for candidate in ([p] if p.is_absolute() else [*([base / p] if base else []), p]):
        if candidate.is_file():
            return candidate.resolve()
        if candidate.exists():  # a directory, a device (/dev/zero), a FIFO: refused, never read
            files.regular_file(candidate, what)
    raise ConfigError(f"{what}={str(path)!r}: no such file" + (f" (looked in {base} and the current directory)" if base else ""))


def read_json(path: str | Path, what: str) -> Any:
    """The JSON in ``path`` (``.gz``: gzipped), read through the bounded reader
    (:mod:`searchlab.core.files`); a missing, unreadable or oversized file is one ConfigError
    naming ``what`` (e.g. "table file")."""
    return files.read_json(path, what)


def load_document(path: str | Path, what: str) -> dict[str, Any]:
    """A JSON (``.json``, ``.json.gz``) or YAML (``.yaml``, ``.yml``) mapping (bounded reads,
    YAML without alias expansion: :mod:`searchlab.core.files`)."""
    p = resolve(path, what)
    text = files.read_text(p, what)
    name = f"{what}={str(path)!r}"
    if p.suffix in (".yaml", ".yml"):
        data = files.load_yaml(text, name)
    else:
        try:
            data = jsondata.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{name} is not readable JSON/YAML: {str(exc).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: must hold a mapping at the top level, not {type(data).__name__}")
    return data
