"""Checks of a composed run config that the schemas cannot express (issue 10, items 5 and 7).

They run before anything is created (no output directory, no ``results.db``), and each
failure is one line naming the value and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from searchlab.core.groups import NAMES
from searchlab.errors import ConfigError

SEED_LIMIT = 2**63  # seeds are stored as SQLite INTEGERs (signed 64 bits) and fed to numpy's SeedSequence
CHECKED = NAMES  # every config group (searchlab.core.groups)


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}.{i}")
    else:
        yield path, value


def check_seed(seed: Any, name: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ConfigError(f"{name}={seed!r}: must be an integer in [0, 2**63)")
    return seed


def check_run_config(cfg: Mapping[str, Any]) -> None:
    """Seed range; no NaN in any option (a NaN compares false with everything, so a bound or
    a noise level of NaN would be silently ignored or fail every evaluation); a finite
    ``budget.target``."""
    check_seed(cfg.get("seed"))
    for group in CHECKED:
        for path, value in _leaves(cfg.get(group) or {}, group):
            if isinstance(value, float) and math.isnan(value):
                raise ConfigError(f"{path}=nan: not a number; give a finite value")
    from searchlab.run.live import check_live

    check_live(cfg.get("live"))  # the optuna-dashboard view's setting (searchlab.run.live)
    target = (cfg.get("budget") or {}).get("target")
    if isinstance(target, float) and not math.isfinite(target):
        raise ConfigError(f"budget.target={target}: must be a finite number or null")
