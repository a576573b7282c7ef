"""``t4``: a T4 results file (the community's standard, benchmark_hub's tables) replayed.

``python -m searchlab problem=t4 problem.path=results.json``. The file is validated
against the T4 schema and read as a table (:func:`searchlab.interchange.t4.read_t4`: one
row per configuration, failures typed, ``constraints`` rows and configurations absent
from the file known-infeasible); evaluation is a look-up charged the recorded compilation
+ benchmark time, as for Kernel Tuner caches. ``python -m searchlab.export t4 RUN_DIR``
writes a run back as T4.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from searchlab.adapters.table import TableProblem
from searchlab.errors import ConfigError
from searchlab.interchange.t4 import read_t4


class T4Replay(TableProblem):
    """Replay a T4 file: a look-up charged the recorded time."""

    name = "t4"

    @classmethod
    def replayed_table(cls, options: Mapping[str, Any]) -> Any:
        """The T4 file as the table this problem replays (objective and direction applied), the problem unbuilt."""
        path = options.get("path")
        if not path or path == "???":
            raise ConfigError("problem=t4 needs problem.path=<T4 results .json>")
        return read_t4(str(path), objective=options.get("objective"), direction=options.get("direction", "minimize"))

    def __init__(self, path: str = "???", objective: str | None = None, direction: str = "minimize",
                 **replay: Any) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            path: a T4 results file (.json)
            objective: a measurement name; null: the file's first objective
            direction: T4 does not say: minimize | maximize
            replay: sample_noise, noise_seed (TableProblem)
        """
        table = self.replayed_table({"path": path, "objective": objective, "direction": direction})
        super().__init__(table=table, path=path, **replay)

    def fingerprint_params(self) -> Mapping[str, Any]:
        return {**super().fingerprint_params(), "objective": self.table.objective_name, "direction": self.direction.value}
