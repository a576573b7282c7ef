"""OpenCL device discovery and contexts (pyopencl is imported lazily, after pinning).

Problems call :func:`open_device` in ``setup`` to get a context and a profiling queue on
the device their worker owns. Timings come from OpenCL profiling events (DESIGN.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from searchlab.errors import ExecutorError
from searchlab.problem import DeviceInfo


def _cl() -> Any:
    os.environ.setdefault("PYOPENCL_NO_CACHE", "0")
    import pyopencl as cl

    return cl


def list_devices() -> list[DeviceInfo]:
    """Every OpenCL device of every platform (GPUs first)."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.LogicError as exc:  # no ICD at all
        raise ExecutorError(f"no OpenCL platform found ({exc}); run 'make setup' to install pocl") from None
    found = []
    for pi, platform in enumerate(platforms):
        for di, dev in enumerate(platform.get_devices()):
            kind = "gpu" if dev.type & cl.device_type.GPU else "cpu"
            found.append(DeviceInfo(kind=kind, name=dev.name.strip(), platform=platform.name.strip(),
                                    platform_index=pi, device_index=di))
    if not found:
        raise ExecutorError("OpenCL platforms exist but expose no device")
    return sorted(found, key=lambda d: d.kind != "gpu")


def default_device(kind: str | None = None, cores: tuple[int, ...] = ()) -> DeviceInfo:
    """The first device of ``kind`` (gpu or cpu; None: a GPU if any)."""
    devices = [d for d in list_devices() if kind is None or d.kind == kind]
    if not devices:
        raise ExecutorError(f"no OpenCL {kind} device found")
    d = devices[0]
    return DeviceInfo(d.kind, d.name, d.platform, d.platform_index, d.device_index, cores, d.gpu_ids)


@dataclass
class OpenCLDevice:
    """A context and an in-order profiling queue on one device."""

    info: DeviceInfo
    context: Any
    queue: Any
    device: Any

    @property
    def local_mem_size(self) -> int:
        return int(self.device.local_mem_size)

    @property
    def max_work_group_size(self) -> int:
        return int(self.device.max_work_group_size)


def open_device(info: DeviceInfo) -> OpenCLDevice:
    """Context and profiling queue for ``info`` (the device a worker owns)."""
    if info.kind == "none":
        info = default_device()
    cl = _cl()
    platform = cl.get_platforms()[info.platform_index]
    device = platform.get_devices()[info.device_index]
    context = cl.Context([device])
    queue = cl.CommandQueue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return OpenCLDevice(info, context, queue, device)
