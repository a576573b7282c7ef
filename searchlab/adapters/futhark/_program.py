"""The problem base of the Futhark-style programs (paper 003): space, evaluation, validation.

A subclass describes a program: its parallel constructs (:class:`Chain`), its datasets per
size preset (tagged train "tune" / validation "notune" as in Listing 4.1), its OpenCL
sources and a host program. The threshold tree and every dataset's E_par values come from
a dry run of that host program, so the comparisons the tuners see are exactly those the
program makes. An evaluation runs every training dataset under the shared measurement protocol
(:func:`searchlab.core.measure.measure`, ``problem.measure.*``: the first run, a warm-up by
default, is checked against numpy; each run's time is the sum of its kernels' profiling
events) and reports the summed medians (§2.1), the per-dataset medians, all samples, the
comparison log and per-iteration instrumentation (each tag's median over the timed runs).
"""

from __future__ import annotations

import statistics
import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from searchlab.adapters.futhark._chains import Chain, as_ints, chain_thresholds, param_class, threshold_names
from searchlab.adapters.futhark._report import finalize_run
from searchlab.adapters.futhark._runtime import Execution, Limits, Tag
from searchlab.core.measure import MeasurementProtocol, Samples, measure
from searchlab.core.problem import DeviceInfo, DeviceNeed, FinalizeContext, Problem
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.spaces import ThresholdDataset, ThresholdTree
from searchlab.errors import ConfigError, EvaluationError

PRESETS = ("cpu", "gpu")
# The imitations' protocol: a checked warm-up run, then 10 profiled runs (the former
# ``repeats=10``); their runs are milliseconds of kernel-event time on pocl, so a fixed count.
FIXED_10 = MeasurementProtocol(min_runs=10, max_runs=10, min_time_s=0.0, target_rel_ci=0.0, warmup=1)


def fixed_runs(protocol: MeasurementProtocol, runs: int) -> MeasurementProtocol:
    """``protocol`` with exactly ``runs`` timed runs (a validation table's cells: every
    configuration gets the same number of runs in a round)."""
    return replace(protocol, min_runs=runs, max_runs=runs, min_time_s=0.0, target_rel_ci=0.0)


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    train: bool
    size: Mapping[str, int] = field(default_factory=dict)


@dataclass
class DatasetRun:
    """What one dataset gave under one configuration."""

    samples: Samples
    log: list[str]
    records: list[dict[str, Any]]

    @property
    def median(self) -> float:
        return self.samples.median


