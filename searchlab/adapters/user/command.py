"""``command``: tune any executable (OpenTuner's use case) from a spec file.

``python -m searchlab problem=command problem.spec=examples/gcc_matmul/command.yaml``.
The spec (YAML or JSON, see :class:`CommandSpec` and docs/byo.md) declares knobs, known
constraints, an optional ``build`` command and a ``run`` command (argument lists, never a
shell line), environment variables and a template file. Knob values reach the program
through ``${name}`` placeholders (:class:`string.Template`: a plain substitution, no
attribute access or code), also ``${workdir}`` and ``${specdir}``; an argument that renders
empty is dropped, so a knob can switch a flag off.

Each worker gets its own working directory (``problem.workdir``, default a fresh temporary
one), where the template is rendered and the commands run. The objective is the run's wall
time, or a number parsed from stdout (a regex) or from a JSON file the run writes, repeated
under the shared measurement protocol (:mod:`searchlab.core.measure`). ``timeout_s`` bounds one
whole evaluation (build and runs): past it the process group is killed and the result is
``TIMEOUT``; a non-zero exit of the build is FAILED(compile), of the run FAILED(runtime),
as is a run whose objective cannot be found.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from searchlab.adapters._default import knob_default
from searchlab.adapters.user._process import Finished, run_process
from searchlab.adapters.user._protocol import given_fields, layered_protocol
from searchlab.core import files
from searchlab.core.buildlog import build_message
from searchlab.core.expr import Expression
from searchlab.core.measure import MeasurementProtocol, measure
from searchlab.core.problem import DeviceInfo, Problem
from searchlab.core.records import Config, Direction, FailureMode, Measurement, Status
from searchlab.core.spaces import KnobSpace, knob_from_spec
from searchlab.errors import ConfigError
from searchlab.interchange import load_document, resolve

KEYS = {"knobs", "constraints", "build", "run", "env", "template", "objective", "timeout_s", "measure", "default"}
OBJECTIVE_KINDS = ("wall_time", "stdout", "json")


@dataclass(frozen=True)
class Objective:
    kind: str = "wall_time"  # wall_time | stdout | json
    pattern: str = ""  # stdout: a regex; its first group (or the whole match) is the value
    file: str = ""  # json: the file the run writes (relative to the working directory)
    key: str = ""  # json: a dotted path to the value
    name: str = "time_s"
    direction: Direction = Direction.MINIMIZE
    noisy: bool = True  # false: the value is exact (a size, a count): no confirm phase re-measures it


@dataclass(frozen=True)
class CommandSpec:
    path: Path
    space: KnobSpace
    build: tuple[Template, ...]
    run: tuple[Template, ...]
    env: Mapping[str, Template]
    template: tuple[Path, str] | None  # (source file, target name in the working directory)
    objective: Objective
    timeout_s: float
    protocol: MeasurementProtocol
    default: Config | None = None  # the spec's ``default:`` (what the user runs today), a member of ``space``


def _templates(values: Any, what: str, allowed: set[str]) -> tuple[Template, ...]:
    if not isinstance(values, list) or not all(isinstance(v, (str, int, float)) for v in values):
        raise ConfigError(f"{what}: must be a list of strings (an argument vector), got {values!r}")
    return tuple(_template(str(v), what, allowed) for v in values)


def _template(text: str, what: str, allowed: set[str]) -> Template:
    t = Template(text)
    if not t.is_valid():
        raise ConfigError(f"{what}: {text!r} is not a valid template (use ${{name}}, and $$ for a dollar)")
    unknown = set(t.get_identifiers()) - allowed
    if unknown:
        raise ConfigError(f"{what}: {text!r} names unknown {sorted(unknown)} (knobs, workdir, specdir)")
    return t


def _objective(raw: Mapping[str, Any] | str | None) -> Objective:
    raw = {"kind": raw} if isinstance(raw, str) else dict(raw or {})
    unknown = set(raw) - set(Objective.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"objective: unknown keys {sorted(unknown)} (known: {sorted(Objective.__dataclass_fields__)})")
    kind = raw.get("kind", "wall_time")
    if kind not in OBJECTIVE_KINDS:
        raise ConfigError(f"objective.kind={kind!r}: must be one of {list(OBJECTIVE_KINDS)}")
    if kind == "stdout":
        try:
            re.compile(str(raw.get("pattern", "")))
        except re.error as exc:
            raise ConfigError(f"objective.pattern={raw.get('pattern')!r} is not a regex: {exc}") from None
        if not raw.get("pattern"):
            raise ConfigError("objective.kind=stdout needs objective.pattern (a regex)")
    if kind == "json" and not (raw.get("file") and raw.get("key")):
        raise ConfigError("objective.kind=json needs objective.file and objective.key")
    direction = raw.get("direction", "minimize")
    if direction not in ("minimize", "maximize"):
        raise ConfigError(f"objective.direction={direction!r}: must be minimize or maximize")
    noisy = raw.get("noisy", True)
    if not isinstance(noisy, bool):
        raise ConfigError(f"objective.noisy={noisy!r}: must be true (a timing: confirmed by re-measuring) or false")
    return Objective(kind, str(raw.get("pattern", "")), str(raw.get("file", "")), str(raw.get("key", "")),
                     str(raw.get("name") or ("time_s" if kind == "wall_time" else "objective")), Direction(direction),
                     noisy)


def read_command_spec(path: str | Path, timeout_s: float | None = None,
                      measure: MeasurementProtocol = MeasurementProtocol()) -> CommandSpec:
    doc = load_document(path, "problem.spec")
    spec_path = resolve(path, "problem.spec")
    unknown = set(doc) - KEYS
    if unknown:
        raise ConfigError(f"problem.spec={str(path)!r}: unknown keys {sorted(unknown)} (known: {sorted(KEYS)})")
    if not isinstance(doc.get("knobs"), dict) or not doc["knobs"]:
        raise ConfigError(f"problem.spec={str(path)!r}: needs knobs (a mapping: name -> list | {{low, high}} | {{choices}})")
    if "run" not in doc:
        raise ConfigError(f"problem.spec={str(path)!r}: needs run (the command, a list of arguments)")
    space = KnobSpace(tuple(knob_from_spec(str(n), s) for n, s in doc["knobs"].items()),
                      tuple(Expression(str(c)) for c in doc.get("constraints") or ()))
    allowed = {*space.names, "workdir", "specdir"}
    template = None
    if doc.get("template"):
        t = doc["template"]
        if not isinstance(t, dict) or set(t) != {"source", "target"} or "/" in str(t["target"]):
            raise ConfigError("template: must be {source: <file>, target: <file name in the working directory>}")
        template = (resolve(t["source"], "template.source", spec_path.parent), str(t["target"]))
        _template(files.read_text(template[0], "template.source"), f"template {t['source']}", allowed)
    env = doc.get("env") or {}
    if not isinstance(env, dict):
        raise ConfigError(f"env: must be a mapping of variable -> value, got {env!r}")
    timeout = float(timeout_s if timeout_s is not None else doc.get("timeout_s", 60.0))
    if not timeout > 0:
        raise ConfigError(f"timeout_s={timeout}: must be > 0")
    protocol = layered_protocol(measure, doc.get("measure"), min_runs=3, max_runs=10, min_time_s=0.0,
                                target_rel_ci=0.05, warmup=0)
    env_templates = {str(k): _template(str(v), f"env.{k}", allowed) for k, v in env.items()}
    return CommandSpec(spec_path, space, _templates(doc.get("build") or [], "build", allowed),
                       _templates(doc["run"], "run", allowed), env_templates, template, _objective(doc.get("objective")),
                       timeout, protocol, knob_default(space, doc.get("default"), "default"))


SCRATCH = "searchlab-command-"  # + the worker's pid: each worker's own directory


def _sweep(base: Path) -> None:
    """Remove the directories of workers that died without their teardown (a Ray actor killed after
    ``executor.timeout_s``; issue 37, item 5): the pid in the name is no longer a live process."""
    for path in base.glob(f"{SCRATCH}*-*"):
        pid = path.name[len(SCRATCH):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lookup(data: Any, key: str) -> Any:
    for part in key.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


class Command(Problem):
    """Any executable (see the module docstring)."""

    name = "command"
    runs_user_code = True  # a program that does not build stops the run early (searchlab.run.broken)

    def __init__(self, spec: str = "???", timeout_s: float | None = None, workdir: str | None = None,
                 measure: MeasurementProtocol = MeasurementProtocol()) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            spec: a command spec, YAML or JSON (examples/gcc_matmul/command.yaml)
            timeout_s: per evaluation (build + runs); null: the spec's timeout_s (default 60)
            workdir: where each worker makes its own directory; null: the system's temporary directory
            measure: the timing protocol, over the spec's measure block (docs/measurement.md)
        """
        if not spec or spec == "???":
            raise ConfigError("problem=command needs problem.spec=<command spec, .yaml or .json>")
        super().__init__()
        self.spec = read_command_spec(spec, timeout_s, measure)
        self.protocol_option = measure
        self.direction = self.spec.objective.direction
        self.objective_name = self.spec.objective.name
        if workdir is not None and not Path(workdir).is_dir():
            raise ConfigError(f"problem.workdir={workdir!r}: not a directory")
        self._dir: Path | None = None

    @property
    def space(self) -> KnobSpace:
        return self.spec.space

    @property
    def noisy(self) -> bool:
        """A run's wall time (or a number it prints) varies from run to run (median CV 18 % for
        examples/gcc_matmul here): the run ends with a confirm phase unless the spec's
        ``objective.noisy: false`` says the value is exact (issue 46, item 3)."""
        return self.spec.objective.noisy

    def default_config(self) -> Config | None:
        """The spec's ``default:``; None: no default to compare with."""
        return self.spec.default

    def fingerprint_params(self) -> Mapping[str, Any]:
        """The spec and template texts (not the files the commands read: a changed program needs a new cache)."""
        template = files.read_text(self.spec.template[0], "template.source") if self.spec.template else ""
        given = given_fields(self.protocol_option)  # the spec's own block is in its text
        return {"spec": files.read_text(self.spec.path, "problem.spec"), "template": template, "timeout_s": self.spec.timeout_s,
                **({"measure": given} if given else {})}

    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        base = self.params.get("workdir") or None
        if base is None:
            _sweep(Path(tempfile.gettempdir()))
        self._dir = Path(tempfile.mkdtemp(prefix=f"{SCRATCH}{os.getpid()}-", dir=base))

    def teardown(self) -> None:
        if self._dir is not None and not self.params.get("workdir"):  # a given workdir is kept to look at
            shutil.rmtree(self._dir, ignore_errors=True)
            _sweep(self._dir.parent)
        self._dir = None

    def _values(self, config: Config) -> dict[str, str]:
        assert self._dir is not None, "setup() first"
        return {**{k: str(v) for k, v in config.items()}, "workdir": str(self._dir), "specdir": str(self.spec.path.parent)}

    def _render(self, config: Config) -> tuple[dict[str, str], dict[str, str]]:
        """The template written into the working directory; (placeholder values, environment)."""
        values = self._values(config)
        assert self._dir is not None
        if self.spec.template:
            source, target = self.spec.template
            (self._dir / target).write_text(Template(files.read_text(source, "template.source")).substitute(values))
        return values, {**os.environ, **{k: t.substitute(values) for k, t in self.spec.env.items()}}

    def _build(self, values: Mapping[str, str], env: Mapping[str, str], deadline: _Deadline) -> Measurement | float:
        """The spec's build: its wall time, or the failure (a non-zero exit leads with the compiler's
        first error line, whole: searchlab.core.buildlog)."""
        assert self._dir is not None
        build_argv = [a for a in (t.substitute(values) for t in self.spec.build) if a]
        built = run_process(build_argv, self._dir, env, deadline.left())
        if built.timed_out:
            return Measurement(Status.TIMEOUT, message=f"build exceeded timeout_s={self.spec.timeout_s}",
                               compile_s=built.wall_s)
        if built.returncode != 0:
            return Measurement.failed(FailureMode.COMPILE, build_message(built.stderr or built.stdout or "(no output)",
                                                                         f"build exited {built.returncode}"),
                                      compile_s=built.wall_s)
        return built.wall_s

    def build_check(self, config: Config) -> str | None:
        """The spec's build with ``config`` (searchlab.run.broken: the default before the search): the
        failure's message, or None (it builds, or the spec has no build)."""
        if not self.spec.build:
            return None
        values, env = self._render(config)
        built = self._build(values, env, _Deadline(self.spec.timeout_s))
        return built.message if isinstance(built, Measurement) and built.status is Status.FAILED else None

    def evaluate(self, config: Config) -> Measurement:
        values, env = self._render(config)
        argv = [a for a in (t.substitute(values) for t in self.spec.run) if a]
        deadline = _Deadline(self.spec.timeout_s)
        compile_s = 0.0
        if self.spec.build:
            built = self._build(values, env, deadline)
            if isinstance(built, Measurement):
                return built
            compile_s = built
        try:
            samples = measure(lambda: self._run_once(argv, env, deadline), self.spec.protocol)
        except _RunFailed as exc:
            if exc.finished.timed_out:
                return Measurement(Status.TIMEOUT, message=f"run exceeded timeout_s={self.spec.timeout_s}", compile_s=compile_s)
            return Measurement.failed(FailureMode.RUNTIME, exc.reason, compile_s=compile_s)
        sensors = {**samples.sensors(), self.objective_name: samples.median, "build_s": compile_s}
        return Measurement.ok(samples.median, samples=samples.values, sensors=sensors, compile_s=compile_s,
                              run_s=deadline.elapsed() - compile_s, extra={"ci95": list(samples.ci95), "cv": samples.cv})

    def _run_once(self, argv: list[str], env: Mapping[str, str], deadline: _Deadline) -> float:
        assert self._dir is not None
        done = run_process(argv, self._dir, env, deadline.left())
        if done.timed_out:
            raise _RunFailed(done, "timeout")
        if done.returncode != 0:
            raise _RunFailed(done, f"run exited {done.returncode}: {done.tail()}")
        objective = self.spec.objective
        if objective.kind == "wall_time":
            return done.wall_s
        try:
            if objective.kind == "stdout":
                match = _search(objective.pattern, done, deadline)
                if match is None:
                    raise _RunFailed(done, f"objective pattern {objective.pattern!r} not found in stdout: {done.tail()}")
                return float(match.group(1) if match.groups() else match.group(0))
            return float(_lookup(files.read_json(self._dir / objective.file, "objective.file"), objective.key))
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise _RunFailed(done, f"objective not readable: {type(exc).__name__}: {exc}") from None


def _search(pattern: str, done: Finished, deadline: _Deadline) -> Any:
    """The objective pattern in stdout, bounded by what is left of the evaluation's timeout (issue 37,
    item 5): ``re`` backtracks without limit (``^(a+)+$`` on 36 a's and a '!' ran for minutes); the
    ``regex`` package's matcher takes a timeout and checks it while it backtracks."""
    import dataclasses

    import regex

    try:
        return regex.search(pattern, done.stdout, timeout=max(deadline.left(), 0.01))
    except TimeoutError:
        raise _RunFailed(dataclasses.replace(done, timed_out=True), "objective pattern timed out") from None


class _RunFailed(Exception):
    def __init__(self, finished: Finished, reason: str) -> None:
        super().__init__(reason)
        self.finished, self.reason = finished, reason


@dataclass
class _Deadline:
    seconds: float
    start: float = field(default=0.0)

    def __post_init__(self) -> None:
        import time

        self.start = time.monotonic()

    def elapsed(self) -> float:
        import time

        return time.monotonic() - self.start

    def left(self) -> float:
        return max(self.seconds - self.elapsed(), 0.0)
