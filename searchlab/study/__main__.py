"""``python -m searchlab.study``: aggregate recorded runs, or run a study grid, and report.

    python -m searchlab.study RUN_DIR [RUN_DIR ...] [--out DIR] [--allow-mixed] [--reference R]
    python -m searchlab.study study=NAME [key=value ...] [RUN_DIR ...] [--out DIR]

Errors that are the user's are printed as one line and exit with status 2. Ctrl-C prints one line with the
command that resumes the study (every finished run is kept) and exits with 130.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from searchlab.core.heartbeat import heartbeat
from searchlab.errors import ConfigError, SearchlabError

EPILOG = """\
examples:
  python -m searchlab -m problem=synthetic_knobs searcher=random,exhaustive seed=0,1,2 executor=serial
  python -m searchlab.study outputs/multirun/2025-01-01/12-00-00          # report into <dir>/study/
  python -m searchlab.study study=synthetic_replay seeds=20               # run a grid of replays, then report
  python -m searchlab.study study=synthetic_replay '~searchers.uct' +searchers.ex=exhaustive budget.evaluations=50
outputs: report.html (self-contained), summary.md, metrics.csv, metrics.parquet, evaluations.parquet
"""


def parse(argv: list[str]) -> argparse.Namespace:
    from searchlab.cli.compose import config_names
    from searchlab.core.commands import spelled

    parser = argparse.ArgumentParser(
        prog=spelled("searchlab.study"), epilog=EPILOG.replace("python -m searchlab", spelled()).replace(
            f"{spelled()}.study", spelled("searchlab.study")), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare searchers: aggregate run directories (searched recursively for results.db), "
                    f"or run a study grid from conf/study/ (study=NAME; available: {', '.join(config_names('study'))}).")
    parser.add_argument("items", nargs="*", metavar="RUN_DIR | study=NAME | key=value",
                        help="run directories (or results.db files); study=NAME and its overrides")
    parser.add_argument("--out", help="where to write the report (default: <the one RUN_DIR>/study, "
                                      "else outputs/study/<date>/<time>_<name>)")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="pool runs of one problem with different fingerprints, normalising each")
    parser.add_argument("--reference", default=None, choices=("auto", "table", "known", "study"),
                        help="what fractions of peak are normalised to (default auto: table optimum, else the "
                             "problem's known optimum, else the best seen in the study)")
    parser.add_argument("--name", default=None, help="the study's name in the report")
    return parser.parse_args(argv)


def _aggregate_only(paths: list[str], args: argparse.Namespace) -> dict[str, object]:
    from searchlab.study.analysis.collect import collect_runs
    from searchlab.study.analysis.outputs import default_study_dir, report

    if args.out:
        out = Path(args.out)
    elif len(paths) == 1 and Path(paths[0]).is_dir():
        out = Path(paths[0]) / "study"
    else:
        out = default_study_dir(args.name or "aggregate")
    started = time.time()
    runs, notes = collect_runs(paths, allow_mixed=args.allow_mixed)
    meta = {"name": args.name or (Path(paths[0]).resolve().name if len(paths) == 1 else "aggregate"),
            "mode": "aggregate", "sources": " ".join(paths), "directory": str(out.resolve())}
    result = report(runs, notes, out, meta, args.reference or "auto")
    result["meta"]["total wall time (s)"] = round(time.time() - started, 2)
    return result


def resume_command(argv: list[str], study_dir: Path) -> str:
    """The command that goes on with an interrupted study: the same arguments (paths made absolute), ``--out`` the
    study's directory, this interpreter; quoted for a POSIX shell (Hydra reads the items as they were given)."""
    items: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
            continue
        if item == "--out":
            skip = True
            continue
        if item.startswith("--out="):
            continue
        items.append(str(Path(item).resolve()) if not item.startswith("-") and "=" not in item and Path(item).exists()
                     else item)
    return shlex.join([sys.executable, "-m", "searchlab.study", *items, "--out", str(study_dir)])


