"""Target architectures of the OpenCL knob problems (paper 001 §8) and the checks against them.

An architecture only caps what a configuration may use, so the same checks, in the device's
order, decide both a live evaluation (:class:`~searchlab.adapters.knobs._opencl.OpenCLKnobProblem`)
and what an uncapped recording would have been under the caps (:func:`apply_arch`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from searchlab.core.records import FailureMode, Measurement

STATIC_SENSORS = ("build_s", "code_bytes", "local_mem_bytes", "private_mem_bytes", "wg_size",
                  "kernel_max_wg", "preferred_multiple")
CHECK_ORDER = ("build", "local_mem", "work_group", "code_size", "launch", "compile_time", "output")

@dataclass(frozen=True)
class Arch:
    """What a target architecture lets a configuration use (§8)."""

    max_wg: int  # work-items per work-group ("clusters" of ALUs)
    local_mem: int  # bytes of local memory per work-group ("memories")
    code_bytes: int  # generated kernel size ("instruction memory"; see OpenCLKnobProblem)
    compile_s: float  # build + work-group compile time limit ("compiler time limit")

    def constants(self) -> dict[str, float]:
        """The limits as names the sensor model's constraint formulas can use."""
        return {"wg_limit": float(self.max_wg), "local_mem_limit": float(self.local_mem),
                "code_limit": float(self.code_bytes), "compile_limit_s": float(self.compile_s)}


def paper_archs(max_wg: tuple[int, int], code_bytes: tuple[int, int], local_mem: tuple[int, int, int, int],
                compile_s: float) -> dict[str, Arch]:
    """Paper 001 §8's four architectures: small or large (``max_wg``, ``code_bytes``: the small one's,
    the large one's) x few or many memories (``local_mem`` of small_few, small_many, large_few,
    large_many); one compile-time limit."""
    names = ("small_few", "small_many", "large_few", "large_many")
    return {name: Arch(max_wg[i // 2], local_mem[i], code_bytes[i // 2], compile_s) for i, name in enumerate(names)}


UNCAPPED = Arch(max_wg=1 << 30, local_mem=1 << 40, code_bytes=1 << 40, compile_s=1e9)


def static_violation(sensors: Mapping[str, float], arch: Arch) -> tuple[str, str] | None:
    """The first resource cap a built kernel breaks (checked before any launch)."""
    if sensors["local_mem_bytes"] > arch.local_mem:
        return "local_mem", f"local memory {sensors['local_mem_bytes']:.0f} B > {arch.local_mem} B"
    if sensors["wg_size"] > arch.max_wg:
        return "work_group", f"work-group size {sensors['wg_size']:.0f} > {arch.max_wg}"
    if sensors["code_bytes"] > arch.code_bytes:
        return "code_size", f"code size {sensors['code_bytes']:.0f} B > {arch.code_bytes} B"
    return None


def compile_violation(sensors: Mapping[str, float], arch: Arch) -> tuple[str, str] | None:
    if sensors["compile_s"] > arch.compile_s:
        return "compile_time", f"compile time {sensors['compile_s']:.3f} s > limit {arch.compile_s} s"
    return None


def failed(mode: FailureMode, check: str, message: str, sensors: Mapping[str, float], **kwargs: Any) -> Measurement:
    return Measurement.failed(mode, message, sensors=dict(sensors), extra={"violated": check}, **kwargs)


def apply_arch(m: Measurement, arch: Arch) -> Measurement:
    """What ``m`` (measured with no architecture caps) would have been under ``arch``.

    The same checks, in the same order, as :meth:`OpenCLKnobProblem.evaluate`: a configuration
    that breaks a static cap keeps only the static sensors (it would never have launched).
    Used to derive per-architecture tables from one uncapped exhaustive recording.
    """
    sensors = dict(m.sensors)
    if not all(k in sensors for k in STATIC_SENSORS):
        return m  # failed to build: the same on every architecture
    violation = static_violation(sensors, arch)
    if violation:
        static = {k: sensors[k] for k in STATIC_SENSORS}
        return failed(FailureMode.RESOURCES, violation[0], violation[1], static, charged_s=sensors["build_s"])
    if m.extra.get("violated") == "launch" or "compile_s" not in sensors:
        return m
    violation = compile_violation(sensors, arch)
    if violation:
        kept = {k: v for k, v in sensors.items() if k != "time_s"}
        return failed(FailureMode.COMPILE, violation[0], violation[1], kept, compile_s=sensors["compile_s"])
    return m
