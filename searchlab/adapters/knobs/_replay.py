"""Record an OpenCL knob problem exhaustively once, replay it under any architecture.

An architecture only caps what a configuration may use, so one uncapped recording
(``arch=none``: only the device's own limits) holds everything: :func:`apply_arch` runs the
problem's own checks on the recorded sensors, in the problem's order, and gives what the
evaluation would have returned under the caps. ``problem=knob_table problem.path=...
problem.arch=small_few`` replays such a recording with the problem's sensor model, charging
the recorded compile + run time (searchlab.adapters.table), so studies with many seeds cost no
device time; ``problem.sample_noise=true`` replays one recorded launch time per evaluation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from searchlab.adapters.knobs._opencl import OpenCLKnobProblem, apply_arch
from searchlab.adapters.table import Table, TableProblem, load_table
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config, Measurement
from searchlab.core.schema import EMPTY
from searchlab.core.sensors import SensedKnobSpace
from searchlab.errors import ConfigError


def problem_classes() -> dict[str, type[OpenCLKnobProblem]]:
    from searchlab.adapters.knobs.conv2d import Conv2d
    from searchlab.adapters.knobs.fir import Fir
    from searchlab.adapters.knobs.matmul import MatmulBlocked
    from searchlab.adapters.knobs.smith_waterman import SmithWaterman

    return {c.name: c for c in (Fir, MatmulBlocked, Conv2d, SmithWaterman)}


def record_table(problem: OpenCLKnobProblem, device: DeviceInfo | None = None,
                 progress: Callable[[int, Config, Measurement], None] | None = None) -> Table:
    """Evaluate every configuration satisfying the known constraints (exhaustive)."""
    problem.setup(device or DeviceInfo())
    rows: dict[Config, Measurement] = {}
    start = time.time()
    try:
        for i, config in enumerate(problem.space.enumerate()):
            rows[config] = problem.evaluate(config)
            if progress is not None:
                progress(i, config, rows[config])
    finally:
        problem.teardown()
    meta = {"problem": problem.name, "params": dict(problem.params), "arch": problem.arch_name,
            "code_version": problem.code_version, "wall_s": time.time() - start}
    return Table(problem.space, rows, problem.direction, problem.objective_name,
                 source=f"exhaustive {problem.name}", device=problem.device.name, meta=meta)


def arch_table(table: Table, problem: OpenCLKnobProblem) -> Table:
    """``table`` (recorded uncapped) as ``problem``'s architecture would have measured it."""
    space = SensedKnobSpace(problem.space.knobs, problem.space.constraints, sensor_model=problem.space.sensor_model)
    rows = {c: apply_arch(m, problem.arch) for c, m in table.rows.items()}
    meta = {**dict(table.meta), "arch": problem.arch_name}
    return Table(space, rows, table.direction, table.objective_name, source=f"{table.source} @ {problem.arch_name}",
                 device=table.device, meta=meta)


class KnobTable(TableProblem):
    """Replay a recorded OpenCL knob problem under an architecture, with its sensor model."""

    name = "knob_table"

    @classmethod
    def replayed_table(cls, options: Mapping[str, Any]) -> Table:
        """The recording under the options' architecture (the recorded problem's class is built, unset up, for
        its caps: :func:`apply_arch` is its own check), this replay problem unbuilt."""
        return cls._replay(options, None)[1]

    @staticmethod
    def _replay(options: Mapping[str, Any], table: Table | None) -> tuple[OpenCLKnobProblem, Table]:
        path = options.get("path")
        recorded = table if table is not None else load_table(str(path)) if path and path != "???" else None
        if recorded is None:
            raise ConfigError("problem=knob_table needs problem.path=<recorded table>")
        name = recorded.meta.get("problem")
        classes = problem_classes()
        if name not in classes:
            raise ConfigError(f"table {path!r}: meta.problem={name!r} is not one of {sorted(classes)}")
        params = {k: v for k, v in dict(recorded.meta.get("params", {})).items()
                  if k not in ("arch", "limits", "model", "runs", "measure")}  # runs: before the protocol
        source = classes[name](arch=options.get("arch", "small_few"), limits=options.get("limits") or EMPTY,
                               model=options.get("model") or EMPTY, **params)
        return source, arch_table(recorded, source)

    def __init__(self, path: str = "???", arch: str = "small_few", limits: Mapping[str, float] = EMPTY,
                 model: Mapping[str, Any] = EMPTY, table: Table | None = None, **replay: Any) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            path: an uncapped recording (bench/probabilistic.py record)
            arch: the architecture to replay under (as the recorded problem's)
            limits: override the arch's caps
            model: the sensor model (empty: the recorded problem's)
            replay: sample_noise, noise_seed (TableProblem)
        """
        self.source_problem, replayed = self._replay({"path": path, "arch": arch, "limits": limits, "model": model},
                                                     table)
        super().__init__(table=replayed, path=path, **replay)
