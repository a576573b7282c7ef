"""What ``searchlab.tune`` returns: the run's own record (``summary.json``), read back, frozen."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from searchlab.core.commands import command, override


@dataclass(frozen=True)
class TuneResult:
    """A tuning run as its directory records it (``summary.json``; every evaluation in ``results.db``).

    ``recommended`` is the configuration the run hands over: the tuned one only when the confirm phase measured it
    faster than ``default`` (its speed-up interval above 1), otherwise the default (``recommended_is_default``);
    without a default, the confirmed best. ``best_measured`` is the search's best single measurement, often a lucky
    draw, which is why it is not what is recommended (docs/measurement.md)."""

    recommended: dict[str, Any] | None
    recommended_is_default: bool
    why: str  # why this configuration is recommended
    speedup: float | None  # recommended (or the best candidate) versus the default: median ratio, > 1 is faster
    speedup_ci95: tuple[float, float] | None  # its anytime-valid 95 % interval
    best_measured: dict[str, Any] | None  # {"config": ..., "objective": ...}: the search's best single measurement
    objective_name: str
    verdict: str
    status: str  # finished | interrupted
    evaluations: int  # recorded evaluations of the search (results.db)
    run_dir: Path
    summary: Mapping[str, Any] = field(repr=False)  # summary.json, read-only

    @classmethod
    def load(cls, run_dir: str | Path) -> TuneResult:
        """The result recorded in ``run_dir`` (any run: tuned from Python or from the command line)."""
        from searchlab.core.files import read_json

        path = Path(run_dir).resolve()
        summary = read_json(path / "summary.json", "summary.json")
        chosen: Mapping[str, Any] = summary.get("recommended") or {}
        against = chosen.get("speedup"), chosen.get("ci95")
        if against[0] is None:  # the default kept: how the best candidate compared
            versus = chosen.get("best_candidate_versus_default") or {}
            against = versus.get("speedup"), versus.get("ci95")
        best = summary.get("best_measured")
        return cls(
            recommended=dict(chosen["config"]) if chosen else None,
            recommended_is_default=bool(chosen.get("is_default")), why=str(chosen.get("why") or ""),
            speedup=against[0], speedup_ci95=tuple(against[1]) if against[1] else None,
            best_measured={"config": dict(best["config"]), "objective": best["objective"]} if best else None,
            objective_name=str(summary.get("objective_name")), verdict=str(summary.get("verdict") or ""),
            status=str(summary.get("status")), evaluations=int(summary.get("evaluations") or 0), run_dir=path,
            summary=MappingProxyType(dict(summary)))

    @property
    def resume_command(self) -> str:
        """The command line that continues this run (pasteable); from Python: ``searchlab.resume(run_dir)``."""
        return command("searchlab", override("resume", self.run_dir))
