"""``searchlab reproduce EXPERIMENT.json [--out DIR] [--workers N] [--ray-address ADDR]``.

Also ``python -m searchlab reproduce ...`` and ``python -m searchlab.study experiment=FILE [out=DIR]
[workers=N] [ray_address=ADDR]``. Bad input is one line and exit 2 with nothing written; Ctrl-C (or SIGTERM)
is one line with the pasteable resume command and exit 130 (143), every finished repeat kept.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError, SearchlabError

__all__ = ["main", "reproduce"]

PROG = "searchlab reproduce"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Run an autotuning_methodology schema-1.2.0 experiment "
                                     "file (Kernel Tuner's simulation mode) and score it with the package's P.")
    parser.add_argument("experiment", help="the experiment file (JSON, schema 1.2.0)")
    parser.add_argument("--out", help="output directory (default: outputs/reproduce/<experiment name>); "
                                      "an existing one for the same file is resumed")
    parser.add_argument("--workers", type=int, default=None, help="Ray workers on this machine (default: its cores; "
                                                                  "0: no Ray, in this process)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster instead of starting one")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 0:
        parser.error(f"--workers {args.workers}: must be 0 or more")
    return args


def resume_command(experiment: str, out: Path) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, "-m", "searchlab", "reproduce",
                                             str(Path(experiment).resolve()), "--out", str(out.resolve())))


def reproduce(experiment_path: str, out: str | None = None, workers: int | None = None,
              ray_address: str | None = None, quiet: bool = False) -> dict[str, Any]:
    """Run (or resume) and score an experiment file; returns the paths written and the scores."""
    import os

    from searchlab.reproduce.execute import run_all
    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.methodology import export
    from searchlab.reproduce.outputs import write_outputs
    from searchlab.reproduce.plan import make_plan, statistics
    from searchlab.reproduce.scoring import descriptions, score
    from searchlab.reproduce.store import RepeatStore

    experiment = load_experiment(experiment_path)  # refuses before anything is written
    root = Path(out) if out else Path("outputs") / "reproduce" / experiment.name.replace(" ", "_")
    stats = {s.key: statistics(experiment, s) for s in experiment.spaces}
    store = RepeatStore(root)
    fresh = not root.exists()
    try:
        store.claim(experiment.path)
        plans = make_plan(experiment, root, stats)
    except BaseException:
        if fresh and root.exists():
            import shutil

            shutil.rmtree(root, ignore_errors=True)
        raise
    started = time.perf_counter()
    ran = run_all(plans, store, (os.cpu_count() or 1) if workers is None else workers, ray_address, quiet)
    run_wall = time.perf_counter() - started
    repeats = {p.group.key: [store.load(p.group.key, i)["results"] for i in range(p.group.repeats)] for p in plans}
    descs = descriptions([p.group for p in plans], repeats, list(experiment.time_keys))
    scores = score(experiment, stats, descs)
    reference_file = export(experiment, descs, root)
    paths = write_outputs(experiment, scores, root, {"repeats run now": ran, "run wall time (s)": round(run_wall, 2),
                                                     "scoring and report wall time (s)":
                                                         round(time.perf_counter() - started - run_wall, 2)})
    paths["methodology"] = str(reference_file)
    return {"paths": paths, "scores": scores, "root": root, "ran": ran}


def _sigterm(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt("SIGTERM")


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    out = Path(args.out) if args.out else None
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        result = reproduce(args.experiment, args.out, args.workers, args.ray_address, args.quiet)
    except SearchlabError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 2
    except RuntimeError as exc:  # the reference's rule (too few valid results in 20 attempts) or a worker's failure
        last = [line for line in str(exc).strip().splitlines() if line.strip()][-1:] or [type(exc).__name__]
        print(f"{PROG}: error: {' '.join(last[0].split())[:400]}; finished repeats are kept; resume: "
              f"{resume_command(args.experiment, out or Path('outputs/reproduce'))}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt as exc:
        if out is None:
            try:
                from searchlab.reproduce.experiment import load_experiment

                out = Path("outputs") / "reproduce" / load_experiment(args.experiment).name.replace(" ", "_")
            except SearchlabError:
                out = Path("outputs") / "reproduce"
        status = 143 if str(exc) == "SIGTERM" else 130
        print(f"{PROG}: interrupted; finished repeats are kept in {out}; resume: "
              f"{resume_command(args.experiment, out)}", file=sys.stderr, flush=True)
        return status
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"{PROG}: {result['ran']} repeats run; scores: {result['paths']['scores']}; "
          f"report: {result['paths']['html']}", flush=True)
    return 0


def study_main(items: list[str]) -> int:
    """``python -m searchlab.study experiment=FILE [out=DIR] [workers=N] [ray_address=ADDR]``."""
    keys = {"experiment": None, "out": "--out", "workers": "--workers", "ray_address": "--ray-address"}
    argv: list[str] = []
    for item in items:
        key, _, value = item.partition("=")
        if key not in keys or not value:
            raise ConfigError(f"{item!r}: with experiment=FILE give only out=, workers=, ray_address=")
        argv += [value] if keys[key] is None else [str(keys[key]), value]
    return main(argv)
