"""Compile caching for the OpenCL knob problems: measured compile times kept on disk.

pocl caches built kernels on disk, so a second build of the same program is fast; a
compile-time *limit* must not depend on that. The first build of a program is a real one
(a never-seen text, pocl's cache off), timed, and its time recorded here; later builds may be
served by pocl and are charged the recorded time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def pocl_cache(enabled: bool) -> Any:
    """pocl's on-disk kernel cache off (where pocl honours it) while we measure a build."""
    previous = os.environ.get("POCL_KERNEL_CACHE")
    if not enabled:
        os.environ["POCL_KERNEL_CACHE"] = "0"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("POCL_KERNEL_CACHE", None)
        else:
            os.environ["POCL_KERNEL_CACHE"] = previous


class CompileTimes:
    """Measured compile times, kept on disk per (kernel source, device) — compile caching.

    A kernel is built for real (a unique text, pocl's cache off) the first time, and its build and
    work-group compile times are recorded; later builds may come from pocl's cache (fast) and
    are charged the recorded time, so compile-time failures do not depend on what is cached.
    Directory: ``compile_times`` under :func:`searchlab.core.cache_dirs.cache_dir`.
    """

    def __init__(self, device_key: str) -> None:
        from searchlab.core.cache_dirs import cache_dir

        self.dir = cache_dir("compile_times")
        self.device_key = device_key

    def _path(self, source: str) -> Path:
        digest = hashlib.sha256(f"{self.device_key}\n{source}".encode()).hexdigest()
        return self.dir / digest[:2] / f"{digest}.json"

    def get(self, source: str) -> dict[str, float]:
        try:
            return dict(json.loads(self._path(source).read_text()))
        except (OSError, ValueError):
            return {}

    def put(self, source: str, record: Mapping[str, float]) -> None:
        path = self._path(source)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(dict(record)))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: measure again next time