def _reproduce(items: list[str]) -> int:
    """``experiment=FILE [out=DIR] [workers=N] [ray_address=ADDR]``: ``searchlab reproduce`` in a child process
    (searchlab.reproduce draws with the study's figure stack and tests with its statistics, so the study does not
    import it back: one direction between the two packages). Its exit status is this one's; Ctrl-C reaches both
    (the child reports it), SIGTERM is passed on."""
    import signal
    import subprocess

    keys = {"experiment": None, "out": "--out", "workers": "--workers", "ray_address": "--ray-address"}
    args: list[str] = []
    for item in items:
        key, _, value = item.partition("=")
        if key not in keys or not value:
            raise ConfigError(f"{item!r}: with experiment=FILE give only out=, workers=, ray_address=")
        args += [value] if keys[key] is None else [str(keys[key]), value]
    proc = subprocess.Popen([sys.executable, "-m", "searchlab", "reproduce", *args])
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the child has it too, and answers with its resume line
    signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signal.SIGTERM))
    try:
        return proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(a.startswith("experiment=") for a in argv):  # an autotuning_methodology experiment file (issue 45)
        try:
            return _reproduce(argv)
        except SearchlabError as exc:
            print(f"searchlab.study: error: {exc}", file=sys.stderr, flush=True)
            return 2
    from searchlab.core.signals import interruptible

    with interruptible() as guard:  # SIGTERM like Ctrl-C (issue 54: exit 143 as docs/reference.md says)
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:
            from searchlab.study.execution.grid import StudyInterrupted

            if isinstance(exc, StudyInterrupted):
                print(f"searchlab.study: interrupted; every finished run is kept in {exc.study_dir}; resume with: "
                      f"{resume_command(argv, exc.study_dir)}", file=sys.stderr, flush=True)
            else:
                print("searchlab.study: interrupted; no report written", file=sys.stderr, flush=True)
            return _signal_status(exc, guard)


def _signal_status(exc: BaseException, guard: Any) -> int:
    """130 or 143: the signal behind ``exc``, also when a cell's run caught it and the grid re-raised it as
    :class:`StudyInterrupted` (its context holds the run's :class:`~searchlab.core.signals.Interrupted`)."""
    from searchlab.core.signals import Interrupted

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Interrupted):
            return seen.exit_status
        seen = seen.__context__
    return int(guard.translate(exc).exit_status)


def _main(argv: list[str]) -> int:
    args = parse(argv)
    # Hydra's override grammar: key=value, +key=value, ++key=value, and ~key (delete: no '=')
    overrides = [i for i in args.items if ("=" in i or i.startswith("~")) and not Path(i).exists()]
    paths = [i for i in args.items if i not in overrides]
    study = [o for o in overrides if o.split("=", 1)[0] == "study"]
    try:
        from searchlab.study.analysis.collect import find_sources

        find_sources(paths)  # a path that is not there is refused now, not after the whole grid ran
        if study:
            from searchlab.study.execution.config import compose_study
            from searchlab.study.execution.grid import run_study

            rest = [o for o in overrides if o not in study]
            if args.allow_mixed:
                rest.append("allow_mixed=true")
            if args.reference:
                rest.append(f"reference={args.reference}")
            if args.name:
                rest.append(f"name={args.name}")
            cfg = compose_study(study[-1].split("=", 1)[1], rest)
            with heartbeat("study", f"running the grid of {cfg.name}, then the report"):  # never silent > 10 s
                result = run_study(cfg, paths, args.out)
        elif overrides:
            raise ConfigError(f"{overrides[0]!r}: key=value overrides need study=NAME (or is it a missing path?)")
        elif not paths:
            raise ConfigError("give run directories to aggregate, or study=NAME (see --help)")
        else:
            with heartbeat("study", "reading the runs and writing the report"):
                result = _aggregate_only(paths, args)
    except SearchlabError as exc:
        from searchlab.cli.main import resolve_paths

        print(f"searchlab.study: error: {resolve_paths(' '.join(str(exc).split()), args.items)}", file=sys.stderr,
              flush=True)
        return 2
    meta = result["meta"]
    print(f"searchlab.study: {meta['runs']} runs, {meta['problems']} problem(s), {meta['searchers']} searcher(s); "
          f"report: {result['paths']['html']}", flush=True)
    for key in ("grid wall time (s)", "report wall time (s)", "total wall time (s)"):
        if key in meta:
            print(f"  {key}: {meta[key]}", flush=True)
    for line in verdict_lines(Path(result["paths"]["markdown"])):  # the study's answer, not only its path
        print(f"searchlab.study: verdict: {line}", flush=True)
    return 0


def verdict_lines(summary_md: Path) -> list[str]:
    """The bullet lines of the report's "Verdict" section (summary.md), as the report states them."""
    try:
        text = summary_md.read_text(encoding="utf-8")
    except OSError:
        return []
    section = text.split("\n## Verdict\n", 1)[1] if "\n## Verdict\n" in text else ""
    lines = []
    for line in section.lstrip("\n").splitlines():
        if not line.startswith("- "):
            break
        lines.append(line[2:].replace("**", ""))
    return lines


if __name__ == "__main__":
    sys.exit(main())
