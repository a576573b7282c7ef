"""A running ``--server`` executable, driven through the ``futhark-server`` package.

:class:`ProgramServer` subclasses ``futhark_server.Server`` only to send the program's
standard error (start-up lines such as ``Default threshold: 2``, error messages) to a
file; the package's own constructor inherits the caller's stderr. With ``-L`` the server
answers each ``call`` with its log in-band, ``Compared NAME <= VALUE: B.`` lines included,
which is why timing runs use a second server without ``-L``. Run time is what
``futhark bench`` uses: the ``runtime: N`` (microseconds) line the server prints for each
``call``, measured by the program itself around the entry point, not by us.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import futhark_server

from searchlab.core.records import FailureMode
from searchlab.errors import EvaluationError

_RUNTIME = re.compile(r"^runtime:\s*([0-9]+)")
_COMPARED = re.compile(r"^Compared \S+ <= -?[0-9]+: (true|false)\.$")


class ProgramServer(futhark_server.Server):  # type: ignore[misc]
    """One server process; its stderr (the ``-L`` log) goes to a temporary file."""

    def __init__(self, exe: Path, *opts: str) -> None:
        self.log_file: IO[str] = tempfile.TemporaryFile("w+")
        self.exe = str(exe)
        self.opts = opts
        self.proc = subprocess.Popen([str(exe), *opts], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log_file, text=True, shell=False)
        self._vars = 0
        self._params: dict[str, int] = {}
        self.inputs: dict[str, list[str]] = {}  # dataset name -> restored input variables
        try:
            self._read_response()
        except Exception as exc:
            raise EvaluationError(FailureMode.LAUNCH, f"{exe.name} did not start: {self.stderr_tail()}") from exc

    def close(self) -> None:
        try:
            self.__exit__(None, None, None)
        except Exception:
            pass
        self.log_file.close()

    def stderr_tail(self, lines: int = 3) -> str:
        self.log_file.seek(0)
        text = [line.strip() for line in self.log_file.read().splitlines() if line.strip()]
        return " | ".join(text[-lines:]) or "no message"

    def header(self, prefix: str = "Default ") -> dict[str, str]:
        """The ``-L`` start-up lines: ``Default threshold: 2`` ... or (``prefix="Max "``) the
        device limits ``Max thread block size: 4096`` ..., keys without the prefix."""
        self.log_file.seek(0)
        out = {}
        for line in self.log_file.read().splitlines():
            key, sep, value = line.partition(":")
            if sep and key.startswith(prefix):
                out[key[len(prefix):].strip()] = value.strip()
        self.log_file.seek(0, 2)
        return out

    def fresh(self, prefix: str) -> str:
        self._vars += 1
        return f"{prefix}{self._vars}"

    def set_params(self, params: dict[str, int]) -> None:
        """``set_tuning_param`` for the values that changed since the last call."""
        for name, value in params.items():
            if self._params.get(name) != int(value):
                self.cmd_set_tuning_param(name, str(int(value)))
                self._params[name] = int(value)

    def restore(self, path: Path, types: Sequence[str]) -> list[str]:
        names = [self.fresh("in") for _ in types]
        self.cmd_restore(str(path), *zip(names, types))
        return names

    def call(self, entry: str, inputs: Sequence[str], n_outputs: int) -> tuple[float, list[str], list[str]]:
        """Run the entry point once: (seconds as the program measured them, output variables,
        the ``-L`` comparison lines)."""
        outs = [self.fresh("out") for _ in range(n_outputs)]
        try:
            lines = self.cmd_call(entry, *outs, *inputs)
        except futhark_server.Failure as exc:
            raise EvaluationError(FailureMode.RUNTIME, f"{entry}: {str(exc).strip()[:300]}") from None
        except Exception as exc:
            raise EvaluationError(FailureMode.CRASH, f"{entry}: server ended: {self.stderr_tail()}") from exc
        log = [line.strip() for line in lines if _COMPARED.match(line.strip())]
        for line in reversed(lines):
            m = _RUNTIME.match(line)
            if m:
                return int(m.group(1)) * 1e-6, outs, log
        raise EvaluationError(FailureMode.RUNTIME, f"{entry}: no runtime line in the server's answer {lines}")

    def fetch(self, names: Sequence[str]) -> list[Any]:
        import futhark_data

        with tempfile.NamedTemporaryFile() as handle:
            self.cmd_store(handle.name, *names)
            return list(futhark_data.load(open(handle.name, "rb")))

    def drop(self, names: Sequence[str]) -> None:
        if names:
            self.cmd_free(*names)