class FutharkProgram(Problem):
    device_need = DeviceNeed.OPENCL
    capabilities = frozenset({"instrumentation", "datasets", "validation"})
    objective_name = "time_s"
    chains: ClassVar[tuple[Chain, ...]] = ()
    source: ClassVar[str] = ""
    renamed_options: ClassVar[Mapping[str, str]] = {
        "repeats": "problem.measure.min_runs and problem.measure.max_runs (a fixed count: both)",
        "validation_repeats": "problem.validation_runs"}

    def __init__(
        self,
        preset: str = "cpu",  # cpu (small datasets, for CI on pocl) | gpu (Listing 4.1's sizes)
        measure: MeasurementProtocol = FIXED_10,  # the protocol of every training dataset (docs/measurement.md)
        validation_runs: int = 0,  # profiled runs per validation dataset in the report; 0: 3 x measure.min_runs
        check: str = "first",  # compare outputs with numpy on the first run of each version/dataset, or always
        weighting: str = "none",  # none | baseline: each dataset relative to its untuned time (§2.1)
        log: bool = True,  # keep the comparison log (Compared NAME <= VALUE: true.)
        reference_tuning: str | None = None,  # .tuning file of the exhaustive best (validation report)
        seed: int = 0,  # input data
    ) -> None:
        if preset not in PRESETS:
            raise ConfigError(f"problem.preset={preset!r}: must be one of {list(PRESETS)}")
        if isinstance(validation_runs, bool) or not isinstance(validation_runs, int) or validation_runs < 0:
            raise ConfigError(f"problem.validation_runs={validation_runs!r}: must be >= 0 (0: 3 x measure.min_runs)")
        if check not in ("first", "always"):
            raise ConfigError(f"problem.check={check!r}: must be 'first' (first run of each version and "
                              "dataset) or 'always'")
        if weighting not in ("none", "baseline"):
            raise ConfigError(f"problem.weighting={weighting!r}: must be 'none' or 'baseline' (paper 003 §2.1)")
        super().__init__()
        self.preset, self.protocol, self.check, self.weighting, self.seed = preset, measure, check, weighting, seed
        self.validation_runs = validation_runs or 3 * measure.min_runs
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
        return {k: v for k, v in self.params.items() if k not in ("log", "reference_tuning", "validation_runs")}

    # -- device -----------------------------------------------------------------------------
    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        import pyopencl as cl

        from searchlab.core.opencl import open_device

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
    def run_dataset(self, config: Mapping[str, int], spec: DatasetSpec, protocol: MeasurementProtocol,
                    force_check: bool = False) -> DatasetRun:
        """Runs under ``protocol``; the first (the warm-up unless ``warmup=0``) is checked and gives the log."""
        data = self._dataset(spec)
        chains = {c.construct: c for c in self.chains}
        runs: list[tuple[Execution, dict[Tag, float]]] = []

        def run_once() -> float:
            self.reset(data)
            rt = Execution(chains, self.names, config, self.cl, self._kernels, self.limits, self.group_size)
            self.program(rt, spec, data)
            total, tags = rt.times()
            if not runs:
                self._check(spec, data, rt, force_check)
            runs.append((rt, tags))
            return total

        samples = measure(run_once, protocol)
        first = runs[0][0]
        timed = [tags for _, tags in runs[len(runs) - len(samples.values):]]
        records = [{"construct": t.construct, "iteration": t.iteration, "version": t.version,
                    "leaf": list(t.leaf), "comparisons": [list(c) for c in t.comparisons],
                    "time_s": statistics.median(p[t] for p in timed)} for t in first.tags]
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
                base = as_ints(self._space.default_config())
                self._weights = {s.name: 1.0 / max(self.run_dataset(base, s, self.protocol).median, 1e-12)
                                 for s in train}
        return self._weights

    def evaluate(self, config: Config) -> Measurement:
        self._space.validate(config)
        start = time.time()
        thresholds = as_ints(config)
        weights = self.weights()
        runs = {s.name: self.run_dataset(thresholds, s, self.protocol) for s in self.specs if s.train}
        medians = {d: r.median for d, r in runs.items()}
        log: list[str] = []
        if self.keep_log:
            for d, r in runs.items():
                log.append(f"# dataset {d}")
                log.extend(r.log)
        n = min(len(r.samples.values) for r in runs.values())
        totals = [sum(r.samples.values[i] for r in runs.values()) for i in range(n)]
        sensors = {"runs": float(sum(len(r.samples.values) for r in runs.values())),
                   "cv": max(r.samples.cv for r in runs.values())}
        extra: dict[str, Any] = {"instrumentation": {d: r.records for d, r in runs.items()},
                                 "dataset_samples": {d: list(r.samples.values) for d, r in runs.items()}}
        if self.weighting != "none":
            extra["weights"] = weights
        objective = sum(weights[d] * t for d, t in medians.items())
        return Measurement.ok(objective, samples=totals, datasets=medians, log=tuple(log), sensors=sensors,
                              extra=extra, run_s=time.time() - start)

    def validation_times(self, config: Mapping[str, int], names: Sequence[str] | None = None,
                         runs: int | None = None) -> dict[str, float]:
        """Median run time per validation dataset over ``runs`` timed runs (default
        ``validation_runs``; outputs always checked): the numbers of a validation table
        (Table 6.2). Called on the worker through ``ctx.call``."""
        thresholds = as_ints(config)
        self._space.validate(Config(thresholds))
        specs = [self.spec(n) for n in names] if names is not None else [s for s in self.specs if not s.train]
        protocol = fixed_runs(self.protocol, runs or self.validation_runs)
        return {s.name: self.run_dataset(thresholds, s, protocol, force_check=True).median for s in specs}

    def finalize(self, ctx: FinalizeContext) -> Mapping[str, Any]:
        return finalize_run(self, ctx)
