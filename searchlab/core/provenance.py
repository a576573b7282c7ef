"""Where a searcher's shipped defaults were chosen from data: the tables and problem instances that chose them.

Why: a comparison on a table that chose a searcher's defaults is not held out (the selection effect that
docs/baselines.md, "Leave-one-table-out", measures). Each searcher declares it once, beside its defaults, as
``Searcher.defaults_chosen_on``; a study marks every cell whose table or problem instance is one of them
(searchlab.study.analysis.provenance) and says so in ``report.html`` and ``summary.md``.

Tables are recognised by content, not by path: the SHA-256 of the file's bytes (gunzipped when gzip-compressed),
so a copy elsewhere or a re-compressed ``.json.gz`` is still recognised, and a study run from any directory
matches alike. Problem instances (a DFT size) are recognised by the problem's registered name and one option.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["DFT_TRAINING_SIZES", "SHARED_CONVOLUTION", "InstanceRef", "TableRef", "file_digest", "matches"]


@dataclass(frozen=True)
class TableRef:
    """A table by its content: ``name`` is what a report prints, ``sha256`` the gunzipped file's digest."""

    name: str
    sha256: str

    def matches(self, problem: Mapping[str, Any], digest: str | None) -> bool:
        return digest is not None and digest == self.sha256


@dataclass(frozen=True)
class InstanceRef:
    """A problem instance that is not a table: the registered problem ``problem`` with ``option`` in ``values``."""

    name: str
    problem: str
    option: str
    values: tuple[Any, ...]

    def matches(self, problem: Mapping[str, Any], digest: str | None) -> bool:
        target = str(problem.get("_target_", ""))
        named = problem.get("name") == self.problem or target.rsplit(".", 1)[-1].lower() == f"{self.problem}problem"
        return named and problem.get(self.option) in self.values


Ref = TableRef | InstanceRef

# The four brute-forced convolution spaces shared with this repository (../shared/data/kernel_tuner, Kernel Tuner's
# cache format, and ../shared/data/benchmark_hub, the same measurements in T4): the only Kernel Tuner tables here,
# so every default chosen on Kernel Tuner data was chosen on them (docs/baselines.md, docs/transfer.md).
SHARED_CONVOLUTION: tuple[TableRef, ...] = (
    TableRef("convolution A100 (Kernel Tuner cache)", "c95e4e2a500bd71172fd00dec9670cb82e29a35e0c1ea897409a94b0bb215d89"),
    TableRef("convolution A4000 (Kernel Tuner cache)", "dbbc499c3a7ee29d7173ef7d0ea873310b7869aeb88847de4e29750da3f85c70"),
    TableRef("convolution MI250X (Kernel Tuner cache)", "9828d4e117c5df867f984a02552f0dc6a91e8a63d1766da66f37888fdb5336e3"),
    TableRef("convolution W6600 (Kernel Tuner cache)", "7492b4e4bedf8fa90631d3c5a607884f81b600ef21311aad2908992b85273b17"),
    TableRef("convolution_milo A100 (T4)", "bd043aa123f43b24233d18fe1611d72cbbf2ad69acfe673989ffef6d8c29ef2c"),
    TableRef("convolution_milo A4000 (T4)", "53b9d10c2c706c47fbd06c2869710b206e09e4a5275073db1ced45bab39078a2"),
    TableRef("convolution_milo MI250X (T4)", "dea97b3047db373cd25d0692494f75f2b933ca1efbf627df3d78564188f8d3df"),
    TableRef("convolution_milo W6600 (T4)", "dd66825c4c205dea3b7b33c58b842893b58cf930da1bf68dade843776051cb9f"),
)

# The DFT training sizes that chose tag_scaled's and dp_tag's settings (docs/grammar.md); 10007 and 2^16 are held out.
DFT_TRAINING_SIZES = InstanceRef("dft training sizes 4096, 32768, 6000, 50000, 2^18", "dft", "size",
                                 (4096, 32768, 6000, 50000, 2**18))


@lru_cache(maxsize=256)
def _digest(path: str, size: int, mtime: float) -> str:
    sha = hashlib.sha256()
    with Path(path).open("rb") as raw:
        head = raw.read(2)
    opener: Any = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as src:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def file_digest(path: str | Path) -> str | None:
    """The SHA-256 of a table file's content (gunzipped), None for a directory or a missing file."""
    p = Path(path)
    if not p.is_file():
        return None
    stat = p.stat()
    return _digest(str(p.resolve()), stat.st_size, stat.st_mtime)


def matches(refs: tuple[Ref, ...], problem: Mapping[str, Any], digest: str | None) -> Ref | None:
    """The first of ``refs`` that ``problem`` (a run's problem config; ``digest`` its table file's) is, or None."""
    return next((r for r in refs if r.matches(problem, digest)), None)
