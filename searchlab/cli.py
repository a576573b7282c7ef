"""The command line: ``python -m searchlab problem=NAME searcher=NAME [key=value ...]``.

A Hydra app over ``searchlab/conf/`` (shipped inside the package, so it works from any
directory after ``pip install``) plus every problem and searcher of :mod:`searchlab.registry`.
Errors that are the user's (a bad value, an incompatible pair) are printed as one line and
exit with status 2.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

CONF_DIR = Path(__file__).resolve().parent / "conf"  # ships inside the package (package data)
GROUPS = ("problem", "searcher", "executor", "budget")

USAGE = """\
usage: python -m searchlab [problem=NAME] [searcher=NAME] [key=value ...]
       python -m searchlab -m searcher=random,exhaustive seed=0,1 ...   (sweep: one run per combination)

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
  confirm.k=K confirm.rounds=R   re-measure the best K configurations R rounds at the end (0: off;
                              default 3 x 5 on device problems and noisy replays; docs/measurement.md)
  executor=serial|ray         in-process, or Ray actors pinned to devices (default ray)
  executor.workers=N          number of device workers (ray; default: one per GPU, else cores/2)
  executor.timeout_s=S        per-evaluation timeout; the worker is replaced (default 600)
  executor.address=ADDR       join an existing Ray cluster
  resume=RUN_DIR              continue a killed run to its budget (same problem and searcher)
  cache=FILE                  measurement cache shared across runs (SQLite)
  progress=auto|bar|log|off   live progress display
  prior=[PATH,...]            tables/runs of this space on other devices for searcher=transfer* (docs/transfer.md)
  plot=false                  no best_so_far.png in the run directory (default: written beside summary.json)
  problem.X=V, searcher.X=V   options of the chosen problem / searcher (listed below; one phrase each:
                              python -m searchlab problem=NAME --help, searcher=NAME --help)

Show a composed config without running: python -m searchlab --cfg job problem=... searcher=...
Hydra's own help: python -m searchlab --hydra-help
"""


def help_text(argv: list[str] | None = None) -> str:
    """The overview, or only the problem / searcher named on the command line (searchlab.helptext)."""
    from searchlab import helptext

    chosen = [a.split("=", 1) for a in argv or [] if a.split("=", 1)[0] in ("problem", "searcher")]
    if chosen:
        return "\n".join(helptext.focused(CONF_DIR, group, name) for group, name in chosen)
    return helptext.overview(CONF_DIR, USAGE)


def main() -> None:
    from searchlab.errors import SearchlabError

    argv = sys.argv[1:]
    try:
        if any(arg in ("-h", "--help") for arg in argv):
            print(help_text(argv))
            return
        from searchlab.config import register_configs

        register_configs()
    except SearchlabError as exc:  # e.g. two installed plugins claim one name
        print(f"searchlab: error: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    status = precheck(argv)
    if status is not None:
        sys.exit(status)
    _hydra_main()


def one_line(exc: BaseException) -> str:
    """Hydra's and OmegaConf's multi-line messages as one line: the message, the reason Hydra
    keeps in the cause, and the available options where it lists them; hints dropped."""
    skip = ("full_key:", "object_type", "reference_type", "To append", "Set the environment", "See https",
            "Config search path", "provider=", "None")
    lines: list[str] = []
    options: list[str] = []
    cause: BaseException | None = exc
    while cause is not None:
        listing = False
        for raw in str(cause).splitlines():
            line = raw.strip()
            if line.startswith("Available options"):
                listing = True
            elif not line or line.startswith(skip) or "$VALUE" in line:
                listing = False
            elif listing and raw.startswith("\t"):
                options.append(line)
            else:
                lines.append(line)
        cause = cause.__cause__
    text = " ".join(list(dict.fromkeys(lines))[:2]) or type(exc).__name__
    return _hint(exc, text, options)


def _hint(exc: BaseException, text: str, options: list[str]) -> str:
    """Add "did you mean" to a name Hydra could not find, and the valid keys to a key it refused."""
    import re

    from searchlab.errors import did_you_mean

    missing = re.search(r"Could not find '[^'/]*/([^']*)'", text)
    hint = did_you_mean(missing.group(1), options) if missing else ""
    cause: BaseException | None = exc
    while cause is not None and not hint:
        schema, key = getattr(cause, "object_type", None), getattr(cause, "key", None)
        if "not in" in str(cause) and key is not None and schema is not None and dataclasses.is_dataclass(schema):
            valid = [f.name for f in dataclasses.fields(schema) if not f.name.startswith("_")]
            hint = _moved(schema, str(key), text) or f"{did_you_mean(key, valid)} (valid keys: {', '.join(valid) or 'none'})"
        cause = cause.__cause__
    text += hint
    return f"{text} (available: {', '.join(options)})" if options else text


def _moved(schema: Any, key: str, text: str) -> str:
    """The new spelling of an option that moved into a nested config (issue 21: the flat
    ``problem.min_runs`` is now ``problem.measure.min_runs``), else ""."""
    import re

    for f in dataclasses.fields(schema):
        if isinstance(f.type, type) and dataclasses.is_dataclass(f.type) and key in {g.name for g in dataclasses.fields(f.type)}:
            full = re.search(r"override '([^']*)'", text)
            prefix = full.group(1).rsplit(".", 1)[0] + "." if full and "." in full.group(1) else ""
            return f" (it moved: use {prefix}{f.name}.{key})"
    return ""


def _compose(overrides: list[str]) -> tuple[object, tuple[str, str]]:
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import OmegaConfBaseException

    from searchlab.config import register_configs
    from searchlab.errors import ConfigError

    register_configs()
    parser = OverridesParser.create()
    for override in overrides:  # name the override the grammar refuses
        try:
            parser.parse_overrides([override])
        except HydraException as exc:
            raise ConfigError(f"{override!r}: {one_line(exc)}") from None
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=overrides, return_hydra_config=True)
        choices = cfg.hydra.runtime.choices
        names = (str(choices.get("problem")), str(choices.get("searcher")))
        with open_dict(cfg):
            del cfg["hydra"]
        OmegaConf.to_container(cfg, resolve=True)  # interpolation errors surface here, as one line
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(one_line(exc)) from None
    return cfg, names


def _first_of_sweeps(overrides: list[str]) -> list[str]:
    """A multirun's first combination (a sweep ``a=1,2`` becomes ``a=1``), to check it before any job."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    out = []
    for override in OverridesParser.create().parse_overrides(overrides):
        if override.is_sweep_override():
            first = next(iter(override.sweep_string_iterator()))
            out.append(f"{override.get_key_element()}={first}")
        else:
            out.append(override.input_line or "")
    return out


