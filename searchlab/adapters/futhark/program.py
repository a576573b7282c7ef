"""``problem=futhark``: tune the thresholds of a real Futhark program (paper 003, docs/futhark.md).

The program is compiled by the real compiler with ``--server`` once per (source, compiler
version, backend) and driven through the ``futhark-server`` package. The space is the
program's own threshold tree (``tuning_params`` / ``tuning_param_class``) with the E_par
values its datasets (``-- ==`` stanzas, ``notune`` = validation) compare against, read from
the ``-L`` log of dry runs (:mod:`searchlab.adapters.futhark._discover`, cached on disk next to the
executable, since the driver and every worker build the problem).

An evaluation runs every training dataset as ``futhark bench`` does: a discarded warm-up
run (here on a second server started with ``-L``, which gives the comparison log and the
output that is checked against ``output``/``auto output``), then timed runs on a server
without logging, repeated under the shared measurement protocol (``searchlab.core.measure``;
``futhark bench``'s own initial phase is 10 runs or 0.5 s). Run time is the server's
``runtime:`` line. The objective is the sum of the per-dataset medians (§2.1).

With ``sizes=true`` the program's block and tile sizes are knobs too
(:mod:`searchlab.adapters.futhark._sizes`): the space is then a knob space, thresholds are
still set live on the servers, and each size assignment runs on its own pair of servers.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import searchlab.adapters.futhark._discover as disc
from searchlab.adapters.futhark._chains import as_ints
from searchlab.adapters.futhark._data import DataSet, materialise, outputs_match
from searchlab.adapters.futhark._program import fixed_runs
from searchlab.adapters.futhark._report import finalize_server_run
from searchlab.adapters.futhark._server import ProgramServer
from searchlab.adapters.futhark._sizes import (
    ServerPool,
    SizeParam,
    Sizes,
    ThresholdSizeSpace,
    size_params,
    user_default,
)
from searchlab.adapters.futhark._stanzas import parse_cases
from searchlab.adapters.futhark._toolchain import BACKENDS, compile_server, futhark_binary, locked, opencl_is_pocl_only
from searchlab.core.heartbeat import heartbeat
from searchlab.core.measure import MeasurementProtocol, measure
from searchlab.core.problem import DeviceInfo, DeviceNeed, FinalizeContext, Problem
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.spaces import Threshold, ThresholdDataset, ThresholdTree
from searchlab.errors import ConfigError, EvaluationError

# futhark bench's protocol made adaptive: one warm-up (besides the logged run), then at least 10
# timed runs (futhark bench -r 10) until 0.05 s are measured and the median's 95 % interval is
# within 2 %, at most 50. One server call is one run of the entry point (the server does not
# repeat it), so each run is one sample: no Batch timer.
BENCH_LIKE = MeasurementProtocol(min_runs=10, max_runs=50, min_time_s=0.05, target_rel_ci=0.02, warmup=1)


class FutharkServerProblem(Problem):
    name = "futhark"
    device_need = DeviceNeed.OPENCL
    capabilities = frozenset({"instrumentation", "datasets", "validation"})
    runs_user_code = True  # the user's program: identical failures before any success stop early
    objective_name = "time_s"
    code_version = "2"  # 2: a threshold of 0 means the default, as in a .tuning file (split, _discover)
    default_validation: tuple[str, ...] = ()
    renamed_options: ClassVar[Mapping[str, str]] = {
        name: f"problem.measure.{new}" for name, new in
        (("runs", "min_runs"), ("max_runs", "max_runs"), ("min_time_s", "min_time_s"), ("target_rel_ci", "target_rel_ci"))}

    def __init__(
        self,
        program: str,  # the .fut file; its `-- ==` blocks give the datasets
        backend: str = "opencl",  # opencl | c | multicore
        measure: MeasurementProtocol = BENCH_LIKE,  # timed runs per training dataset, after the logged warm-up
        validation_runs: int = 10,  # timed runs per validation dataset (report)
        check: str = "first",  # check outputs once per dataset and code path, or always
        log: bool = True,  # keep the -L comparison log in the records
        reference_tuning: str | None = None,  # .tuning file of a reference (e.g. futhark autotune's) for the report
        seed: int = 0,  # random input data (futhark dataset --seed)
        rtol: float = 1e-3,  # output check tolerance
        atol: float = 1e-3,  # output check tolerance
        validation: Sequence[str] | None = None,  # validation dataset names (Listing 4.1); the rest train
        sizes: bool = False,  # also tune the block/tile sizes (a knob space; one server pair per size setting)
        # what you run today ({name: value}; the rest: Futhark's defaults). Typed Any: OmegaConf cannot
        # override an Optional[Dict] that is null, nor add keys to an empty typed mapping without "+".
        default: Any = None,  # what you run today ({name: value}; the rest: Futhark's defaults)
    ) -> None:
        if not program:
            raise ConfigError("problem.program: give the .fut file to tune (problem.program=PATH.fut)")
        source = Path(program).expanduser().resolve()
        if source.suffix != ".fut" or not source.is_file():
            raise ConfigError(f"problem.program={program}: must be an existing .fut file")
        if backend not in BACKENDS:
            raise ConfigError(f"problem.backend={backend!r}: must be one of {list(BACKENDS)}")
        if check not in ("first", "always"):
            raise ConfigError(f"problem.check={check!r}: must be 'first' (per dataset and code path) or 'always'")
        if isinstance(validation_runs, bool) or not isinstance(validation_runs, int) or validation_runs < 1:
            raise ConfigError(f"problem.validation_runs={validation_runs!r}: must be a positive integer")
        if not isinstance(sizes, bool):
            raise ConfigError(f"problem.sizes={sizes!r}: must be true (tune block/tile sizes too) or false")
        self.validation = tuple(str(v) for v in (self.default_validation if validation is None else validation))
        self.protocol, self.sizes = measure, sizes
        super().__init__()
        self.source, self.backend, self.seed = source, backend, seed
        self.check, self.keep_log, self.reference_tuning = check, log, reference_tuning
        self.validation_runs, self.rtol, self.atol = validation_runs, rtol, atol
        self.binary = futhark_binary()
        self.cases = parse_cases(source.read_text(), str(program), self.validation)
        self.exe = compile_server(source, backend, self.binary)
        self.data = {c.name: materialise(c, source, self.exe.parent, self.binary, seed, i)
                     for i, c in enumerate(self.cases)}
        self.tree = self._discover()
        self._space: ThresholdTree | ThresholdSizeSpace = self.tree
        if sizes:
            if not self.size_params:
                raise ConfigError(f"problem.sizes=true: {source.name} compiled for {backend} has no block or tile "
                                  "size parameters to tune")
            self._space = ThresholdSizeSpace.build(self.tree, self.size_params)
        self._default = user_default(self._space, self.tree, self.size_params if sizes else (), default or None)
        self._pool = ServerPool(self._start_server)
        self._verified: set[tuple[str, Sizes, tuple[tuple[str, bool], ...]]] = set()

    # -- space ------------------------------------------------------------------------------
    @property
    def space(self) -> ThresholdTree | ThresholdSizeSpace:
        """The threshold tree, or with ``sizes=true`` thresholds and sizes as one knob space."""
        return self._space

    def default_config(self) -> Config:
        """``problem.default`` over Futhark's defaults (no ``.tuning`` file): the confirm phase, the
        validation table's "untuned" row and the verdict compare the tuned result with it."""
        return self._default

    @property
    def code_versions(self) -> int:
        """Leaves of the threshold forest: the code versions the thresholds choose between."""
        return len(self.tree.thresholds) + len(self.tree.children(None))

    def _server_opts(self, log: bool, sizes: Sizes = ()) -> list[str]:
        """Options of one server: the sizes (fixed when it builds its kernels) and, at the
        default sizes only, the OpenCL cache file: writing one makes pocl compile every kernel
        of the program (≈ 23 s CPU for a small matmul) where a server without it compiles only
        the kernels it launches (≈ 1 s) and pocl's own kernel cache serves the next server. On a
        machine whose only OpenCL is pocl no server gets one (issue 46: ≈ 50 s of a first
        ``make demo``); elsewhere (a GPU driver) the default sizes keep it."""
        opts = [f"--param={name}={value}" for name, value in sizes]
        if self.backend == "opencl" and not sizes and not opencl_is_pocl_only():
            opts += ["--cache-file", str(self.exe.with_suffix(".cache"))]
        return [*opts, "-L"] if log else opts

    def _start_server(self, sizes: Sizes, log: bool) -> ProgramServer:
        return ProgramServer(self.exe, *self._server_opts(log, sizes))

    def split(self, params: Mapping[str, int]) -> tuple[dict[str, int], Sizes]:
        """A configuration as (thresholds, the sizes that differ from the device's default).

        A threshold of 0 is sent as the device's default threshold: that is what the program makes
        of a 0 read from a ``.tuning`` file at start-up (Futhark's runtime replaces every tuning
        parameter that is 0 by its class's default, for thresholds the device's), while
        ``set_tuning_param`` on a running server would keep the 0. Measured live, 0 would be a
        configuration no ``.tuning`` file can give (docs/futhark.md, "Why a tuned LUD was slower
        under futhark bench")."""
        thresholds = {k: int(v) or self.default_threshold for k, v in params.items() if k not in self._size_by_name}
        sizes = tuple(sorted((name, int(params[name])) for name, p in self._size_by_name.items()
                             if name in params and int(params[name]) != p.default))
        return thresholds, sizes

    def _discover(self) -> ThresholdTree:
        split = hashlib.sha256(repr(sorted(c.name for c in self.cases if not c.train)).encode()).hexdigest()[:8]
        cache = self.exe.parent / f"space-{self.seed}-{split}.json"
        with locked(self.exe.parent):
            if not cache.exists():
                with heartbeat("prepare", f"discovering the tuning parameters of {self.source.name} (dry runs; "
                                          "once, cached after)"):
                    cache.write_text(json.dumps(self._dry_runs()))
        spec = json.loads(cache.read_text())
        thresholds = tuple(Threshold(**t) for t in spec["thresholds"])
        if not thresholds:
            raise ConfigError(f"problem.program={self.source.name}: the compiled program has no thresholds to tune")
        self.classes = dict(spec["classes"])
        info = spec["sizes"]
        # what a 0 becomes at start-up: the device's default threshold (-L "Default threshold: N")
        self.default_threshold = int(info["defaults"].get("threshold", min(t.default for t in thresholds)))
        self.size_params: tuple[SizeParam, ...] = size_params(info["classes"], info["defaults"], info["limits"])
        self._size_by_name = {p.name: p for p in self.size_params}
        for data in self.data.values():
            entry = spec["entries"][data.entry]
            data.input_types = tuple(t.lstrip("*") for t in entry["inputs"])
            data.consumes = any(t.startswith("*") for t in entry["inputs"])
            data.n_outputs = int(entry["outputs"])
        datasets = tuple(ThresholdDataset(d["name"], disc.positive(d["values"]), d["train"]) for d in spec["datasets"])
        return ThresholdTree(thresholds, datasets)

    def _dry_runs(self) -> dict[str, Any]:
        server = ProgramServer(self.exe, *self._server_opts(True))
        try:
            return disc.dry_runs(server, self.cases, self.data)
        finally:
            server.close()

    def print_params(self) -> list[str]:
        sizes = [f"{p.name} ({p.cls}, default {p.default}: {list(p.values)})" for p in self.size_params]
        return [*(f"{name} ({text})" for name, text in self.classes.items()), *(sizes if self.sizes else [])]

    def fingerprint_params(self) -> Mapping[str, Any]:
        """The resolved program and validation datasets (a default and its spelled-out value are
        one problem); ``sizes`` only when on, as before the option existed."""
        skip = ("log", "reference_tuning", "validation_runs", "default", *(() if self.sizes else ("sizes",)))
        keep = {k: v for k, v in self.params.items() if k not in skip}
        return {**keep, "program": str(self.source), "validation": list(self.validation),
                "executable": self.exe.parent.name}

    # -- device -----------------------------------------------------------------------------
    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        self._pool.get((), True)  # a program whose server cannot start fails here

    def teardown(self) -> None:
        self._pool.close()

    def _input(self, server: ProgramServer, data: DataSet) -> list[str]:
        """Input variables on a server: restored once, or before every run if the entry consumes them."""
        if data.consumes or data.name not in server.inputs:
            server.inputs[data.name] = server.restore(data.input, data.input_types)
        return server.inputs[data.name]

    def _run_once(self, server: ProgramServer, data: DataSet) -> float:
        seconds, outs, _ = server.call(data.entry, self._input(server, data), data.n_outputs)
        server.drop(outs)
        return seconds

    def _logged_run(self, data: DataSet, params: dict[str, int], sizes: Sizes, force_check: bool) -> list[str]:
        """futhark bench's warm-up run, on the -L server: the comparison log; output checked
        (once per dataset, size assignment and code path)."""
        logging: ProgramServer = self._pool.get(sizes, True)
        logging.set_params(params)
        _, outs, log = logging.call(data.entry, self._input(logging, data), data.n_outputs)
        path = tuple((n, b) for n, _, b in disc.comparisons(log))
        if data.expected is not None and (force_check or self.check == "always"
                                          or (data.name, sizes, path) not in self._verified):
            problem = outputs_match(logging.fetch(outs), data.expected, self.rtol, self.atol)
            if problem is not None:
                logging.drop(outs)
                raise EvaluationError(FailureMode.WRONG_OUTPUT, f"dataset {data.name}: {problem}")
            self._verified.add((data.name, sizes, path))
        logging.drop(outs)
        return log

    def run_dataset(self, params: Mapping[str, int], name: str, protocol: MeasurementProtocol,
                    force_check: bool = False) -> tuple[Any, list[str]]:
        """Thresholds are set on the running servers; sizes choose the servers."""
        data = self.data[name]
        thresholds, sizes = self.split(params)
        try:
            log = self._logged_run(data, thresholds, sizes, force_check)
            timing = self._pool.get(sizes, False)
            timing.set_params(thresholds)
            return measure(lambda: self._run_once(timing, data), protocol), log
        except EvaluationError as exc:
            if exc.mode in (FailureMode.CRASH, FailureMode.RUNTIME, FailureMode.LAUNCH):
                self.teardown()  # a dead or failed server: the next evaluation starts fresh ones
            if sizes and exc.mode is not FailureMode.WRONG_OUTPUT:
                raise EvaluationError(exc.mode, f"with sizes {dict(sizes)}: {exc.message}") from None
            raise

    def timed_runs(self, params: Mapping[str, int], name: str, runs: int, as_given: bool = False) -> list[float]:
        """Seconds of ``runs`` timed runs of dataset ``name`` after one warm-up, on the timing server of the
        default sizes, thresholds set live as an evaluation sets them (a 0 becomes the default, as a
        ``.tuning`` file gives it) or ``as_given`` (a 0 sent as 0). Checking our timing against
        ``futhark bench`` (bench/futhark_check.py) needs exactly this and nothing of the protocol."""
        data = self.data[name]
        server = self._pool.get((), False)
        server.set_params(dict(params) if as_given else self.split(params)[0])
        self._run_once(server, data)
        return [self._run_once(server, data) for _ in range(runs)]

    def evaluate(self, config: Config) -> Measurement:
        if config.key not in (self.space.default_config().key, self._default.key):  # off the plateau grid, measured too
            self._space.validate(config)
        start = time.time()
        params = as_ints(config)
        runs = {d.name: self.run_dataset(params, d.name, self.protocol) for d in self.tree.train_datasets()}
        medians = {d: s.median for d, (s, _) in runs.items()}
        log: list[str] = []
        if self.keep_log:
            for d, (_, lines) in runs.items():
                log.extend([f"# dataset {d}", *lines])
        n = min(len(s.values) for s, _ in runs.values())
        totals = [sum(s.values[i] for s, _ in runs.values()) for i in range(n)]
        sensors = {"runs": float(sum(len(s.values) for s, _ in runs.values())),
                   "cv": max(s.cv for s, _ in runs.values())}
        extra = {"dataset_samples": {d: list(s.values) for d, (s, _) in runs.items()},
                 "dataset_ci95": {d: list(s.ci95) for d, (s, _) in runs.items()},
                 "dataset_cv": {d: s.cv for d, (s, _) in runs.items()}}
        return Measurement.ok(sum(medians.values()), samples=totals, datasets=medians, log=tuple(log),
                              sensors=sensors, extra=extra, run_s=time.time() - start)

    def validation_times(self, config: Mapping[str, int], names: list[str] | None = None,
                         runs: int | None = None) -> dict[str, Any]:
        """Median and 95 % interval per validation dataset over ``runs`` timed runs (default
        ``validation_runs``; outputs always checked); what the mapping leaves out stays at its
        default (empty: untuned)."""
        params = as_ints(config)
        protocol = fixed_runs(self.protocol, runs or self.validation_runs)
        names = names if names is not None else [d.name for d in self.tree.validation_datasets()]
        out = {}
        for name in names:
            samples, _ = self.run_dataset(params, name, protocol, force_check=True)
            out[name] = {"median": samples.median, "ci95": list(samples.ci95), "cv": samples.cv}
        return out

    def finalize(self, ctx: FinalizeContext) -> Mapping[str, Any]:
        return finalize_server_run(self, ctx)
