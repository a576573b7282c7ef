"""What a run read, recorded so that a resume continues the same search (issue 37, item 2).

Why: ``resume=`` used to trust that nothing changed. A Kernel Tuner table replaced under the
same path was resumed into one run holding two devices' measurements, and an edited
``problem=command`` spec ran its new command without a word. A run now records (``results.db``,
meta ``inputs``):

- ``files``: the SHA-256 of every file the problem read while it was built (the bounded reader
  notes each: :mod:`searchlab.core.files`) -- its content, not its path;
- ``prior``: the SHA-256 of each ``prior=`` file (a run directory: its ``results.db``);
- ``code``: searchlab's version;

and the run's problem fingerprint (``runs.fingerprint``: the problem's class, ``code_version``,
options -- a command spec's text among them -- and device names) is recomputed. A resume whose
inputs differ is refused in one line (exit 2) naming what changed, unless ``resume_changed=true``:
then it continues as a new session whose record names the change (meta ``session:<id>:changed``).
A run recorded before this check has no ``inputs``; only its fingerprint is compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from searchlab.core.files import digest_of
from searchlab.core.problem import Problem
from searchlab.errors import ConfigError

OVERRIDE = "resume_changed=true"


def _code_version() -> str:
    try:
        return version("searchlab")
    except PackageNotFoundError:
        return "unknown"


def run_inputs(read: Mapping[str, str], prior: Sequence[str] | None) -> dict[str, Any]:
    """The record of what a run read: files the problem read, prior files, the code version."""
    priors: dict[str, str | None] = {}
    for path in prior or ():
        p = Path(str(path)).expanduser()
        target = p / "results.db" if p.is_dir() else p
        priors[str(target.resolve())] = digest_of(target)
    return {"files": dict(sorted(read.items())), "prior": priors, "code": _code_version()}


def changed_inputs(info: Mapping[str, Any], now: Mapping[str, Any], problem: Problem) -> list[str]:
    """What differs between a recorded run (``info``: its runs row and ``inputs``) and now."""
    found: list[str] = []
    stored = info.get("inputs")
    if isinstance(stored, Mapping):
        for kind, label in (("files", "the problem reads"), ("prior", "prior=")):
            old, new = dict(stored.get(kind) or {}), dict(now.get(kind) or {})
            for path in sorted(set(old) | set(new)):
                if path not in new and kind == "files":
                    new[path] = digest_of(path)  # read through a cache this time: hash it now
                if old.get(path) != new.get(path):
                    found.append(f"{path} ({label}) {_how(old.get(path), new.get(path))}")
        if stored.get("code") and stored.get("code") != now.get("code"):
            found.append(f"searchlab {stored.get('code')} -> {now.get('code')}")
    names = [str(d.get("name", "")) for d in info.get("devices") or [] if isinstance(d, Mapping)]
    if info.get("fingerprint") and problem.fingerprint(names) != info["fingerprint"] and not found:
        found.append(f"the problem's fingerprint {info['fingerprint']} -> {problem.fingerprint(names)} (its options, "
                     f"spec or code version)")
    return found


def _how(old: str | None, new: str | None) -> str:
    if old is None:
        return "was not read by the run"
    return "is gone or unreadable" if new is None else "changed content"


def check_resume(run_dir: Path, info: Mapping[str, Any], now: Mapping[str, Any], problem: Problem,
                 accept: bool) -> str:
    """'' when nothing changed; else the change (accepted) or one ConfigError line (refused)."""
    found = changed_inputs(info, now, problem)
    if not found:
        return ""
    text = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
    if not accept:
        raise ConfigError(f"resume={run_dir}: an input changed since the run was recorded: {text}; resuming would mix "
                          f"measurements of different inputs in one run (start a new run, or {OVERRIDE} to continue "
                          f"as a new session recorded as changed)")
    return text


def check_devices(run_dir: Path, stored: str | None, problem: Problem, devices: Sequence[str], accept: bool) -> str:
    """After the workers started: the same fingerprint with the devices they report."""
    now = problem.fingerprint(devices)
    if not stored or now == stored:
        return ""
    text = f"the devices {sorted(set(devices))} give fingerprint {now}, not the run's {stored}"
    if not accept:
        raise ConfigError(f"resume={run_dir}: {text}: the run was measured elsewhere (start a new run, or {OVERRIDE})")
    return text
