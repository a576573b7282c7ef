"""How to spell a command that works when pasted into a fresh shell (issue 46, item 1; issue 47, case 6).

Every command searchlab prints -- the resume line after Ctrl-C, the study pointer at the end of a
sweep, the "next step" of an error -- is built here, so there is one rule:

- the program is the running interpreter (``sys.executable -m searchlab``), or the ``searchlab``
  console script when the one on ``PATH`` belongs to this interpreter: a bare ``python`` may be a
  Python without our dependencies (``make demo`` never activates ``.venv``). Not under ``make``
  (``MAKELEVEL`` set): the Makefile puts ``.venv/bin`` on *its* ``PATH``, not on the user's shell's, so
  a ``searchlab`` printed there was ``command not found`` when pasted (the newcomer walk,
  bench/walk.py);
- a value is quoted for Hydra's override grammar when it holds anything outside the unquoted
  characters (a sweep job's directory holds ``=`` and ``,``: ``resume=/s/0_seed=1,x`` is a parse
  error), and every word is quoted for the shell (``shlex.quote``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

# characters Hydra reads unquoted as one string (its OverrideLexer: ID and UNQUOTED_CHAR, less '$' and '\\')
_PLAIN = re.compile(r"[A-Za-z0-9_/.\-+%@]+")


def program(module: str = "searchlab") -> list[str]:
    """The words that start ``python -m module`` with this interpreter (or the console script)."""
    if module == "searchlab" and not os.environ.get("MAKELEVEL"):
        found = shutil.which("searchlab")
        if found and _ours(found):
            return ["searchlab"]
    return [sys.executable or "python3", "-m", module]


def _ours(script: str) -> bool:
    """Whether the console script ``script`` runs this interpreter (its ``#!`` names our bin directory)."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096).decode("utf-8", "replace")
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    words = first[2:].split()
    if not words:
        return False
    return os.path.realpath(os.path.dirname(words[0])) == os.path.realpath(os.path.dirname(sys.executable))


def hydra_value(value: str | Path) -> str:
    """``value`` as Hydra's grammar reads it back unchanged: plain when it is a path of plain characters,
    else double-quoted (a backslash run before a quote doubled, the quote escaped, ``${`` escaped so OmegaConf
    does not interpolate it)."""
    text = str(value)
    if _PLAIN.fullmatch(text) and "/" in text:
        return text
    text = text.replace("${", "\\${")
    text = re.sub(r'(\\+)(?="|$)', lambda m: m.group(1) * 2, text)
    return '"' + text.replace('"', '\\"') + '"'


def override(key: str, value: str | Path) -> str:
    """``key=value`` as one override (Hydra-quoted; shell-quote it with :func:`command`)."""
    return f"{key}={hydra_value(value)}"


def command(module: str, *args: str | Path) -> str:
    """The whole command line, each word shell-quoted: ``command("searchlab", override("resume", d))``."""
    return " ".join(shlex.quote(str(word)) for word in [*program(module), *args])


def spelled(module: str = "searchlab") -> str:
    """The program alone, shell-quoted (``/path/.venv/bin/python -m searchlab``, or ``searchlab``): for usage lines."""
    return command(module)
