"""One file per finished repeat, written atomically: a kill loses only the repeats in flight.

``DIR/repeats/<gpu>/<application>/<strategy>/<index>.json.gz`` holds the repeat's Kernel Tuner results in T4
form (what the methodology's ``write_results`` reads), its seed and its wall time. It is written to a
temporary name in the same directory, flushed, fsynced and renamed (POSIX ``rename`` is atomic), so a file
that exists is whole; a resume skips every repeat whose file exists. ``DIR/experiment.sha256`` ties the
directory to the experiment file's bytes: resuming with a different file is refused in one line.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

__all__ = ["RepeatStore"]


class RepeatStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, group_key: str, index: int) -> Path:
        return self.root / "repeats" / group_key / f"{index:04d}.json.gz"

    def claim(self, experiment: Path) -> None:
        """Tie ``root`` to ``experiment`` (first run), or check it is the same file (resume)."""
        digest = hashlib.sha256(experiment.read_bytes()).hexdigest()
        stamp = self.root / "experiment.sha256"
        if stamp.is_file():
            if stamp.read_text().strip() != digest:
                raise ConfigError(f"--out {str(self.root)!r}: holds the runs of a different experiment file "
                                  "(its bytes changed); give a new --out")
            for stale in self.root.rglob(".*.tmp"):  # a write a kill interrupted: never a finished repeat
                stale.unlink()
            return
        if self.root.exists() and any(self.root.iterdir()):
            raise ConfigError(f"--out {str(self.root)!r}: exists and is not a reproduce directory; give a new --out")
        self.root.mkdir(parents=True, exist_ok=True)
        self._write(stamp, (digest + "\n").encode())
        self._write(self.root / "experiment.json", experiment.read_bytes())

    def done(self, group_key: str, index: int) -> bool:
        return self.path(group_key, index).is_file()

    def save(self, group_key: str, index: int, record: dict[str, Any]) -> None:
        self._write(self.path(group_key, index), gzip.compress(json.dumps(record).encode(), compresslevel=5))

    def load(self, group_key: str, index: int) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(gzip.decompress(self.path(group_key, index).read_bytes()))
        return data

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
