"""The command line: ``python -m searchlab problem=NAME searcher=NAME [key=value ...]``.

A Hydra app over ``searchlab/conf/`` (shipped inside the package, so it works outside a checkout). Errors that are the user's (a bad
value, an incompatible pair) are printed as one line and exit with status 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

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
  executor=serial|ray         in-process, or Ray actors pinned to devices (default ray)
  executor.workers=N          number of device workers (ray; default: one per GPU, else cores/2)
  executor.timeout_s=S        per-evaluation timeout; the worker is replaced (default 600)
  executor.address=ADDR       join an existing Ray cluster
  resume=RUN_DIR              continue a killed run to its budget (same problem and searcher)
  cache=FILE                  measurement cache shared across runs (SQLite)
  progress=auto|bar|log|off   live progress display
  problem.X=V, searcher.X=V   options of the chosen problem / searcher (see conf/)

Show a composed config without running: python -m searchlab --cfg job problem=... searcher=...
Hydra's own help: python -m searchlab --hydra-help
"""


def _describe(path: Path) -> str:
    """The first comment line of a config file."""
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def _schema_defaults(group: str) -> dict[str, dict[str, object]]:
    """Each option's defaults, from the structured config schemas."""
    import dataclasses

    from searchlab import config

    try:
        schemas = config.problem_schemas() if group == "problem" else config.searcher_schemas() if group == "searcher" else {}
    except Exception:
        return {}
    out: dict[str, dict[str, object]] = {}
    for name, node in schemas.items():
        out[name] = {f.name: (f.default if f.default is not dataclasses.MISSING else
                              f.default_factory() if f.default_factory is not dataclasses.MISSING else "???")
                     for f in dataclasses.fields(node) if f.name != "_target_"}
    return out


def _options(group: str) -> list[str]:
    lines = []
    defaults = _schema_defaults(group)
    for path in sorted((CONF_DIR / group).glob("*.yaml")):
        options = dict(defaults.get(path.stem, {}))
        try:
            data = yaml.safe_load(path.read_text()) or {}
            options.update({k: v for k, v in data.items() if k not in ("defaults", "_target_")})
        except yaml.YAMLError:
            pass
        lines.append(f"  {path.stem:<22} {_describe(path)}")
        if options:
            lines.append(" " * 25 + ", ".join(f"{k}={v}" for k, v in options.items()))
    return lines


def help_text() -> str:
    parts = [USAGE]
    for group in GROUPS:
        parts.append(f"{group}s (" + group + "=NAME):")
        parts.extend(_options(group))
        parts.append("")
    return "\n".join(parts)


def main() -> None:
    if any(arg in ("-h", "--help") for arg in sys.argv[1:]):
        print(help_text())
        return
    from searchlab.config import register_configs

    register_configs()
    _hydra_main()


def _hydra_main() -> None:
    import hydra
    from omegaconf import DictConfig

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
    def run(cfg: DictConfig) -> None:
        from hydra.core.hydra_config import HydraConfig

        from searchlab.app import execute
        from searchlab.errors import SearchlabError

        hc = HydraConfig.get()
        names = (str(hc.runtime.choices.get("problem")), str(hc.runtime.choices.get("searcher")))
        try:
            execute(cfg, hc.runtime.output_dir, names=names, overrides=list(hc.overrides.task),
                    hydra_dir=hc.runtime.output_dir)
        except SearchlabError as exc:
            print(f"searchlab: error: {exc}", file=sys.stderr, flush=True)
            sys.exit(2)

    run()
