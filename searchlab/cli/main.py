"""The command line: ``python -m searchlab problem=NAME searcher=NAME [key=value ...]``.

A Hydra app over ``searchlab/conf/`` (shipped inside the package, so it works from any
directory after ``pip install``) plus every problem and searcher of :mod:`searchlab.registry`.
Errors that are the user's (a bad value, an incompatible pair) are printed as one line and
exit with status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from searchlab.core.groups import CONF_DIR

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from searchlab.cli.compose import Job
    from searchlab.run.prepare import Prepared

__all__ = ["CONF_DIR", "help_text", "main", "precheck", "resolve_paths", "sweep_job"]

USAGE = """\
usage: python -m searchlab [problem=NAME] [searcher=NAME] [key=value ...]
       python -m searchlab -m searcher=random,exhaustive seed=0,1 ...   (sweep: one run per combination)
       python -m searchlab -m ... hydra/launcher=joblib hydra.launcher.n_jobs=2   (a sweep's jobs through Hydra's launchers)

Runs a searcher on a problem, records every evaluation in <run dir>/results.db and writes
<run dir>/summary.json. Single runs go to outputs/<date>/<time>_<problem>_<searcher>/,
sweeps to outputs/multirun/<date>/<time>/<n>_<overrides>/.

Common overrides:
  seed=N                      seed of every random component (default 0)
  budget.evaluations=N        stop after N evaluations (default 100; budget=small|default|large)
  budget.wall_time_s=S        stop after S seconds
  budget.target=V             stop once the best objective reaches V
  budget.charged_time_s=S     stop once recorded compile+run time reaches S (replayed tables)
  budget.max_failure_rate=F   stop when more than F of the evaluations failed
  budget.max_infeasible_proposals=N  stop after N known-infeasible proposals (not counted above)
  confirm.k=K confirm.rounds=R   re-measure the best K configurations beside the default at the end, R rounds, then
                              until decided (0: off; default 3 x 5 on noisy ones: device, command, replay; docs/measurement.md)
  confirm.max_rounds=N confirm.max_time_s=S confirm.equivalence=E   caps (40, 60 s) and the no-difference band (0.02)
  executor=auto|serial|ray    auto (default): in process unless the problem needs a device, workers > 1 or an address
  executor.workers=N          number of device workers (ray; default: one per GPU, else cores/2)
  executor.timeout_s=S        per-evaluation timeout; the worker is replaced (default 600)
  executor.address=ADDR       join an existing Ray cluster
  resume=RUN_DIR              continue a killed run to its budget (same problem and searcher)
  cache=FILE                  measurement cache shared across runs (SQLite)
  progress=auto|bar|log|off   live progress display
  prior=[PATH,...]            tables/runs of this space on other devices for searcher=transfer* (docs/transfer.md)
  plot=false                  no best_so_far.png in the run directory (default: written beside summary.json)
  live=auto|true|false|URL    the run as an Optuna study that optuna-dashboard shows live (auto: device problems; docs/python.md)
  problem.X=V, searcher.X=V   options of the chosen problem / searcher (listed below; one phrase each:
                              python -m searchlab problem=NAME --help, searcher=NAME --help)

