"""How a study file names a problem or a searcher: ``"NAME"`` or a list of overrides.

Analysis reads it (a tuned table pairs a tuned label with its default by the same overrides) as
much as execution does (composing the grid), so the one reading lives here, below both."""

from __future__ import annotations

from typing import Any

from searchlab.errors import ConfigError


def overrides_of(value: Any, group: str, label: str) -> list[str]:
    """``"NAME"`` -> ``[group=NAME]``; a list of overrides as is."""
    if isinstance(value, str):
        return [value if "=" in value else f"{group}={value}"]
    try:
        items = [str(v) for v in value]
    except TypeError:
        raise ConfigError(f"study.{group}s.{label}={value!r}: give a name or a list of overrides") from None
    if not any(i.split("=", 1)[0].lstrip("+~") == group for i in items):
        raise ConfigError(f"study.{group}s.{label}={items}: the overrides must choose a {group} ({group}=NAME)")
    return items
