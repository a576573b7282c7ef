"""Shared bits of the synthetic problems: deterministic noise and the optional delay."""

from __future__ import annotations

import hashlib
import time

import numpy as np

from searchlab.core.records import Config


def config_rng(seed: int, config: Config, salt: int = 0) -> np.random.Generator:
    """A generator fixed by (problem seed, configuration): landscapes are reproducible."""
    digest = hashlib.sha256(f"{seed}|{salt}|{config.key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class Delay:
    """Sleeps ``delay_s`` per evaluation, to stand in for an expensive measurement."""

    def __init__(self, delay_s: float) -> None:
        if delay_s < 0:
            from searchlab.errors import ConfigError

            raise ConfigError(f"problem.delay_s={delay_s}: must be >= 0")
        self.delay_s = delay_s

    def __call__(self) -> None:
        if self.delay_s > 0:
            time.sleep(self.delay_s)