_PREPARED: dict[str, object] = {}


def precheck(argv: list[str]) -> int | None:
    """Compose and check a run before Hydra makes its output directory (issue 10, item 13).

    Returns an exit status when the command is finished here: a refused run (one line,
    status 2, nothing written) or a resume, which continues in the run's own directory and
    needs no new one. ``None``: go on with Hydra's app (the checked run is reused by it).
    """
    import json

    from omegaconf import OmegaConf

    from searchlab.app import execute, prepare
    from searchlab.errors import SearchlabError

    flags = [a for a in argv if a.startswith("-")]
    multirun = bool(flags) and set(flags) <= {"-m", "--multirun"}
    if flags and not multirun:
        return None  # --cfg, --hydra-help, ...: Hydra's own business
    overrides = [a for a in argv if not a.startswith("-")]
    try:
        cfg, names = _compose(_first_of_sweeps(overrides) if multirun else overrides)
        prepared = prepare(cfg, "", names=names, overrides=overrides)  # type: ignore[arg-type]
        if multirun:
            prepared.close()
            return None
        if prepared.resuming:
            _say_resume(prepared)
            execute(cfg, prepared.run_dir, overrides=overrides, hydra_dir=str(prepared.run_dir),  # type: ignore[arg-type]
                    prepared=prepared)
            return 0
        _PREPARED[json.dumps(OmegaConf.to_container(cfg, resolve=True), sort_keys=True, default=str)] = prepared  # type: ignore[arg-type]
        return None
    except SearchlabError as exc:
        return _report(exc, overrides)
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except Exception as exc:  # a parse error of the override grammar
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        if isinstance(exc, (HydraException, OmegaConfBaseException)):
            print(f"searchlab: error: {resolve_paths(one_line(exc), overrides)}", file=sys.stderr, flush=True)
            return 2
        raise


def _say_resume(prepared: Any) -> None:
    from searchlab.loop import is_known_infeasible
    from searchlab.store import read_run

    _, prior = read_run(prepared.run_dir)
    prepared.progress.resumed(sum(1 for r in prior if not is_known_infeasible(r)), prepared.budget)


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
        if not value or Path(value).is_absolute() or "://" in value or not ("/" in value or Path(value).suffix):
            continue
        if re.fullmatch(r"[-+.\deE]+|\$\{.*\}", value):  # a number or an interpolation, not a path
            continue
        message = re.sub(rf"(?<![\w/.~-]){re.escape(value)}(?![\w/])", str(Path(value).resolve()), message)
    return message


def _interrupted(exc: KeyboardInterrupt) -> int:
    from searchlab.signals import exit_status

    status = exit_status(exc)
    print(f"searchlab: interrupted ({exc or 'SIGINT'}); finished evaluations are recorded", file=sys.stderr, flush=True)
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
    import hydra
    from omegaconf import DictConfig

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
    def run(cfg: DictConfig) -> None:
        import json

        from hydra.core.hydra_config import HydraConfig
        from omegaconf import OmegaConf

        from searchlab.app import Prepared, execute
        from searchlab.errors import SearchlabError

        hc = HydraConfig.get()
        if str(hc.mode) == "RunMode.MULTIRUN" and int(hc.job.num) == 0:
            print(f"searchlab: sweep directory: {Path(hc.sweep.dir).resolve()}", flush=True)
        names = (str(hc.runtime.choices.get("problem")), str(hc.runtime.choices.get("searcher")))
        out = Path(hc.runtime.output_dir)
        key = json.dumps(OmegaConf.to_container(cfg, resolve=True), sort_keys=True, default=str)
        prepared = _PREPARED.pop(key, None)
        if isinstance(prepared, Prepared):
            prepared.run_dir = out
        status = 0
        try:
            execute(cfg, out, names=names, overrides=list(hc.overrides.task), hydra_dir=str(out),
                    prepared=prepared if isinstance(prepared, Prepared) else None)
        except SearchlabError as exc:
            status = _report(exc, list(hc.overrides.task))
        except KeyboardInterrupt as exc:
            status = _interrupted(exc)
        finally:
            _discard(out)
        if status:
            sys.exit(status)

    run()
