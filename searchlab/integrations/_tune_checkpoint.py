"""The Ray Tune searcher's checkpoint: versioned JSON, plain data, never unpickled (issue 47, item 1).

Why: ``restore`` called ``pickle.load`` on the checkpoint file, so a tampered checkpoint ran code (the probe wrote
``/tmp/pwned``). The state is plain data (settings, the space's parameters, every told configuration and outcome),
so it is JSON. Reading is bounded (``searchlab.core.files.read_json``); anything that is not this format at this
version (a pickle from an older searchlab, bad bytes, a wrong field) is one ``ConfigError`` and nothing of it is
used. The searcher named must be a registered one (or the class the restoring Searcher was built with, by name).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.core.records import FailureMode
from searchlab.errors import ConfigError
from searchlab.integrations._driver import Outcome

FORMAT, VERSION = "searchlab-tune-searcher", 1
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "searcher": str, "seed": int, "options": dict, "metric": (str, type(None)), "mode": (str, type(None)),
    "space": (dict, type(None)), "max_concurrent": (int, type(None)), "float_grid": int, "told": list}


def outcome_data(outcome: Outcome) -> dict[str, Any]:
    return {"value": outcome.value, "failure": outcome.failure.value, "message": outcome.message}


def write(path: str, state: Mapping[str, Any]) -> None:
    """``state`` as JSON, atomically (a temporary file in the same directory, then a rename)."""
    text = json.dumps({"format": FORMAT, "version": VERSION, **state}, allow_nan=False, default=_refuse)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _refuse(value: Any) -> Any:
    raise ConfigError(f"searcher state holds {type(value).__name__} {value!r:.80}, which a JSON checkpoint cannot keep "
                      "(searcher options must be plain data)")


def read(path: str) -> dict[str, Any]:
    """The checked state of a checkpoint, or one ConfigError saying why it is refused."""
    from searchlab.core import files

    what = "Ray Tune searcher checkpoint"
    try:
        data = files.read_json(path, what)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (a {FORMAT} checkpoint is JSON, version {VERSION}; older pickled "
                          "checkpoints are refused, never unpickled)") from None
    def bad(why: str) -> ConfigError:
        return ConfigError(f"{what} {path!r} refused: {why} (expected {FORMAT} version {VERSION})")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad("not a searchlab Tune searcher checkpoint")
    if data.get("version") != VERSION:
        raise bad(f"version {data.get('version')!r}")
    for key, kinds in _FIELDS.items():
        if key not in data or not isinstance(data[key], kinds) or isinstance(data[key], bool):
            raise bad(f"field {key!r} is missing or not {kinds}")
    data["told"] = [_told(entry, bad) for entry in data["told"]]
    return data


def _told(entry: Any, bad: Any) -> tuple[dict[str, Any], Outcome]:
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], dict) and isinstance(entry[1], dict)):
        raise bad(f"a told entry {entry!r:.80} is not [config, outcome]")
    config, out = entry
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in config.values()):
        raise bad(f"a told configuration {config!r:.80} holds a non-number")
    value = out.get("value")
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value)):
        raise bad(f"a told value {value!r:.80} is not a finite number or null")
    try:
        failure = FailureMode(out.get("failure", "none"))
    except ValueError:
        raise bad(f"a told failure mode {out.get('failure')!r:.80} is unknown") from None
    return config, Outcome(None if value is None else float(value), failure, str(out.get("message", ""))[:500])
