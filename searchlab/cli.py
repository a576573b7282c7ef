"""The command line: ``python -m searchlab problem=NAME searcher=NAME [key=value ...]``.

A Hydra app over ``searchlab/conf/`` (shipped inside the package, so it works from any
directory after ``pip install``) plus every problem and searcher of :mod:`searchlab.registry`.
Errors that are the user's (a bad value, an incompatible pair) are printed as one line and
exit with status 2.
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
  plot=false                  no best_so_far.png in the run directory (default: written beside summary.json)
  problem.X=V, searcher.X=V   options of the chosen problem / searcher (listed below)

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
    """Each option's defaults, from the registered structured config schemas."""
    from searchlab import registry
    from searchlab.searchers._schema import schema_defaults

    if group not in registry.GROUPS:
        return {}
    return {name: schema_defaults(node) for name, node in registry.schemas(group).items()}


def _names(group: str) -> list[str]:
    """Registered names (plugins included) and the YAML files of the group."""
    from searchlab import registry

    names = {p.stem for p in (CONF_DIR / group).glob("*.yaml")}
    if group in registry.GROUPS:
        names |= set(registry.entries(group))
    return sorted(names)


def _options(group: str) -> list[str]:
    from searchlab import registry

    lines = []
    defaults = _schema_defaults(group)
    for name in _names(group):
        path = CONF_DIR / group / f"{name}.yaml"
        options = dict(defaults.get(name, {}))
        description = _describe(path) if path.is_file() else registry.describe(group, name)
        try:
            data = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
            options.update({k: v for k, v in data.items() if k not in ("defaults", "_target_")})
        except yaml.YAMLError:
            pass
        lines.append(f"  {name:<22} {description}")
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
    from searchlab.errors import SearchlabError

    try:
        if any(arg in ("-h", "--help") for arg in sys.argv[1:]):
            print(help_text())
            return
        from searchlab.config import register_configs

        register_configs()
    except SearchlabError as exc:  # e.g. two installed plugins claim one name
        print(f"searchlab: error: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
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
