"""The line of a build log a person needs (issue 54, item 2: the terminal cut ``12:33: expected ';'``).

pyopencl's build error starts with three repeats of ``clBuildProgram failed: BUILD_PROGRAM_FAILURE``
and the device's name; pocl names the source by a temporary file that changes with every build
(``/root/.cache/pocl/kcache/tempfile_Z6DxeA.cl:2:27: expected ';' ...``). So a failure's message
leads with the first error line, the temporary path cut to ``line:column`` (the kernel's own lines:
searchlab's ``#line 1`` puts the user's file at line 1), which is also what makes two builds of a
broken kernel fail "the same way" (searchlab.run.broken).
"""

from __future__ import annotations

import re

_ERROR = re.compile(r"\b(error|fatal)\b", re.IGNORECASE)
_SOURCE = re.compile(r"(?:[^\s:]*/)?(?:tempfile_\w+|<source>|input)\.cl:(\d+:\d+:)")
KEEP_CHARS = 2000  # the rest of a log kept in the record (the error line comes first, whole)


def is_error_line(line: str) -> bool:
    """Whether a line says ``error`` (or ``fatal``): a compiler's message, to be shown whole."""
    return bool(_ERROR.search(line))


def first_error_line(text: str) -> str:
    """The first line that says ``error`` (else the first non-empty one), whitespace runs collapsed and
    a build's temporary source path reduced to ``line:column:``; never cut."""
    lines = [" ".join(_SOURCE.sub(r"\1", line).split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    return next((line for line in lines if _ERROR.search(line)), lines[0] if lines else "")


def build_message(text: str, what: str = "build failed") -> str:
    """``what: <first error line>``, then the log (bounded) for the record."""
    line = first_error_line(text)
    rest = _SOURCE.sub(r"\1", text.strip())
    return f"{what}: {line}\n{rest[:KEEP_CHARS]}" if rest != line else f"{what}: {line}"
