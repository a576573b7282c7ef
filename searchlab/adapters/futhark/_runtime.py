"""One execution of a multi-version program: comparisons, launches, profiled times.

A host program (``FutharkProgram.program``) calls :meth:`Execution.construct` for every
parallel construct it reaches, which evaluates the threshold predicates like Futhark's
generated code (logging ``Compared NAME <= VALUE: true.``) and tags the kernels launched
inside with (construct, iteration, version). Run with no device, the same host program is
a *dry run* that only records the E_par values (they define the datasets' comparisons).
Times are OpenCL profiling-event durations; the per-tag sums are the per-iteration
instrumentation Alg. 8 (paper 003 §3.5) needs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from searchlab.adapters.futhark._chains import Chain, Step, choose, comparison_line
from searchlab.core.records import FailureMode
from searchlab.errors import EvaluationError


@dataclass(frozen=True)
class Limits:
    """What decides whether an intra-group version fits (Futhark's ``fits``) and what a
    launch may use: the device's work-group size and local memory."""

    max_group: int
    local_mem: int
    max_alloc: int


@dataclass(frozen=True)
class Group:
    """Work-group size and local memory (bytes) an intra-group version needs."""

    size: int
    local_bytes: int

    def fits(self, limits: Limits) -> bool:
        return self.size <= limits.max_group and self.local_bytes <= limits.local_mem


@dataclass(frozen=True)
class Tag:
    construct: str
    iteration: int
    version: str
    leaf: tuple[str, bool]
    comparisons: tuple[tuple[str, int, bool], ...]


@dataclass
class Execution:
    """State of one run; ``device`` None is a dry run (no launches)."""

    chains: Mapping[str, Chain]
    names: Mapping[str, tuple[str, ...]]
    config: Mapping[str, int] | None
    device: Any = None  # searchlab.core.opencl.OpenCLDevice
    kernels: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits | None = None
    group: int = 64  # group size of the thread-per-item versions (Futhark's default group size)
    log: list[str] = field(default_factory=list)
    steps: dict[str, list[Step]] = field(default_factory=dict)
    events: list[tuple[Tag | None, Any]] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    _tag: Tag | None = None

    @contextmanager
    def construct(self, name: str, iteration: int, epar: Sequence[int],
                  groups: Sequence[Group | None]) -> Iterator[str]:
        """Choose the version of construct ``name`` for this iteration (yields its name)."""
        chain = self.chains[name]
        if len(epar) != len(chain.levels) or len(groups) != len(chain.levels):
            raise ValueError(f"construct {name}: need one E_par and one group per level")
        limits = self.limits
        fits = tuple(g is None or limits is None or g.fits(limits) for g in groups)
        step = Step(tuple(int(e) for e in epar), fits)
        made: list[tuple[str, int, bool]] = []
        if self.config is None:  # dry run: record the comparisons, take the flat version
            self.steps.setdefault(name, []).append(step)
            index = len(chain.levels)
        else:
            index, made = choose(chain, self.names[name], self.config, step)
            self.log.extend(comparison_line(*c) for c in made)
        names = self.names[name]
        leaf = (names[index], True) if index < len(names) else (names[-1], False)
        self._tag = Tag(name, iteration, chain.versions[index], leaf, tuple(made))
        self.tags.append(self._tag)
        try:
            yield chain.versions[index]
        finally:
            self._tag = None

    def launch(self, kernel: str, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
               *args: Any, local_bytes: int = 0) -> None:
        """Enqueue a kernel after checking its work-group and local memory against the
        device (pocl aborts the process when local memory is exceeded)."""
        if self.device is None:
            return
        import pyopencl as cl

        knl = self.kernels[kernel]
        if local_size is not None:
            dev = self.device.device
            group = 1
            for s in local_size:
                group *= s
            max_group = knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
            if group > max_group:
                raise EvaluationError(FailureMode.RESOURCES,
                                      f"kernel {kernel}: work-group {local_size} exceeds {max_group}")
            static = knl.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, dev)
            if static + local_bytes > self.device.local_mem_size:
                raise EvaluationError(FailureMode.RESOURCES,
                                      f"kernel {kernel}: needs {static + local_bytes} B local memory, "
                                      f"device has {self.device.local_mem_size}")
        event = knl(self.device.queue, global_size, local_size, *args)
        self.events.append((self._tag, event))

    def launch_grid(self, kernel: str, count: int, *args: Any) -> None:
        """A thread-per-item kernel: ``count`` items on a grid rounded up to the group size
        (the kernel guards the excess), as Futhark's segmap kernels do."""
        groups = max(1, -(-count // self.group))
        self.launch(kernel, (groups * self.group,), (self.group,), *args)

    def times(self) -> tuple[float, dict[Tag, float]]:
        """Total profiled seconds and seconds per tag (waits for the queue)."""
        if self.device is None:
            return 0.0, {}
        self.device.queue.finish()
        total, per_tag = 0.0, dict[Tag, float]()
        for tag, event in self.events:
            seconds = (event.profile.end - event.profile.start) * 1e-9
            total += seconds
            if tag is not None:
                per_tag[tag] = per_tag.get(tag, 0.0) + seconds
        return total, per_tag

    def signature(self) -> tuple[tuple[str, int, str], ...]:
        """Which version ran where: the key for "this version/dataset was checked"."""
        return tuple((t.construct, t.iteration, t.version) for t in self.tags)
