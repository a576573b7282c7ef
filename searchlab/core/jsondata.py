"""The one JSON decoder for records and files: data nested at most :data:`MAX_DEPTH` levels (issue 47, item 9).

Why: a record column holding ``'['*100000 + ']'*100000`` made ``json.loads`` raise RecursionError, which no
reader caught (export, resume, study, ``prior=``, ``export t4`` of such a file all ended in a traceback), and
a value decoded just under the interpreter's limit would raise it later, in whatever walks it (freezing a
configuration, ``json.dumps``). Here decoding refuses both: the error is :class:`TooDeep`, a ``ValueError``,
so every reader that already turns a bad JSON value into one line (``StoreError``, ``ConfigError``) does the
same for this one. Real records nest a few levels (a configuration's list values, a measurement's datasets).
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200


class TooDeep(ValueError):
    """JSON nested more than :data:`MAX_DEPTH` levels."""


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads``, refusing data nested more than :data:`MAX_DEPTH` levels with :class:`TooDeep`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep: refused as data") from None
    if _openers(text) > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep: refused as data")
    return value


def _openers(text: str | bytes | bytearray) -> int:
    """An upper bound on the nesting (C speed), so flat documents skip the walk."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of decoded JSON, walked without recursion; stops once past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
