"""``searchlab reproduce EXPERIMENT.json [--out DIR] [--workers N] [--ray-address ADDR] [--allow-code] [--live [STORAGE]]``.

Also ``python -m searchlab reproduce ...``, and ``python -m searchlab.study experiment=FILE [out=DIR] [workers=N]
[ray_address=ADDR]``, which runs this command.

Bad input is one line and exit 2 with nothing written (no directory); a repeat that fails
for good is one line, exit 1, with the resume command; Ctrl-C / SIGTERM is one line with the pasteable resume
command and exit 130 / 143, every finished repeat kept (docs/reference.md, docs/security.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError, SearchlabError

__all__ = ["main", "reproduce"]

PROG = "searchlab reproduce"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Run an autotuning_methodology experiment file with Kernel "
                                     "Tuner's own strategies (simulation mode) and score it with the package's P.")
    parser.add_argument("experiment", help="the experiment file (JSON, schema 1.0.0-1.2.0 as the reference accepts)")
    parser.add_argument("--out", help="output directory (default: outputs/reproduce/<experiment name>); an existing "
                                      "one for the same file is resumed")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: this process for small "
                        "experiments, else one Ray worker per core; 0 or 1: in this process)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster instead of starting one")
    parser.add_argument("--allow-code", action="store_true", help="import the Python files that strategies name in "
                        "custom_search_method_path (they run with your rights; docs/security.md)")
    parser.add_argument("--include-marked", action="store_true", help="pool spaces that chose a searcher's defaults "
                        "into its pooled statistics and tests (default: left out, and marked)")
    parser.add_argument("--live", nargs="?", const="true", default=None, metavar="STORAGE", help="watch it in "
                        "optuna-dashboard: a study per strategy and space, a trial per finished repeat (default "
                        "storage: DIR/live.log; or an RDB URL / journal file path; docs/study.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.workers is not None and not 0 <= args.workers <= 1024:
        parser.error(f"--workers {args.workers}: must be from 0 to 1024")
    if args.workers == 0:
        args.workers = 1  # 0 (no Ray) is what earlier versions called running in this process
    return args


def default_out(name: str) -> Path:
    """``outputs/reproduce/<name>``, the name made a single safe path component (names never leave ``outputs/``)."""
    import hashlib
    import re

    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", name).strip(".")[:80] or "experiment"
    if safe != name:
        safe = f"{safe}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return Path("outputs") / "reproduce" / safe


def resume_command(experiment: str | Path, out: Path, extra: list[str]) -> str:
    """The command that resumes this run, spelt to work when pasted (searchlab.core.commands)."""
    from searchlab.core.commands import command

    return command("searchlab", "reproduce", str(Path(experiment).resolve()), "--out", str(out.resolve()), *extra)


def check_out(root: Path) -> None:
    """Refuse an ``--out`` that cannot be a reproduce directory, before anything is written."""
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--out {str(root)!r}: is a file, not a directory")
    if root.is_dir() and any(root.iterdir()) and not (root / "experiment.sha256").is_file():
        raise ConfigError(f"--out {str(root)!r}: exists and is not a reproduce directory; give a new --out")
    parent = next((p for p in (root, *root.absolute().parents) if p.exists()), Path("/"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {str(root)!r}: {parent} is not writable")


def reproduce(experiment_path: str, out: str | None = None, workers: int | None = None,
              ray_address: str | None = None, quiet: bool = False, allow_code: bool = False,
              include_marked: bool = False, live: str | None = None) -> dict[str, Any]:
    """Run (or resume) and score an experiment file; returns the paths written and the scores."""
    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.progress import Heartbeat
    from searchlab.reproduce.session import Session

    started = time.perf_counter()
    # never silent for long, yet one line when the file is refused at once (bad input)
    with Heartbeat(f"reading {experiment_path} and its spaces", quiet):
        experiment = load_experiment(experiment_path, allow_code)  # refuses before anything is written
    root = Path(out) if out else default_out(experiment.name)
    check_out(root)
    if live is not None:
        from searchlab.run.live import check_live

        check_live(live)  # a bad storage is one line before anything is written
    session = Session(experiment, root, quiet, include_marked, live)
    return session.run(workers, ray_address, started)


def main(argv: list[str] | None = None) -> int:
    from searchlab.core.signals import Interrupted, exit_status, interruptible

    args = _parse(sys.argv[1:] if argv is None else argv)
    extra = [*(["--workers", str(args.workers)] if args.workers else []), *(["--allow-code"] if args.allow_code else []),
             *(["--ray-address", args.ray_address] if args.ray_address else []),
             *(["--live", args.live] if args.live else [])]
    out: Path | None = Path(args.out) if args.out else None

    def where() -> Path:
        nonlocal out
        if out is None:
            try:
                from searchlab.reproduce.experiment import load_experiment

                out = default_out(load_experiment(args.experiment, args.allow_code).name)
            except SearchlabError:
                out = Path("outputs") / "reproduce"
        return out

    try:
        with interruptible() as guard:
            try:
                result = reproduce(args.experiment, args.out, args.workers, args.ray_address, args.quiet,
                                   args.allow_code, args.include_marked, args.live)
            except KeyboardInterrupt as exc:
                raise guard.translate(exc) from None
    except ConfigError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 2
    except Interrupted as exc:
        status = exit_status(exc)
        print(f"{PROG}: interrupted; finished repeats are kept in {where()}; resume: "
              f"{resume_command(args.experiment, where(), extra)}", file=sys.stderr, flush=True)
        return status
    except (SearchlabError, OSError) as exc:  # a repeat that failed for good, a full disk: finished ones are kept
        text = " ".join(str(exc).split())[:500]
        print(f"{PROG}: error: {text}; finished repeats are kept; resume: "
              f"{resume_command(args.experiment, where(), extra)}", file=sys.stderr, flush=True)
        return 1
    print(f"{PROG}: {result['ran']} repeats run; scores: {result['paths']['scores']}; "
          f"report: {result['paths']['html']}", flush=True)
    return 0