Show a composed config without running: python -m searchlab --cfg job problem=... searcher=...
Hydra's own help: python -m searchlab --hydra-help
"""


def help_text(argv: list[str] | None = None) -> str:
    """The overview, or only the problem / searcher named on the command line (searchlab.cli.helptext)."""
    from searchlab.cli import helptext

    chosen = [a.split("=", 1) for a in argv or [] if a.split("=", 1)[0] in ("problem", "searcher")]
    if chosen:
        return "\n".join(helptext.focused(CONF_DIR, group, name) for group, name in chosen)
    return helptext.overview(CONF_DIR, usage())


def usage() -> str:
    """USAGE with the program spelt as it works when pasted (issue 46, item 1: never a bare ``python``)."""
    from searchlab.core.commands import spelled

    return USAGE.replace("python -m searchlab", spelled("searchlab"))


def main() -> None:
    from searchlab.errors import SearchlabError

    argv = sys.argv[1:]
    try:
        if any(arg in ("-h", "--help") for arg in argv):
            print(help_text(argv))
            return
        from searchlab.cli.config import register_configs

        register_configs()
    except SearchlabError as exc:  # e.g. two installed plugins claim one name
        print(f"searchlab: error: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    status = run_command(argv)
    if status:
        sys.exit(status)


HYDRA_FLAGS = {"--hydra-help", "--version", "--cfg", "-c", "--resolve", "--package", "-p", "--run", "-r", "--multirun",
               "-m", "--shell-completion", "-sc", "--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd",
               "--experimental-rerun", "--info", "-i"}


def dashed(argv: list[str]) -> str | None:
    """The one line for ``--searcher auto`` (or ``--budget.evaluations=5``): overrides are ``key=value``, and
    Hydra's answer was its 8-line usage (issue 46, item 4). None when every flag is Hydra's."""
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if not arg.startswith("-") or name in HYDRA_FLAGS or arg in ("-h", "--help"):
            continue
        key = name.lstrip("-")
        if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("-") and "=" not in argv[i + 1]:
            value = argv[i + 1]
        spelled = f"{key}={value}" if value else f"{key}=VALUE"
        return f"{arg}: not an option; overrides are key=value: use {spelled} (see --help)"
    return None


def _split(argv: list[str]) -> tuple[list[str], bool, bool]:
    """(overrides, multirun, Hydra's own flags: --cfg, --hydra-help, ...)."""
    flags = [a for a in argv if a.startswith("-")]
    multirun = bool(flags) and set(flags) <= {"-m", "--multirun"}
    return [a for a in argv if not a.startswith("-")], multirun, bool(flags) and not multirun


def run_command(argv: list[str]) -> int:
    """Every run of the command line: a fresh run, a resume and each job of a sweep enter here,
    each composed once, prepared (nothing written if refused) and executed as a Run."""
    overrides, multirun, hydra_flags = _split(argv)
    if _refuse_dashed(argv):
        return 2
    if hydra_flags:
        _hydra_main()
        return 0
    return _guarded(overrides, lambda: _run_all(overrides, multirun))


def precheck(argv: list[str]) -> int | None:
    """Compose and check a run (a sweep's first job) without starting or writing anything.

    Returns an exit status when refused (one line on stderr, status 2), else None."""
    overrides, multirun, hydra_flags = _split(argv)
    if _refuse_dashed(argv):
        return 2
    if hydra_flags:
        return None

    def check() -> int:
        from searchlab.cli.compose import compose
        from searchlab.cli.launch import check_sweep

        if multirun:
            check_sweep(overrides)  # every job (issue 37, item 10)
            return 0
        job = compose(overrides)
        _prepare(job, job.run_dir).close()
        return 0

    return _guarded(overrides, check) or None


def _refuse_dashed(argv: list[str]) -> bool:
    line = dashed(argv)
    if line:
        print(f"searchlab: error: {line}", file=sys.stderr, flush=True)
    return line is not None


def _guarded(overrides: list[str], step: Callable[[], int]) -> int:
    """``step``'s status; a user's error as one line (status 2), an interrupt as 130/143."""
    from searchlab.errors import SearchlabError

    try:
        return step()
    except SearchlabError as exc:
        return _report(exc, overrides)
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except OSError as exc:  # a name Hydra looks up as a file: too long for the file system (issue 37, item 11)
        import errno

        if exc.errno != errno.ENAMETOOLONG:
            raise
        longest = max(overrides, key=len, default="")
        print(f"searchlab: error: {longest[:60]}... ({len(longest)} characters): a name too long to be a config "
              f"(see --help for the names)", file=sys.stderr, flush=True)
        return 2
    except Exception as exc:  # a parse error of the override grammar
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        from searchlab.cli.compose import one_line

        if isinstance(exc, (HydraException, OmegaConfBaseException)):
            print(f"searchlab: error: {resolve_paths(one_line(exc), overrides)}", file=sys.stderr, flush=True)
            return 2
        raise


def _prepare(job: Job, run_dir: Path) -> Prepared:
    from searchlab.run.prepare import prepare

    return prepare(job.cfg, run_dir, names=job.names, overrides=job.overrides)


def _run_all(overrides: list[str], multirun: bool) -> int:
    """One job; or a sweep: every job checked first, then run by Hydra's sweeper and launcher."""
    from searchlab.cli.compose import compose

    if not multirun:
        job = compose(overrides)
        return _run_job(job, _prepare(job, job.run_dir))
    from searchlab.cli.launch import check_sweep, launch

    return launch(overrides, check_sweep(overrides), sweep_job)


def sweep_job(cfg: DictConfig) -> int:
    """A sweep's job, as Hydra's launcher runs it (in this process or another): its config composed
    and checked before the sweep started, its directory made by Hydra's ``run_job``."""
    from hydra.core.hydra_config import HydraConfig

    from searchlab.cli.compose import Job

    hydra = cast("DictConfig", HydraConfig.get())  # a DictConfig at run time
    run_dir = Path(str(hydra.runtime.output_dir))
    choices = hydra.runtime.choices
    job = Job(cfg, hydra, tuple(hydra.overrides.task), (str(choices.get("problem")), str(choices.get("searcher"))),
              run_dir, Path(str(hydra.sweep.dir)), str(hydra.sweep.subdir))

    def run() -> int:
        try:
            prepared = _prepare(job, run_dir)
        except BaseException:
            _discard(run_dir)
            raise
        return _run_job(job, prepared, hydra_wrote=True)

    from searchlab.cli import stop

    worker = stop.in_worker()  # a launcher's worker process (joblib, submitit): issue 47, case 5
    if worker:
        stop.busy_worker()
    try:
        status = _guarded(list(job.overrides), run)
    finally:
        if worker:
            stop.quiet_worker()  # idle again: a signal ends it without a traceback
    if status in (130, 143):  # interrupted: no later job starts
        if worker:
            stop.end_worker(status)  # the sweep's process stops the other workers, then exits
        from searchlab.cli.launch import SweepInterrupted

        raise SweepInterrupted(status)
    return status


def _run_job(job: Job, prepared: Prepared, hydra_wrote: bool = False) -> int:
    """Execute a prepared job as a Run; its directory is removed again if it holds no records."""
    from searchlab.cli.compose import configure_logging, save_hydra_files
    from searchlab.errors import SearchlabError
    from searchlab.run.lifecycle import Run

    assert prepared.run_dir is not None
    run_dir = prepared.run_dir
    if not hydra_wrote:  # a sweep's job: Hydra's run_job wrote .hydra/ and configured logging
        configure_logging(job)
    try:
        if not prepared.resuming and not hydra_wrote:
            _save_hydra_files(save_hydra_files, job, run_dir)
        summary = Run(prepared, hydra_dir=str(run_dir)).execute()
        if summary.get("stop_reason") == "same_failures":  # a broken program (searchlab.run.broken): exit 3
            from searchlab.run.broken import BROKEN_STATUS, stopped_line

            print(f"searchlab: error: {stopped_line(summary)}; records: {run_dir.resolve()}", file=sys.stderr,
                  flush=True)
            return BROKEN_STATUS
    except SearchlabError as exc:
        return _report(exc, list(job.overrides))
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    finally:
        if not prepared.resuming:
            _discard(run_dir)
    return 0


def _save_hydra_files(save: Callable[[Job, Path], None], job: Job, run_dir: Path) -> None:
    """``.hydra/``; a full disk is one line, exit 1, nothing kept (issue 37, item 8: OmegaConf.save's traceback)."""
    from searchlab.core.store import is_disk_full
    from searchlab.errors import StoreError, WriteError

    try:
        save(job, run_dir)
    except OSError as exc:
        prepared_error = WriteError if is_disk_full(exc) else StoreError
        what = "the disk is full" if is_disk_full(exc) else (exc.strerror or str(exc))
        raise prepared_error(f"{run_dir / '.hydra'} could not be written ({what}); nothing was kept; free space "
                             f"and run again") from None


def _report(exc: BaseException, overrides: list[str] | None = None) -> int:
    message = resolve_paths(" ".join(str(exc).split()), overrides or [])  # always one line
    print(f"searchlab: error: {message}", file=sys.stderr, flush=True)
    return int(getattr(exc, "exit_status", 2))


def resolve_paths(message: str, overrides: list[str]) -> str:
    """``message`` with each relative path the user gave (an override's value holding a ``/`` or a
    file suffix) shown resolved, so an error says which file was meant whatever the directory."""
    import re

    for override in overrides:  # key=value overrides, or plain paths (python -m searchlab.study RUN_DIR)
        if override.startswith("-"):
            continue
        value = (override.partition("=")[2] if "=" in override else override).strip("'\"")
        if not value or Path(value).is_absolute() or "://" in value or not _looks_like_path(value):
            continue
        if re.fullmatch(r"[-+.\deE]+|\$\{.*\}", value):  # a number or an interpolation, not a path
            continue
        message = re.sub(rf"(?<![\w/.~-]){re.escape(value)}(?![\w/])", str(Path(value).resolve()), message)
    return message


FILE_SUFFIXES = {".json", ".gz", ".yaml", ".yml", ".db", ".fut", ".c", ".cl", ".txt", ".csv", ".tuning", ".png"}


def _looks_like_path(value: str) -> bool:
    """A value holding a ``/``, or ending in a file suffix; a dotted name (``os.system``) or an address
    (``127.0.0.1:1``) is not shown resolved as a path (issue 37, item 11)."""
    return "/" in value or Path(value).suffix.lower() in FILE_SUFFIXES


def _interrupted(exc: KeyboardInterrupt) -> int:
    from searchlab.core.signals import exit_status

    status = exit_status(exc)
    detail = getattr(exc, "detail", "")  # a run's own line: how far it got, how to resume (run.lifecycle)
    print(f"searchlab: interrupted {detail}" if detail else
          f"searchlab: interrupted ({exc or 'SIGINT'}); finished evaluations are recorded", file=sys.stderr, flush=True)
    return status


def _discard(out: Path) -> None:
    """Remove a job directory holding only what Hydra wrote (a refused job made no records)."""
    import shutil

    if out.is_dir() and {p.name for p in out.iterdir()} <= {".hydra", "cli.log"}:
        shutil.rmtree(out, ignore_errors=True)
        for parent in (out.parent, out.parent.parent):
            try:
                parent.rmdir()  # only when empty (a date directory made for this job)
            except OSError:
                break


def _hydra_main() -> None:
    """Hydra's own flags (``--cfg job``, ``--hydra-help``, ``--info``, ...): Hydra's app, whose task
    (where a flag still runs one) enters through the same door as every other run."""
    import hydra

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
    def task(cfg: DictConfig) -> None:
        from hydra.core.hydra_config import HydraConfig

        overrides = list(HydraConfig.get().overrides.task)
        status = run_command(overrides)
        if status:
            sys.exit(status)

    task()
