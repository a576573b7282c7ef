"""``python_kernel``: an OpenCL kernel given to ``searchlab.tune(...)`` from Python, as Kernel Tuner means it.

``searchlab.tune`` takes ``tune_kernel``'s arguments (a kernel string, numpy arrays, a dict of tunables, ...) and
records them in the run directory (:mod:`searchlab.adapters.user._manifest`); this problem is built from that record
alone, so a Ray worker and a resume rebuild it from data. Evaluation is ``opencl_kernel``'s (the build, resource,
launch and output checks in that order, then timing under the shared protocol); what differs is where Kernel Tuner
1.5 decides differently from a T1 spec, and it decides here as Kernel Tuner does (``kernel_tuner/util.py``):

- **Launch shape**: threads are the parameters named by ``block_size_names`` (default ``block_size_x/y/z``;
  256, 1, 1 where a name is not a parameter); the grid is ``ceil(problem_size[i] / divisor)``, the divisor the
  product of ``grid_div_x/y/z`` (ints or expressions of the parameters; default that dimension's block size,
  1 when it is not a parameter); OpenCL's global size is grid x threads (``get_grid_dimensions``).
- **Defines**: ``grid_size_x/y/z``, the block size names, every parameter and ``kernel_tuner 1``, prepended with
  ``#line 1`` (``prepare_kernel_string``).
- **Output check**: ``numpy.allclose(answer, result, atol=atol)`` (rtol 1e-5), NaN equal where the answer holds NaN
  (``_default_verify_function``); every array is reset to its initial data before the checked launch.
- **Device**: ``platform``/``device`` pick one OpenCL device by index (Kernel Tuner's ``platform=``/``device=``);
  unset, the executor's choice stands (a GPU where the machine has one, else pocl's CPU device).

Deviation: Kernel Tuner ``eval``s string sizes, divisors and restrictions as Python; here they are parsed by the
safe expression language (:mod:`searchlab.core.expr`), which covers arithmetic, comparisons and boolean logic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.adapters.user._manifest import KernelManifest, read_manifest
from searchlab.adapters.user._t1 import Argument, Check, KernelSpec
from searchlab.adapters.user.opencl_kernel import OpenCLKernel
from searchlab.core.expr import Expression
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.mismatch import wrong_output
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config
from searchlab.core.schema import EMPTY
from searchlab.errors import ConfigError

RTOL = 1e-5  # numpy.allclose's default, which Kernel Tuner's check keeps


def _expression(value: int | str, what: str) -> int | Expression:
    if isinstance(value, int):
        return value
    try:
        return Expression(value)
    except ConfigError as exc:
        raise ConfigError(f"{what}={value!r}: {exc}") from None


def _int(value: Any) -> int:
    """A block size from a configuration (a number, as Kernel Tuner's ``int(...)`` takes it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"block size {value!r}: must be a number")
    return int(value)


def _spec(path: Path, m: KernelManifest) -> KernelSpec:
    """The manifest as the typed spec ``opencl_kernel``'s machinery runs on."""
    base = path.parent
    arguments = tuple(
        Argument(a.name, a.dtype, "Vector", Expression(str(a.size)), (), "BinaryRaw", source=str(base / a.file))
        if a.kind == "array" else Argument(a.name, a.dtype, "Scalar", None, (), "Constant", float(a.value))
        for a in m.arguments)
    checks = tuple(Check(a.name, "BinaryRaw", source=str(base / file), method="AllClose", threshold=m.atol)
                   for a, file in zip(m.arguments, m.answer) if file is not None)
    for a, file in zip(m.arguments, m.answer):
        if file is not None and a.kind != "array":
            raise ConfigError(f"{path}: answer for scalar argument {a.name!r}: only arrays are outputs")
    sizes = tuple(s if isinstance(s, int) else 1 for s in m.problem_size)
    return KernelSpec(path=path, kernel_file=base / m.kernel_file, kernel_name=m.kernel_name, problem_size=sizes,
                      params=m.tune_params, conditions=m.restrictions, global_size=(), local_size=(), cuda_grid=False,
                      arguments=arguments, checks=checks, defines={}, reference=None, measurement={}, limits={},
                      default=m.default)


class PythonKernel(OpenCLKernel):
    """A kernel from ``searchlab.tune(...)`` (see the module docstring)."""

    name = "python_kernel"
    default_name = "default"  # searchlab.tune(default=...)

    def __init__(self, spec: str = "???", arch: str = "none", limits: Mapping[str, float] = EMPTY,
                 measure: MeasurementProtocol = MeasurementProtocol(), model: Mapping[str, Any] = EMPTY,
                 platform: int | None = None, device: int | None = None) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            spec: the kernel.json that searchlab.tune wrote into the run directory (inputs/kernel.json)
            arch: none: the device's own limits; caps from problem.limits
            limits: max_wg, local_mem, code_bytes, compile_s
            measure: the timing protocol (docs/measurement.md)
            model: the sensor model (empty: opencl_kernel's)
            platform: an OpenCL platform index (Kernel Tuner's platform=); null: the executor's device
            device: an OpenCL device index on that platform (Kernel Tuner's device=); null: the executor's device
        """
        if not spec or spec == "???":
            raise ConfigError("problem=python_kernel needs problem.spec=<the kernel.json searchlab.tune wrote>")
        for name, value in (("platform", platform), ("device", device)):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ConfigError(f"problem.{name}={value!r}: must be an index >= 0 or null")
        self.platform_index, self.device_index = platform, device
        super().__init__(spec=spec, arch=arch, limits=limits, measure=measure, model=model)

    def read_spec(self, path: str) -> KernelSpec:
        where = Path(path).resolve()
        self.manifest = read_manifest(where)
        m = self.manifest
        names = [n for n, _ in m.tune_params]
        self._sizes = tuple(_expression(s, "problem_size") for s in m.problem_size)
        self._divisors = tuple(None if d is None else tuple(_expression(x, "grid_div") for x in d) for d in m.grid_div)
        for what, exprs in (("problem_size", self._sizes), ("grid_div", [x for d in self._divisors for x in d or ()])):
            for e in exprs:
                unknown = e.names - set(names) if isinstance(e, Expression) else set()
                if unknown and isinstance(e, Expression):
                    raise ConfigError(f"{what}={e.text!r}: unknown names {sorted(unknown)} (parameters: {names})")
        return _spec(where, m)

    # -- Kernel Tuner's launch shape and defines ------------------------------------------------
    def _value(self, item: int | Expression, config: Config, what: str) -> int:
        value = item if isinstance(item, int) else item(dict(config))
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
            raise ConfigError(f"{what}={getattr(item, 'text', item)!r} gives {value!r}: must be positive")
        return int(value)

    def _grid_threads(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        m = self.manifest
        threads = tuple(_int(config.get(n, 256 if i == 0 else 1)) for i, n in enumerate(m.block_size_names))
        sizes = [self._value(s, config, "problem_size") for s in self._sizes] + [1] * (3 - len(self._sizes))
        grid = []
        for i, divisor in enumerate(self._divisors):
            if divisor is None:  # the dimension's block size when it is a parameter, else 1
                d = _int(config.get(m.block_size_names[i], 1))
            else:
                d = math.prod(self._value(x, config, "grid_div") for x in divisor)
            grid.append(math.ceil(sizes[i] / d))
        return tuple(grid), threads

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        grid, threads = self._grid_threads(config)
        return tuple(g * t for g, t in zip(grid, threads)), threads

    def source(self, config: Config) -> str:
        try:
            grid, threads = self._grid_threads(config)
        except ConfigError:  # the launch fails, naming the size (launch_setup); the source still builds
            grid, threads = (1, 1, 1), (1, 1, 1)
        defines: dict[str, Any] = dict(zip(("grid_size_x", "grid_size_y", "grid_size_z"), grid))
        defines.update(zip(self.manifest.block_size_names, threads))
        defines.update({n: config[n] for n, _ in self.spec.params})
        defines["kernel_tuner"] = 1
        return "".join(f"#define {k} {v}\n" for k, v in defines.items()) + "#line 1\n" + self.kernel_text

    # -- Kernel Tuner's output check --------------------------------------------------------------
    def wrong_output(self, queue: Any) -> str | None:
        for name, (want, check) in self._expected.items():
            got = self._read(queue, name).astype(np.float64)
            nan = bool(np.isnan(want).any())
            if np.allclose(want, got, atol=check.threshold, rtol=RTOL, equal_nan=nan):
                continue
            bad = ~np.isclose(got, want, atol=check.threshold, rtol=RTOL, equal_nan=nan)
            return f"{name}: " + wrong_output(got, want, bad, f"{check.threshold:g} + {RTOL:g} x |want|")
        return None

    # -- the device ---------------------------------------------------------------------------------
    def setup(self, device: DeviceInfo) -> None:
        if self.platform_index is not None or self.device_index is not None:
            from searchlab.core.opencl import list_devices

            found = list_devices()
            platform, index = self.platform_index or 0, self.device_index or 0
            chosen = [d for d in found if d.platform_index == platform and d.device_index == index]
            if not chosen:
                listed = ", ".join(f"{d.platform_index}/{d.device_index} {d.name}" for d in found)
                raise ConfigError(f"problem.platform={platform} problem.device={index}: no such OpenCL device "
                                  f"(platform/device: {listed})")
            device = replace(chosen[0], cores=device.cores)
        super().setup(device)
