"""The field's interchange formats: T1 (tuning-problem input), T4 (tuning results) and
Kernel Tuner cache files (docs/byo.md); :func:`open_table` is the one door that decides which
format a file is and reads it.

The T1 and T4 JSON schemas ship in ``schemas/`` (:mod:`._documents`: :func:`validate`, :func:`load_document`,
:func:`read_json`, :func:`resolve`); the formats' readers and writers are :mod:`.t4`, :mod:`.kt_cache` and
:mod:`.table`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from searchlab.interchange._documents import (
    SCHEMA_DIR,
    SCHEMA_FILES,
    T4_VERSION,
    load_document,
    read_json,
    resolve,
    schema,
    validate,
)

__all__ = ["SCHEMA_DIR", "SCHEMA_FILES", "T4_VERSION", "load_document", "open_table", "read_json", "resolve",
           "schema", "validate"]


def open_table(path: str | Path, where: str = "table", **options: Any) -> Any:
    """The table in ``path``, whatever its format: the one door (:mod:`searchlab.interchange._open`)."""
    from searchlab.interchange._open import open_table as _open_table

    return _open_table(path, where, **options)
