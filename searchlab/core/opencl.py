"""OpenCL device discovery and contexts (pyopencl is imported lazily, after pinning).

Problems call :func:`open_device` in ``setup`` to get a context and a profiling queue on
the device their worker owns. Timings come from OpenCL profiling events (DESIGN.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from searchlab.core.problem import DeviceInfo
from searchlab.errors import ExecutorError


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


Lister = Callable[[], list[DeviceInfo]]


def pinned_device(kind: str, cores: tuple[int, ...] = (), gpu_ids: Sequence[str] = (),
                  lister: Lister | None = None) -> DeviceInfo:
    """The OpenCL device a worker owns: for a GPU worker, the one its Ray GPU id names.

    Why: Ray gives each device actor one GPU id and sets ``CUDA_VISIBLE_DEVICES`` to it
    (issue 24). NVIDIA's OpenCL driver honours that variable, so the worker sees one GPU and
    it is the one; a driver that ignores it (pocl, AMD's) lists every GPU of the node, in
    the node's order, and the id is the index into that list. Anything else (no GPU, an id
    past the list, more than one id) is refused, never a silent shared device.
    ``lister`` is the enumeration seam (default: pyopencl's platforms, :func:`list_devices`),
    so a test can drive the choice on a machine without GPUs.
    """
    devices = (lister or list_devices)()
    if kind != "gpu":
        found = [d for d in devices if d.kind == kind]
        if not found:
            raise ExecutorError(f"no OpenCL {kind} device found")
        d = found[0]
        return DeviceInfo(d.kind, d.name, d.platform, d.platform_index, d.device_index, cores, ())
    if len(gpu_ids) != 1:
        raise ExecutorError(f"a GPU worker needs exactly one GPU id from Ray, got {list(gpu_ids)}")
    gpus = [d for d in devices if d.kind == "gpu"]
    gid = str(gpu_ids[0])
    if len(gpus) == 1:  # the driver honours CUDA_VISIBLE_DEVICES: the only GPU is ours
        d = gpus[0]
    elif gid.isdigit() and int(gid) < len(gpus):  # every GPU of the node listed: the id indexes them
        d = gpus[int(gid)]
    else:
        raise ExecutorError(f"GPU id {gid} (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}) names "
                            f"no OpenCL GPU here: {len(gpus)} listed")
    return DeviceInfo(d.kind, d.name, d.platform, d.platform_index, d.device_index, cores, (gid,))


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


@contextmanager
def build_output(into: list[str]) -> Iterator[None]:
    """What an OpenCL build prints, appended to ``into`` instead of the terminal (issue 46, item 6).

    Why: pocl's compiler writes its diagnostics ("2 errors generated.", warnings) to the process's
    stderr, and pyopencl warns "Non-empty compiler output encountered" on a build with a log: in a
    run they interleave with the progress line (from a Ray actor, prefixed by its pid). The problem
    keeps them in the evaluation's record (``log`` in results.db) instead. pyopencl is asked for the
    compiler's text itself (``PYOPENCL_COMPILER_OUTPUT``) rather than its pointer to that variable.
    File descriptor 2 is redirected for the build only; warnings other than pyopencl's pass through."""
    import tempfile
    import warnings

    sys.stderr.flush()
    saved_env = os.environ.get("PYOPENCL_COMPILER_OUTPUT")
    os.environ["PYOPENCL_COMPILER_OUTPUT"] = "1"
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if saved_env is None:
                os.environ.pop("PYOPENCL_COMPILER_OUTPUT", None)
            else:
                os.environ["PYOPENCL_COMPILER_OUTPUT"] = saved_env
            tmp.seek(0)
            _keep(caught, tmp.read().decode(errors="replace"), into)  # a failed build's output too


def _keep(caught: list[Any], printed: str, into: list[str]) -> None:
    import warnings

    for w in caught:
        if w.category.__name__ == "CompilerWarning":  # pyopencl's, matched by name: pyopencl stays lazy
            into.extend(line for line in str(w.message).splitlines() if line.strip())
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    into.extend(line for line in printed.splitlines() if line.strip())
