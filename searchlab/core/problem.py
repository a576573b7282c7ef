"""The problem protocol: a space plus ``evaluate(config) -> Measurement``.

A problem object is built twice: cheaply in the driver (for its space, to build the
searcher) and inside each worker, where :meth:`Problem.setup` compiles kernels and
uploads data once for the device the worker owns (DESIGN.md, "Problem").
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from searchlab.core.records import Config, Direction, Measurement, Result
from searchlab.core.schema import bound_arguments, coerce, options, plain, runtime_names
from searchlab.core.spaces import Space

if TYPE_CHECKING:
    from collections.abc import Callable


class DeviceNeed(StrEnum):
    NONE = "none"  # pure Python/numpy: any worker process
    OPENCL = "opencl"  # an OpenCL device (a GPU, or pocl on CPU cores)


@dataclass(frozen=True)
class DeviceInfo:
    """The device a worker owns; ``kind`` is none, cpu or gpu."""

    kind: str = "none"
    name: str = "host"
    platform: str = ""
    platform_index: int = -1
    device_index: int = -1
    cores: tuple[int, ...] = ()
    gpu_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "platform": self.platform,
                "platform_index": self.platform_index, "device_index": self.device_index,
                "cores": list(self.cores), "gpu_ids": list(self.gpu_ids)}


@dataclass
class FinalizeContext:
    """What a problem gets at the end of a run to write its artefacts (``.tuning`` files,
    validation tables). ``call(method, *args)`` runs ``problem.method(*args)`` on a worker
    that owns a device, so a problem can measure validation datasets there."""

    run_dir: Path
    best: Result | None
    results: Sequence[Result]
    call: Callable[..., Any]
    evaluations: int = 0
    wall_time_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    confirm: Mapping[str, Any] | None = None  # the confirm phase's report (searchlab.run.confirm), run before
    rounds: int = 5  # interleaved rounds of a run-end comparison with the default before its first look (confirm.rounds)
    max_rounds: int = 5  # ... and the caps of its sequential rule (confirm.max_rounds, confirm.max_time_s,
    max_time_s: float = 60.0  # confirm.equivalence; searchlab.core.speedup)
    equivalence: float = 0.0
    # the run's progress display for what finalize measures (phase name, the line built only when shown)
    progress: Callable[[str, Callable[[], str]], None] | None = None


class Problem(ABC):
    """Base class of every problem adapter.

    Subclasses set the class attributes, build ``space`` in ``__init__`` (cheap, no
    device) and implement :meth:`evaluate`. Exceptions raised by ``evaluate`` become
    ``FAILED`` results in the worker; raise :class:`searchlab.errors.EvaluationError` to
    name the failure mode.

    A problem's options are its constructor's typed keyword parameters, declared once: the
    registry derives the config schema from them (:mod:`searchlab.core.schema`), a parameter
    typed with a dataclass (``measure: MeasurementProtocol``) is a nested config whose plain
    mapping is turned back into the dataclass before ``__init__`` runs, and :attr:`params`
    (what fingerprints the problem) is the arguments it was built with.
    """

    __schema_base__: ClassVar[bool] = True  # Problem's own parameters are not options (core.schema.options)

    name: ClassVar[str] = "problem"
    device_need: ClassVar[DeviceNeed] = DeviceNeed.NONE
    # Class defaults that an instance may set from its options (a table's direction and objective,
    # a noisy synthetic's determinism, a grammar's capabilities): per-instance metadata, not ClassVars.
    direction: Direction = Direction.MINIMIZE
    objective_name: str = "time_s"
    deterministic: bool = False
    capabilities: frozenset[str] = frozenset()
    code_version: ClassVar[str] = "1"
    # evaluations build and run a program (a kernel, a command, a Futhark program), so a failure may be
    # the program's: its default is built first and identical failures stop early (searchlab.run.broken)
    runs_user_code: ClassVar[bool] = False
    # former option -> its new spelling (``{"runs": "problem.measure.min_runs"}``): the CLI's error for
    # the old name says what to write instead (issue 21: a renamed option names its new spelling)
    renamed_options: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not hasattr(init, "__wrapped__"):
            cls.__init__ = _recording(cls, init)  # type: ignore[method-assign]

    def __init__(self, **params: Any) -> None:
        """``params``: only for a subclass that records something other than its arguments
        (they replace what :func:`_recording` captured); a subclass normally passes nothing."""
        if params or not hasattr(self, "params"):
            self.params: dict[str, Any] = dict(params)
        self.device = DeviceInfo()

    @property
    @abstractmethod
    def space(self) -> Space:
        """The configurations this problem accepts."""

    def setup(self, device: DeviceInfo) -> None:
        """Acquire the device: compile kernels, upload data. Called once per worker."""
        self.device = device

    @abstractmethod
    def evaluate(self, config: Config) -> Measurement:
        """Measure one configuration (already validated and known-constraint checked)."""

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Release device resources."""

    @property
    def noisy(self) -> bool:
        """Whether measuring a configuration again gives another value: device problems are, and
        problems that time something on the host say so themselves (``command``, ``dft`` with
        ``clock=wall``), so the run ends with a confirm phase by default (searchlab.run.confirm,
        docs/measurement.md)."""
        return self.device_need is not DeviceNeed.NONE

    @property
    def known_optimum(self) -> float | None:
        """The best objective value, where known (synthetic problems, full tables)."""
        return None

    @classmethod
    def run_options(cls, options: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The options a run of ``seed`` builds this problem with (stored as the run's config).
        Default: as given; a replay draws its noise from the run's seed (searchlab.adapters.table.problem)."""
        return dict(options)

    def default_config(self) -> Config | None:
        """What the user runs without tuning, or None where the problem has no default.

        The confirm phase measures it beside the best configurations and a tuned result is
        recommended only when it measurably beats it (searchlab.run.confirm: never worse than doing
        nothing). Here: the space's own default where it has one (threshold trees: Futhark's
        default thresholds, i.e. no ``.tuning`` file); adapters with a spec's or table's default
        override this."""
        default = getattr(self.space, "default_config", None)
        return default() if callable(default) else None

    def build_check(self, config: Config) -> str | None:
        """Build ``config`` without measuring it: the failure's message, or None (it builds, or nothing
        is built). Called on a worker for the default before the search (searchlab.run.broken)."""
        return None

    def describe_config(self, config: Config) -> str:
        """A readable form of a configuration (a ruletree, a knob setting)."""
        return ", ".join(f"{k}={v}" for k, v in config.items())

    def fingerprint_params(self) -> Mapping[str, Any]:
        """Parameters that change measured values (keys the cache and the study check)."""
        return {k: v for k, v in self.params.items() if k not in ("delay_s",)}

    def fingerprint(self, devices: Sequence[str] = ()) -> str:
        payload = {
            "problem": f"{type(self).__module__}.{type(self).__qualname__}",
            "code_version": self.code_version,
            "params": self.fingerprint_params(),
            "devices": sorted(set(devices)),
        }
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def finalize(self, ctx: FinalizeContext) -> Mapping[str, Any]:
        """Run-end report merged into ``summary.json`` (default: nothing)."""
        return {}


def _recording(cls: type, init: Callable[..., None]) -> Callable[..., None]:
    """``init`` that first turns nested option mappings into their dataclasses and, on the
    outermost call (the class actually built), records the bound arguments as ``params``."""

    @functools.wraps(init)
    def wrapper(self: Problem, *args: Any, **kwargs: Any) -> None:
        kwargs = coerce(cls, kwargs, f"problem {getattr(cls, 'name', cls.__name__)}")
        if "params" not in self.__dict__:  # defaults of options a ``**kwargs`` forwards to a base, then the call's
            runtime = runtime_names(type(self))
            defaults = {o.name: o.default for o in options(cls) if o.default is not inspect.Parameter.empty
                        and o.name not in runtime}
            self.params = plain({**defaults, **bound_arguments(init, args, kwargs, runtime)})
        init(self, *args, **kwargs)

    return wrapper
