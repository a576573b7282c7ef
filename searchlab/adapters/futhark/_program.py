"""The problem base of the Futhark-style programs (paper 003): space, evaluation, validation.

A subclass describes a program: its parallel constructs (:class:`Chain`), its datasets per
size preset (tagged train "tune" / validation "notune" as in Listing 4.1), its OpenCL
sources and a host program. The threshold tree and every dataset's E_par values come from
a dry run of that host program, so the comparisons the tuners see are exactly those the
program makes. An evaluation runs every training dataset (warm-up run checked against
numpy, then ``repeats`` profiled runs) and reports the summed medians (§2.1), the
per-dataset medians, all samples, the comparison log and per-iteration instrumentation.
"""

from __future__ import annotations

import statistics
import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from searchlab.adapters.futhark._chains import Chain, chain_thresholds, param_class, threshold_names
from searchlab.adapters.futhark._runtime import Execution, Limits
from searchlab.core.problem import DeviceInfo, DeviceNeed, FinalizeContext, Problem
from searchlab.errors import ConfigError, EvaluationError
from searchlab.records import Config, FailureMode, Measurement
from searchlab.spaces import ThresholdDataset, ThresholdTree

PRESETS = ("cpu", "gpu")


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    train: bool
    size: Mapping[str, int] = field(default_factory=dict)


@dataclass
class DatasetRun:
    """What one dataset gave under one configuration."""

    samples: list[float]
    log: list[str]
    records: list[dict[str, Any]]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


