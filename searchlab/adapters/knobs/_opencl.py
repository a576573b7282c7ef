"""The shared machinery of the OpenCL knob problems (paper 001 §8.1 on a real OpenCL device).

Each problem generates an OpenCL kernel from its knob setting, builds it, reads what the
device reports about it (the *sensors*), checks the target *architecture*'s caps, launches it
with profiling events, and checks the output against numpy. The architectures (§8: small or
large x few or many memories) cap local memory per work-group, work-group size, code size
and compile time (build plus the launch-time work-group compile pocl does), so that, as on the
paper's accelerators, the best configurations sit next to failing ones. Code size is the size
of the generated kernel (the IR our generator emits, the paper's §4.1 IR-size proxy): asking
pocl for the program binary costs a second full compile (measured 0.4-3 s per kernel here).

Compile time is the CPU time the process spends building and compiling the work-group
function (``time.process_time``): on a shared machine wall time measured the load of other
jobs (we saw 4x), not the compiler's effort. Checks, in order (``extra["violated"]`` names the one that failed; the sensor model's
``order`` says the same): ``build`` (COMPILE) → ``local_mem``, ``work_group``, ``code_size``
(RESOURCES, before any launch: pocl aborts the process when local memory is exceeded) →
``launch`` (LAUNCH: the runtime refused the enqueue) → ``compile_time`` (COMPILE) →
``output`` (WRONG_OUTPUT). A failure keeps the sensors measured up to its check, so proxy
constraints (§4.1) learn from failures too.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from searchlab.adapters.knobs._arch import UNCAPPED, Arch, apply_arch, compile_violation, failed, static_violation
from searchlab.adapters.knobs._common import RESOURCE_MODEL, DeviceBuffers, HostData
from searchlab.adapters.knobs._compile_cache import CompileTimes, pocl_cache
from searchlab.core.buildlog import build_message
from searchlab.core.expr import Expression
from searchlab.core.measure import MeasurementProtocol, Samples, measure, protocol_from
from searchlab.core.mismatch import not_close
from searchlab.core.opencl import build_output
from searchlab.core.problem import DeviceInfo, DeviceNeed, Problem
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.schema import EMPTY
from searchlab.core.sensors import SensedKnobSpace, model_from_spec
from searchlab.core.spaces import Knob
from searchlab.errors import ConfigError

__all__ = ["Arch", "OpenCLKnobProblem", "apply_arch", "failed"]

# The clock compile time is measured with (CPU seconds of this process, module docstring). A seam:
# a test about what the caps do with a compile time sets it, so that the machine's load cannot
# decide whether a compile breaks a cap (tests/adapters/test_knob_problems.py).
cpu_clock: Callable[[], float] = time.process_time


@dataclass
class _Built:
    program: Any
    kernel: Any
    build_s: float
    jit_s: float | None = None  # work-group compile, measured on the first launch


class OpenCLKnobProblem(Problem):
    """Base class: subclasses give knobs, a kernel generator, the launch shape and the data."""

    device_need = DeviceNeed.OPENCL
    runs_user_code = True  # a kernel that does not build stops the run early (searchlab.run.broken)
    objective_name = "time_s"
    capabilities = frozenset({"sensors"})
    kernel_name: str = "kern"  # per instance where a spec names it (user kernels)
    ARCHS: ClassVar[Mapping[str, Arch]] = {}
    DEFAULT_MODEL: ClassVar[Mapping[str, Any]] = RESOURCE_MODEL  # the one copy (searchlab/adapters/knobs/_common.py)
    rtol: ClassVar[float] = 1e-4
    atol: ClassVar[float] = 1e-3
    output_before_timing: ClassVar[bool] = False  # check the first launch's output, before timing

    def __init__(self, arch: str = "small_few", measure: MeasurementProtocol = MeasurementProtocol(),
                 limits: Mapping[str, float] = EMPTY, model: Mapping[str, Any] = EMPTY) -> None:
        """The options every OpenCL knob problem shares (subclasses forward them as ``**common``).

        Args:
            arch: small_few | small_many | large_few | large_many (paper 001 §8) | none (device limits only)
            measure: the timing protocol (docs/measurement.md)
            limits: override the arch's caps (max_wg, local_mem, code_bytes, compile_s)
            model: the sensor model; empty: DEFAULT_MODEL, for the built-ins RESOURCE_MODEL (docs/knobs.md)
        """
        self.protocol = protocol_from(measure)
        super().__init__()
        archs = {**self.ARCHS, "none": UNCAPPED}
        if arch not in archs:
            raise ConfigError(f"problem.arch={arch!r}: must be one of {sorted(archs)}")
        bad = set(limits or {}) - set(Arch.__dataclass_fields__)
        if bad:
            raise ConfigError(f"problem.limits: unknown keys {sorted(bad)} (known: {sorted(Arch.__dataclass_fields__)})")
        self.arch_name = arch
        base = archs[arch]
        self.arch = replace(base, **{k: type(getattr(base, k))(v) for k, v in dict(limits or {}).items()})
        knobs = self.knobs()
        names = [k.name for k in knobs]
        sensor_model = model_from_spec(model or self.DEFAULT_MODEL, knobs=names, constants=self.arch.constants())
        constraints = tuple(Expression(c) for c in self.known_constraints())
        self._space = SensedKnobSpace(tuple(knobs), constraints, sensor_model=sensor_model)
        self._built: dict[str, _Built] = {}
        self._cl: Any = None
        self._said: list[str] = []  # compiler output since the last evaluation (core.opencl.build_output)

    # -- what a subclass provides ---------------------------------------------------------
    @abstractmethod
    def knobs(self) -> Sequence[Knob]: ...

    def known_constraints(self) -> Sequence[str]:
        return ()

    @abstractmethod
    def source(self, config: Config) -> str:
        """OpenCL C source of the kernel for ``config``."""

    @abstractmethod
    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(global size, local size) of the launch."""

    def host_data(self) -> HostData:
        """The inputs, the output's host copy and the numpy reference (once per worker). A problem
        with buffers of its own (user/opencl_kernel.py: several outputs, scalars) overrides
        ``prepare``, ``arguments``, ``clear``, ``output`` and ``reference`` instead."""
        raise NotImplementedError(f"problem {self.name}: define host_data() or prepare() and its companions")

    def prepare(self, context: Any, queue: Any) -> None:
        self._buffers = DeviceBuffers(context, self.host_data())

    def arguments(self) -> Sequence[Any]:
        return self._buffers.arguments

    def clear(self, queue: Any) -> None:
        self._buffers.clear(queue)

    def output(self, queue: Any) -> np.ndarray:
        return self._buffers.output(queue)

    def reference(self) -> np.ndarray:
        return self._buffers.reference()

    # -- the problem protocol -------------------------------------------------------------
    @property
    def space(self) -> SensedKnobSpace:
        return self._space

    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        from searchlab.core.opencl import open_device

        self._cl = open_device(device)
        self.device = self._cl.info
        self._warm_compiler()
        self.prepare(self._cl.context, self._cl.queue)

    def _warm_compiler(self) -> None:
        """Pay the compiler's one-time start-up here, not in the first configuration's compile time."""
        import pyopencl as cl

        with pocl_cache(False), build_output(self._said):
            text = (f"__constant int searchlab_warm_{time.time_ns()} = 0;\n"
                    "__kernel void warm(__global int* x) { x[get_global_id(0)] += 1; }")
            prg = cl.Program(self._cl.context, text).build()
        buf = cl.Buffer(self._cl.context, cl.mem_flags.READ_WRITE, 64 * 4)
        prg.warm(self._cl.queue, (64,), (8,), buf).wait()
        dev = self._cl.device
        self._times = CompileTimes(f"{dev.name}|{dev.platform.version}|{dev.driver_version}|{self.code_version}")

    def _build(self, text: str) -> _Built:
        """Build (once per process); times come from the record when there is one."""
        import pyopencl as cl

        if text not in self._built:
            record = self._times.get(text)
            # To measure, build a never-seen program (pocl hashes the preprocessed source, so a
            # comment would not do; an unused constant does): pocl's cache cannot serve it.
            built_text = text if "jit_s" in record else f"{text}\n__constant int searchlab_measure_{time.time_ns()} = 0;\n"
            start = cpu_clock()
            with pocl_cache("jit_s" in record), build_output(self._said):
                program = cl.Program(self._cl.context, built_text).build(options=["-cl-std=CL1.2"])
            build_s = record.get("build_s", cpu_clock() - start)
            if "build_s" not in record:
                self._times.put(text, {"build_s": build_s})
            self._built[text] = _Built(program, cl.Kernel(program, self.kernel_name), build_s, record.get("jit_s"))
        return self._built[text]

    def _static_sensors(self, text: str, built: _Built, local: Sequence[int]) -> dict[str, float]:
        import pyopencl as cl

        dev, info, kernel = self._cl.device, cl.kernel_work_group_info, built.kernel
        return {
            "build_s": built.build_s,
            "code_bytes": float(len(text.encode())),
            "local_mem_bytes": float(kernel.get_work_group_info(info.LOCAL_MEM_SIZE, dev)),
            "private_mem_bytes": float(kernel.get_work_group_info(info.PRIVATE_MEM_SIZE, dev)),
            "wg_size": float(np.prod(local)),
            "kernel_max_wg": float(kernel.get_work_group_info(info.WORK_GROUP_SIZE, dev)),
            "preferred_multiple": float(kernel.get_work_group_info(info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, dev)),
        }

    # -- steps every OpenCL problem's evaluate shares (the built-ins and user kernels) ------
    def _build_or_failure(self, text: str) -> _Built | Measurement:
        import pyopencl as cl

        try:
            return self._build(text)
        except cl.Error as exc:
            return failed(FailureMode.COMPILE, "build", build_message(str(exc)), {"code_bytes": len(text)})

    def build_check(self, config: Config) -> str | None:
        """Whether ``config`` builds (searchlab.run.broken: the default is built before the search);
        the failure's message, or None. The build is kept: the evaluation reuses it."""
        built = self._build_or_failure(self.source(config))
        return built.message if isinstance(built, Measurement) else None

    def _resource_failure(self, sensors: Mapping[str, float]) -> Measurement | None:
        """Static limits checked before any launch: the device's own caps are never exceeded
        (pocl aborts the process), then the target architecture's (paper 001 §8)."""
        assert self._cl is not None, "setup() first"
        device_arch = Arch(self._cl.max_work_group_size, self._cl.local_mem_size, 1 << 40, 1e9)
        for arch in (device_arch, self.arch):
            violation = static_violation(sensors, arch)
            if violation:
                return failed(FailureMode.RESOURCES, violation[0], violation[1], sensors)
        return None

    def _first_launch(self, text: str, built: _Built, launch: Callable[[], Any],
                      sensors: dict[str, float]) -> Measurement | None:
        """The first launch also JIT-compiles the work-group function (pocl): the CPU time it takes
        beyond the kernel's own run is compile time, kept once per source; then the compile limit."""
        import pyopencl as cl

        try:
            with pocl_cache(built.jit_s is not None):
                start = cpu_clock()
                event = launch()
                event.wait()
                first_cpu = cpu_clock() - start
        except cl.Error as exc:
            return failed(FailureMode.LAUNCH, "launch", f"enqueue failed: {str(exc)[:400]}", sensors)
        if built.jit_s is None:
            built.jit_s = max(0.0, first_cpu - (event.profile.end - event.profile.start) * 1e-9)
            self._times.put(text, {"build_s": built.build_s, "jit_s": built.jit_s})
        sensors["compile_s"] = built.build_s + built.jit_s
        violation = compile_violation(sensors, self.arch)
        if violation:
            return failed(FailureMode.COMPILE, violation[0], violation[1], sensors, compile_s=sensors["compile_s"])
        return None

    def _timed(self, launch: Callable[[], Any]) -> Samples:
        """The shared protocol (searchlab.core.measure) over profiled launches."""
        def run_once() -> float:
            event = launch()
            event.wait()
            return float((event.profile.end - event.profile.start) * 1e-9)

        return measure(run_once, self.protocol)

    # -- hooks a problem with buffers of its own overrides (user/opencl_kernel.py) ------------
    def launch_setup(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...], Sequence[Any]] | Measurement:
        """(global size, local size, kernel arguments) of ``config``'s launch, or the failure."""
        global_size, local_size = self.shape(config)
        return global_size, local_size, self.arguments()

    def launch_sensors(self, text: str, built: _Built, local: Sequence[int], args: Sequence[Any]) -> dict[str, float]:
        """What the device reports about the built kernel for this launch (checked before it runs)."""
        return self._static_sensors(text, built, local)

    def wrong_output(self, queue: Any) -> str | None:
        """Why the output is wrong (against the numpy reference), or None."""
        return not_close(self.output(queue), self.reference(), self.rtol, self.atol)

    def evaluate(self, config: Config) -> Measurement:
        """:meth:`measure_config`, with what the compiler printed since the last evaluation (this
        one's build, the worker's set-up) in the record's ``log`` instead of on the terminal."""
        measured = self.measure_config(config)
        said, self._said[:] = list(self._said), []
        return replace(measured, log=(*measured.log, *(f"compiler: {line}" for line in said))) if said else measured

    def measure_config(self, config: Config) -> Measurement:
        """Build, check the caps, launch once (compile time, the compile cap), time under the
        protocol, check the output: the order of the module docstring. A problem that sets
        ``output_before_timing`` checks the output of the first launch instead, before timing."""
        import pyopencl as cl

        assert self._cl is not None, "setup() first"
        text = self.source(config)
        built = self._build_or_failure(text)
        if isinstance(built, Measurement):
            return built
        shaped = self.launch_setup(config)
        if isinstance(shaped, Measurement):
            return shaped
        global_size, local_size, args = shaped
        sensors = self.launch_sensors(text, built, local_size, args)
        refused = self._resource_failure(sensors)
        if refused:
            return refused
        queue, kernel = self._cl.queue, built.kernel
        self.clear(queue)

        def launch() -> Any:
            return kernel(queue, global_size, local_size, *args)

        refused = self._first_launch(text, built, launch, sensors)
        if refused:
            return refused
        wrong = self.wrong_output(queue) if self.output_before_timing else None
        if wrong:
            return failed(FailureMode.WRONG_OUTPUT, "output", wrong, sensors, compile_s=sensors["compile_s"])
        try:
            samples = self._timed(launch)
        except cl.Error as exc:
            return failed(FailureMode.RUNTIME, "run", f"timed launch failed: {str(exc)[:400]}", sensors)
        times = samples.values
        sensors.update(samples.sensors(), time_s=samples.median)
        wrong = None if self.output_before_timing else self.wrong_output(queue)
        if wrong:
            return failed(FailureMode.WRONG_OUTPUT, "output", wrong,
                          sensors, compile_s=sensors["compile_s"], run_s=float(sum(times)))
        return Measurement.ok(samples.median, samples=times, sensors=sensors, compile_s=sensors["compile_s"],
                              run_s=float(sum(times)),
                              extra={"min_s": min(times), "ci95": list(samples.ci95), "cv": samples.cv})

    def teardown(self) -> None:
        self._built.clear()
        self._cl = None
