"""``opencl_kernel``: the user's own OpenCL kernel, tuned from a T1 spec alone.

``python -m searchlab problem=opencl_kernel problem.spec=my_kernel.json`` (or ``.yaml``).
The spec (:mod:`searchlab.adapters.user._t1`) gives what Kernel Tuner's ``tune_kernel`` takes: the
kernel file and name, the arguments and their data, the problem size, global and local
sizes as formulas of the parameters, the tunable parameters (passed as ``#define``s),
restrictions, and the correct output (a reference kernel, a safe numpy expression, or a
file) with a tolerance.

It runs on the machinery of the built-in knob problems (searchlab.adapters.knobs._opencl: per-worker
compile cache and compile-time record, local-memory and work-group checks before any
launch because pocl aborts the process when they are exceeded, failures classified by
mode, sensors), and times with the shared protocol (:func:`searchlab.core.measure.measure`).
Order of checks: ``build`` (COMPILE) -> ``local_mem``/``work_group`` (RESOURCES) ->
``launch`` (LAUNCH; sizes that are not positive integers fail here too) ->
``compile_time`` (COMPILE) -> ``output`` (WRONG_OUTPUT, checked on the first launch, from
fresh data, before timing) -> timing (a failed timed launch is RUNTIME).

The measurement protocol: :class:`~searchlab.core.measure.MeasurementProtocol`'s defaults, over
them the spec's ``Searchlab.Measurement`` block, over that ``problem.measure.*``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

import searchlab.adapters.user._data as _data
from searchlab.adapters._default import knob_default
from searchlab.adapters.knobs._common import RESOURCE_MODEL
from searchlab.adapters.knobs._opencl import Arch, OpenCLKnobProblem, failed
from searchlab.adapters.user._formulas import evaluate_int
from searchlab.adapters.user._protocol import layered_protocol
from searchlab.adapters.user._t1 import KernelSpec, check_names, read_t1
from searchlab.core import files
from searchlab.core.buildlog import first_error_line
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.opencl import build_output
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.schema import EMPTY, plain
from searchlab.core.spaces import CategoricalKnob, Knob, OrdinalKnob
from searchlab.errors import ConfigError

# The built-in knob problems' sensor model without the generated-code size and the compile-time
# cap (a user kernel has no architecture caps unless it sets Searchlab.Limits / problem.limits).
MODEL: dict[str, Any] = {
    **RESOURCE_MODEL,
    "sensors": [s for s in RESOURCE_MODEL["sensors"] if s != "code_bytes"],
    "constraints": [c for c in RESOURCE_MODEL["constraints"] if c["name"] in ("local_mem", "work_group")],
}


def _define(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(int(value)) if isinstance(value, bool) else str(value)


class OpenCLKernel(OpenCLKnobProblem):
    """A user kernel from a T1 spec (see the module docstring)."""

    name = "opencl_kernel"
    ARCHS: ClassVar[Mapping[str, Arch]] = {}
    DEFAULT_MODEL = MODEL
    output_before_timing = True  # from fresh data, as the spec's checks expect
    default_name = "Searchlab.Default"  # where the user gave the default (errors name it)

    def __init__(self, spec: str = "???", arch: str = "none", limits: Mapping[str, float] = EMPTY,
                 measure: MeasurementProtocol = MeasurementProtocol(), model: Mapping[str, Any] = EMPTY) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            spec: a T1 spec, JSON or YAML (examples/stencil2d/stencil2d.json)
            arch: none: the device's own limits; caps come from Searchlab.Limits / problem.limits
            limits: max_wg, local_mem, code_bytes, compile_s (over the spec's Searchlab.Limits)
            measure: the timing protocol, over the spec's Searchlab.Measurement (docs/measurement.md)
            model: the sensor model (empty: MODEL)
        """
        if not spec or spec == "???":
            raise ConfigError("problem=opencl_kernel needs problem.spec=<T1 spec, .json or .yaml>")
        self.spec = self.read_spec(spec)
        self.kernel_name = self.spec.kernel_name
        self.kernel_text = files.read_text(self.spec.kernel_file, "kernel file")
        if len(self.spec.global_size) != len(self.spec.local_size):
            raise ConfigError(f"GlobalSize has {len(self.spec.global_size)} dimensions, LocalSize {len(self.spec.local_size)}")
        # the effective protocol, not the option alone: the spec's Measurement block counts (issue 22, item 5)
        super().__init__(arch=arch, limits={**self.spec.limits, **limits}, model=model,
                         measure=layered_protocol(measure, self.spec.measurement))
        check_names(self.spec, [n for n, _ in self.spec.params])
        self._default = knob_default(self.space, self.spec.default, self.default_name)
        values = dict(self.spec.params)
        vectors = [a for a in self.spec.arguments if a.memory == "Vector"]
        self.sizes = {a.name: _data.vector_size(a, self.spec, values) for a in vectors}
        self.shapes = {a.name: _data.shape_of(a, self.spec, self.sizes[a.name]) for a in vectors}
        self._static: dict[str, dict[str, float]] = {}
        self._check_references(vectors)

    def read_spec(self, path: str) -> KernelSpec:
        """The spec as typed data (a T1 file here; searchlab.adapters.user.python_kernel reads its own manifest)."""
        return read_t1(path)

    def _check_references(self, vectors: Sequence[Any]) -> None:
        """Reference expressions give the right number of values: refused here, in the driver,
        not later in a worker (evaluated on zeros of the arguments' types and shapes)."""
        zeros = {a.name: np.zeros(self.sizes[a.name], np.dtype(a.dtype)) for a in vectors}
        for check in self.spec.checks:
            if check.fill == "Generator":
                _data.expected(check, zeros, self.shapes, self.spec.size_env())

    def default_config(self) -> Config | None:
        """The spec's ``Searchlab.Default`` (what the user runs today); None: no default to compare with."""
        return self._default

    # -- the space and the kernel text ----------------------------------------------------
    def knobs(self) -> Sequence[Knob]:
        return tuple(CategoricalKnob(n, v) if isinstance(v[0], str) else OrdinalKnob(n, v) for n, v in self.spec.params)

    def known_constraints(self) -> Sequence[str]:
        return self.spec.conditions

    def _env(self, config: Config) -> dict[str, Any]:
        env: dict[str, Any] = {**self.spec.size_env(), **config}
        for name, expr in self.spec.defines.items():
            env[name] = expr(env)
        return env

    def source(self, config: Config) -> str:
        env = self._env(config)
        lines = [f"#define {n} {_define(config[n])}" for n, _ in self.spec.params]
        lines += [f"#define {n} {_define(env[n])}" for n in self.spec.defines]
        return "\n".join([*lines, "#line 1", self.kernel_text])

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        env = self._env(config)
        local = tuple(evaluate_int(e, env, "LocalSize") for e in self.spec.local_size)
        glob = tuple(evaluate_int(e, env, "GlobalSize") for e in self.spec.global_size)
        if self.spec.cuda_grid:  # GlobalSizeType CUDA: the global size counts work-groups
            glob = tuple(g * loc for g, loc in zip(glob, local))
        return glob, local

    def fingerprint_params(self) -> Mapping[str, Any]:
        digest = hashlib.sha256(self.spec.path.read_bytes() + self.kernel_text.encode())
        if self.spec.reference:
            digest.update(self.spec.reference.file.read_bytes())
        for source in sorted({a.source for a in self.spec.arguments if a.fill == "BinaryRaw"}
                             | {c.source for c in self.spec.checks if c.fill == "BinaryRaw"}):
            digest.update(Path(source).read_bytes())  # the data decide the measured values too
        return {"spec_sha256": digest.hexdigest()[:16], "measure": plain(self.protocol),
                "arch": self.arch_name, "limits": self.params.get("limits")}

    # -- data -----------------------------------------------------------------------------
    def prepare(self, context: Any, queue: Any) -> None:
        import pyopencl as cl

        self._initial = {a.name: _data.fill(a, self.sizes[a.name]) for a in self.spec.arguments if a.memory == "Vector"}
        flags = cl.mem_flags
        self._bufs = {n: cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=v) for n, v in self._initial.items()}
        kernel_out = self._run_reference(context, queue) if self.spec.reference else {}
        self._expected = {}
        for check in self.spec.checks:
            want = kernel_out[check.target] if check.fill == "Kernel" else _data.expected(
                check, self._initial, self.shapes, self.spec.size_env())
            self._expected[check.target] = (want, check)

    def _run_reference(self, context: Any, queue: Any) -> dict[str, np.ndarray]:
        """Run the reference kernel once on copies of the initial data; its outputs are the truth."""
        import pyopencl as cl

        ref = self.spec.reference
        assert ref is not None
        env: dict[str, Any] = {**self.spec.size_env()}
        for n, e in {**self.spec.defines, **ref.defines}.items():  # its defines may size __local arguments too
            env[n] = e(env)
        defines = [f"#define {n} {_define(env[n])}" for n in {**self.spec.defines, **ref.defines}]
        try:
            with build_output(self._said):
                program = cl.Program(context, "\n".join([*defines, "#line 1", ref.file.read_text()])).build()
            kernel = cl.Kernel(program, ref.name)
        except cl.Error as exc:
            raise ConfigError(f"Searchlab.ReferenceKernel {ref.name!r} does not build: {first_error_line(str(exc))}") from None
        bufs = {n: cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=v.copy())
                for n, v in self._initial.items()}
        glob = tuple(evaluate_int(e, env, "ReferenceKernel.GlobalSize") for e in ref.global_size)
        local = tuple(evaluate_int(e, env, "ReferenceKernel.LocalSize") for e in ref.local_size)
        try:
            kernel(queue, glob, local, *self._launch_args(env, bufs)).wait()
        except cl.Error as exc:
            raise ConfigError(f"Searchlab.ReferenceKernel {ref.name!r} failed to run: {str(exc)[:300]}") from None
        out = {}
        for name, buf in bufs.items():
            out[name] = np.empty_like(self._initial[name])
            cl.enqueue_copy(queue, out[name], buf).wait()
        return out

    def _launch_args(self, env: Mapping[str, Any], bufs: Mapping[str, Any]) -> list[Any]:
        import pyopencl as cl

        args: list[Any] = []
        for a in self.spec.arguments:
            if a.memory == "Vector":
                args.append(bufs[a.name])
            elif a.memory == "Scalar":
                args.append(_data.scalar(a))
            else:
                assert a.size is not None
                args.append(cl.LocalMemory(evaluate_int(a.size, env, f"Arguments {a.name} Size") * np.dtype(a.dtype).itemsize))
        return args

    def arguments(self) -> Sequence[Any]:
        return [self._bufs[a.name] for a in self.spec.arguments if a.memory == "Vector"]

    def clear(self, queue: Any) -> None:
        """Outputs to NaN (integers: their maximum), in/out arguments to their initial data."""
        import pyopencl as cl

        for a in self.spec.arguments:
            if a.is_output:
                init = self._initial[a.name]
                fresh = init if a.access == "ReadWrite" else np.full_like(
                    init, np.nan if init.dtype.kind == "f" else np.iinfo(init.dtype).max)
                cl.enqueue_copy(queue, self._bufs[a.name], fresh).wait()

    def _read(self, queue: Any, name: str) -> np.ndarray:
        import pyopencl as cl

        got = np.empty_like(self._initial[name])
        cl.enqueue_copy(queue, got, self._bufs[name]).wait()
        return got

    def output(self, queue: Any) -> np.ndarray:
        return np.concatenate([self._read(queue, n).astype(np.float64) for n in self._expected] or [np.zeros(0)])

    def reference(self) -> np.ndarray:
        return np.concatenate([w for w, _ in self._expected.values()] or [np.zeros(0)])

    def wrong_output(self, queue: Any) -> str | None:
        for name, (want, check) in self._expected.items():
            reason = _data.compare(self._read(queue, name), want, check.method, check.threshold)
            if reason:
                return f"{name}: {reason}"
        return None

    # -- one launch (the evaluation itself is the parent's) ------------------------------------
    def launch_setup(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...], Sequence[Any]] | Measurement:
        """Sizes and arguments from the spec's formulas; sizes that are not positive integers fail as LAUNCH."""
        try:
            global_size, local_size = self.shape(config)
            return global_size, local_size, self._launch_args(self._env(config), self._bufs)
        except ConfigError as exc:
            return failed(FailureMode.LAUNCH, "launch", str(exc), {"code_bytes": len(self.source(config))})

    def launch_sensors(self, text: str, built: Any, local: Sequence[int], args: Sequence[Any]) -> dict[str, float]:
        """Queried once per kernel text, before any launch sets its ``__local`` arguments; the
        ``__local`` arguments of this launch add to its local memory."""
        import pyopencl as cl

        if text not in self._static:
            self._static[text] = self._static_sensors(text, built, local)
        sensors = {**self._static[text], "wg_size": float(np.prod(local))}
        sensors["local_mem_bytes"] += sum(a.size for a in args if isinstance(a, cl.LocalMemory))
        return sensors