class FutharkProgram(Problem):
    device_need = DeviceNeed.OPENCL
    capabilities = frozenset({"instrumentation", "datasets", "validation"})
    objective_name = "time_s"
    chains: ClassVar[tuple[Chain, ...]] = ()
    source: ClassVar[str] = ""

    def __init__(self, preset: str = "cpu", repeats: int = 10, validation_repeats: int = 0, check: str = "first",
                 weighting: str = "none", log: bool = True, reference_tuning: str | None = None,
                 **params: Any) -> None:
        if preset not in PRESETS:
            raise ConfigError(f"problem.preset={preset!r}: must be one of {list(PRESETS)}")
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ConfigError(f"problem.repeats={repeats!r}: must be a positive integer")
        if isinstance(validation_repeats, bool) or not isinstance(validation_repeats, int) or validation_repeats < 0:
            raise ConfigError(f"problem.validation_repeats={validation_repeats!r}: must be >= 0 (0: 3 x repeats)")
        if check not in ("first", "always"):
            raise ConfigError(f"problem.check={check!r}: must be 'first' (first run of each version and "
                              "dataset) or 'always'")
        if weighting not in ("none", "baseline"):
            raise ConfigError(f"problem.weighting={weighting!r}: must be 'none' or 'baseline' (paper 003 §2.1)")
        super().__init__(preset=preset, repeats=repeats, validation_repeats=validation_repeats, check=check,
                         weighting=weighting, log=log, reference_tuning=reference_tuning, **params)
        self.preset, self.repeats, self.check, self.weighting = preset, repeats, check, weighting
        self.validation_repeats = validation_repeats or 3 * repeats
        self.keep_log, self.reference_tuning = log, reference_tuning
        self.names = threshold_names(self.chains)
        self.specs = tuple(self.dataset_specs(preset))
        if not any(s.train for s in self.specs):
            raise ConfigError(f"problem {self.name}: preset {preset!r} has no training dataset")
        self._space = ThresholdTree(chain_thresholds(self.chains), tuple(self._dry(s) for s in self.specs))
        self._ocl: Any = None
        self._kernels: dict[str, Any] = {}
        self._data: dict[str, Any] = {}
        self._verified: set[tuple[str, Any]] = set()
        self._weights: dict[str, float] | None = None
        self.limits: Limits | None = None
        self.group_size = 64 if preset == "cpu" else 256  # Futhark's default group size on GPUs

    # -- what a subclass provides ---------------------------------------------------------
    @abstractmethod
    def dataset_specs(self, preset: str) -> Sequence[DatasetSpec]:
        """Datasets of a size preset (train and validation)."""

    @abstractmethod
    def build_options(self) -> list[str]:
        """OpenCL compiler options (``-DB=16`` ...)."""

    @abstractmethod
    def prepare(self, spec: DatasetSpec) -> Any:
        """Input data on the device and its numpy reference (once per dataset)."""

    @abstractmethod
    def reset(self, data: Any) -> None:
        """Restore inputs a run overwrites (not timed: only kernel events are)."""

    @abstractmethod
    def program(self, rt: Execution, spec: DatasetSpec, data: Any) -> None:
        """The host program: launches and constructs, in program order."""

    @abstractmethod
    def verify(self, spec: DatasetSpec, data: Any) -> str | None:
        """Why the output is wrong (compared with numpy), or None."""

    # -- space ------------------------------------------------------------------------------
    @property
    def space(self) -> ThresholdTree:
        return self._space

    @property
    def code_versions(self) -> int:
        return sum(len(c.versions) for c in self.chains)

    def _dry(self, spec: DatasetSpec) -> ThresholdDataset:
        """E_par values the dataset compares each threshold with, one per loop iteration
        (a single value when it never changes: a *simple* threshold, §2.1)."""
        rt = Execution({c.construct: c for c in self.chains}, self.names, None)
        self.program(rt, spec, None)
        values: dict[str, tuple[int, ...]] = {}
        for construct, steps in rt.steps.items():
            for i, name in enumerate(self.names[construct]):
                seq = tuple(s.epar[i] for s in steps)
                values[name] = seq[:1] if len(set(seq)) == 1 else seq
        return ThresholdDataset(spec.name, values, spec.train)

    def print_params(self) -> list[str]:
        """Like a Futhark program's ``--print-params``: name and class of every threshold."""
        ts = self._space.thresholds
        return [f"{t.name} ({param_class(t, ts)})" for t in ts]

    def spec(self, name: str) -> DatasetSpec:
        for s in self.specs:
            if s.name == name:
                return s
        raise ConfigError(f"problem {self.name}: no dataset {name!r}; have {[s.name for s in self.specs]}")

    def fingerprint_params(self) -> Mapping[str, Any]:
        return {k: v for k, v in self.params.items() if k not in ("log", "reference_tuning", "validation_repeats")}

    # -- device -----------------------------------------------------------------------------
    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        import pyopencl as cl

        from searchlab.opencl import open_device

        self._ocl = open_device(device)
        self.device = self._ocl.info
        dev = self._ocl.device
        self.limits = Limits(int(dev.max_work_group_size), int(dev.local_mem_size), int(dev.max_mem_alloc_size))
        self.group_size = min(self.group_size, self.limits.max_group)
        try:
            program = cl.Program(self._ocl.context, self.source).build(options=self.build_options())
        except cl.RuntimeError as exc:
            raise EvaluationError(FailureMode.COMPILE, f"{self.name}: OpenCL build failed: {exc}") from None
        self._kernels = {k.function_name: k for k in program.all_kernels()}

    def teardown(self) -> None:
        self._data.clear()
        self._kernels.clear()
        self._ocl = None

    def _dataset(self, spec: DatasetSpec) -> Any:
        if spec.name not in self._data:
            self._data[spec.name] = self.prepare(spec)
        return self._data[spec.name]

    @property
    def cl(self) -> Any:
        if self._ocl is None:
            raise RuntimeError(f"problem {self.name}: setup() was not called")
        return self._ocl

    # -- measuring --------------------------------------------------------------------------
    def run_dataset(self, config: Mapping[str, int], spec: DatasetSpec, repeats: int,
                    force_check: bool = False) -> DatasetRun:
        """A checked warm-up run, then ``repeats`` profiled runs."""
        data = self._dataset(spec)
        chains = {c.construct: c for c in self.chains}
        samples: list[float] = []
        per_tag: list[dict[Any, float]] = []
        first: Execution | None = None
        for i in range(repeats + 1):
            self.reset(data)
            rt = Execution(chains, self.names, config, self.cl, self._kernels, self.limits, self.group_size)
            self.program(rt, spec, data)
            total, tags = rt.times()
            if i == 0:
                first = rt
                self._check(spec, data, rt, force_check)
            else:
                samples.append(total)
                per_tag.append(tags)
        assert first is not None
        records = [{"construct": t.construct, "iteration": t.iteration, "version": t.version,
                    "leaf": list(t.leaf), "comparisons": [list(c) for c in t.comparisons],
                    "time_s": statistics.median(p[t] for p in per_tag)} for t in first.tags]
        return DatasetRun(samples, first.log, records)

    def _check(self, spec: DatasetSpec, data: Any, rt: Execution, force: bool) -> None:
        key = (spec.name, rt.signature())
        if key in self._verified and not force and self.check == "first":
            return
        problem = self.verify(spec, data)
        if problem is not None:
            used = sorted({t.version for t in rt.tags})
            raise EvaluationError(FailureMode.WRONG_OUTPUT,
                                  f"dataset {spec.name}: wrong output with versions {used}: {problem}")
        self._verified.add(key)

    def weights(self) -> dict[str, float]:
        """1 for every training dataset, or 1/baseline time (default thresholds) (§2.1)."""
        if self._weights is None:
            train = [s for s in self.specs if s.train]
            if self.weighting == "none":
                self._weights = {s.name: 1.0 for s in train}
            else:
                base = {k: int(v) for k, v in self._space.default_config().items()}  # type: ignore[arg-type]
                self._weights = {s.name: 1.0 / max(self.run_dataset(base, s, self.repeats).median, 1e-12)
                                 for s in train}
        return self._weights

    def evaluate(self, config: Config) -> Measurement:
        self._space.validate(config)
        start = time.time()
        thresholds = {k: int(v) for k, v in config.items()}  # type: ignore[arg-type]
        weights = self.weights()
        runs = {s.name: self.run_dataset(thresholds, s, self.repeats) for s in self.specs if s.train}
        medians = {d: r.median for d, r in runs.items()}
        log: list[str] = []
        if self.keep_log:
            for d, r in runs.items():
                log.append(f"# dataset {d}")
                log.extend(r.log)
        totals = [sum(r.samples[i] for r in runs.values()) for i in range(self.repeats)]
        extra = {"instrumentation": {d: r.records for d, r in runs.items()},
                 "dataset_samples": {d: r.samples for d, r in runs.items()}}
        if self.weighting != "none":
            extra["weights"] = weights
        objective = sum(weights[d] * t for d, t in medians.items())
        return Measurement.ok(objective, samples=totals, datasets=medians, log=tuple(log), extra=extra,
                              run_s=time.time() - start)

    def validation_times(self, config: Mapping[str, int], names: Sequence[str] | None = None,
                         repeats: int | None = None) -> dict[str, float]:
        """Median run time per validation dataset over ``repeats`` runs (default
        ``validation_repeats``; outputs always checked): the numbers of a validation table
        (Table 6.2). Called on the worker through ``ctx.call``."""
        thresholds = {k: int(v) for k, v in config.items()}
        self._space.validate(Config(thresholds))
        specs = [self.spec(n) for n in names] if names is not None else [s for s in self.specs if not s.train]
        return {s.name: self.run_dataset(thresholds, s, repeats or self.validation_repeats, force_check=True).median
                for s in specs}

    def finalize(self, ctx: FinalizeContext) -> Mapping[str, Any]:
        from searchlab.adapters.futhark._report import finalize_run

        return finalize_run(self, ctx)
