"""``problem=table``: replay a recorded table (DESIGN.md, "Replay").

Evaluation is a look-up: no device time is spent, but each evaluation is charged the recorded
compile + run time (``Measurement.charged_s``), so studies with hundreds of seeds are cheap, fair
and reproducible. ``sample_noise=true`` draws recorded samples instead
(:func:`draw_sample`).

Tables keep every recorded sample. With ``sample_noise=true`` a replay returns one recorded
sample per evaluation instead of the row's median/mean, chosen by a keyed hash of
(``noise_seed``, the configuration, how often this replay has drawn it), so replayed studies
see the noise real runs see, reproducibly, and two searchers run with the same seed see the
same draws for the same configuration (common random numbers for paired comparisons). See
docs/measurement.md, "Noise in replays".
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from searchlab.core.measure import samples_are_objective  # the confirm phase needs it too
from searchlab.core.problem import Problem
from searchlab.core.records import Config, FailureMode, Measurement, Status
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.interchange import open_table
from searchlab.interchange.table import Table


def load_table(path: str | Path) -> Table:
    """A table from any file :func:`searchlab.interchange.open_table` reads (our ``.json(.gz)`` format, a
    Kernel Tuner cache, a T4 file) or a run directory / ``results.db``: the one door, under its old name."""
    return open_table(path, "table file")  # type: ignore[no-any-return]


def _table_at(name: str, path: Any) -> Table:
    if not path or path == "???":
        raise ConfigError(f"problem={name} needs problem.path=<table file>")
    return load_table(str(path))


def sample_index(seed: int, key: str, occurrence: int, n: int) -> int:
    """Which of ``n`` recorded samples a replay seeded ``seed`` shows for the ``occurrence``-th
    look-up of the configuration ``key``: a keyed BLAKE2b hash of the three, reduced mod ``n``.

    Why a hash and not a seeded generator: it is a pure function of the three (reproducible, and
    the same for two searchers with the same seed: common random numbers), and it costs about
    2 us where a ``SeedSequence`` and a generator per look-up cost about 30 us, a third of a
    random replay (issue 23, item 3). The bias of ``mod n`` is below n / 2^64. Replays made
    before this change drew with the generator: the same distribution, other draws
    (docs/measurement.md, "Noise in replays").
    """
    salt = (seed & (2**64 - 1)).to_bytes(8, "little") + (occurrence & (2**64 - 1)).to_bytes(8, "little")
    digest = hashlib.blake2b(key.encode(), digest_size=8, key=salt).digest()
    return int.from_bytes(digest, "little") % n


def draw_sample(m: Measurement, seed: int, key: str, occurrence: int) -> Measurement:
    """``m`` with one of its recorded samples as the objective (see the module docstring).

    Sensors equal to the recorded objective (the objective's own sensor) take the drawn value;
    ``extra`` keeps the recorded objective and the sample's index.
    """
    index = sample_index(seed, key, occurrence, len(m.samples))
    value = m.samples[index]
    sensors = {k: (value if v == m.objective else v) for k, v in m.sensors.items()}
    extra = {**m.extra, "recorded_objective": m.objective, "drawn_sample": index}
    return m.drawn(value, sensors, extra)


class TableProblem(Problem):
    """Replay a table: evaluation is a look-up, charged the recorded time.

    ``table``: a table already in memory (studies, tests, the replays that extend this class);
    it is not an option of the config (``__runtime__``), and ``params`` does not hold it."""

    name = "table"
    deterministic = True
    __runtime__: ClassVar[frozenset[str]] = frozenset({"table"})

    @classmethod
    def run_options(cls, options: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """``noise_seed: null`` becomes the run's seed (stored with the run's config), so each seed
        of a study draws its own replay noise."""
        out = dict(options)
        if "noise_seed" in out and out["noise_seed"] is None:
            out["noise_seed"] = seed
        return out

    @classmethod
    def replayed_table(cls, options: Mapping[str, Any]) -> Table:
        """The table a problem of these options (its config, ``_target_`` aside) replays, read without building
        the problem: a study's analysis takes its reference and random baseline from it (issue 52). Each
        subclass that reads its table another way says how, and its constructor reads it through here."""
        return _table_at(cls.name, options.get("path"))

    def __init__(self, table: Table | None = None, path: str = "???", sample_noise: bool = False,
                 noise_seed: int | None = None) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            table: a table in memory (not a config option)
            path: a table file or an exhaustive run's directory
            sample_noise: draw one recorded sample per evaluation instead of the recorded objective
            noise_seed: null: the run's seed (run_options, before the problem is built)
        """
        super().__init__()
        if table is None:
            table = _table_at(self.name, path)
        self.table = table
        self.direction = table.direction
        self.objective_name = table.objective_name
        self.sample_noise, self.noise_seed = bool(sample_noise), int(noise_seed or 0)
        self.deterministic = not self.sample_noise
        self._draws: Counter[str] = Counter()
        self._objective_rows: dict[Config, bool] = {}  # shared by reseeded copies: same table

    @property
    def space(self) -> Space:
        return self.table.space

    def reseeded(self, noise_seed: int) -> TableProblem:
        """This replay with another ``noise_seed`` and no draws yet: a study's next seed reuses the
        table already parsed (issue 23, item 3) instead of reading the file again."""
        other = copy.copy(self)
        other.noise_seed, other._draws = int(noise_seed or 0), Counter()
        other.params = {**self.params, "noise_seed": noise_seed} if "noise_seed" in self.params else dict(self.params)
        return other

    def evaluate(self, config: Config) -> Measurement:
        row = self.table.rows.get(config)
        if row is None:
            return Measurement(Status.FAILED, failure_mode=FailureMode.INVALID, message="configuration not in the table")
        if self.sample_noise and self._drawable(config, row):
            occurrence = self._draws[config.key]
            self._draws[config.key] += 1
            return draw_sample(row, self.noise_seed, config.key, occurrence)
        return row

    def _drawable(self, config: Config, row: Measurement) -> bool:
        """``samples_are_objective(row)``, found once per row and table (a median of 32 samples
        per look-up was a tenth of a replay); reseeded copies share the memo with their table."""
        memo = self._objective_rows
        known = memo.get(config)
        if known is None:
            known = memo[config] = samples_are_objective(row)
        return known

    @property
    def noisy(self) -> bool:
        """A replay with sample noise, of a table with differing samples to draw, varies
        like a device (so the confirm phase runs by default)."""
        return self.sample_noise and any(len(set(m.samples)) > 1 and samples_are_objective(m)
                                         for m in self.table.rows.values())

    @property
    def known_optimum(self) -> float | None:
        best = self.table.best()
        return None if best is None else best[1].objective

    def fingerprint_params(self) -> Mapping[str, Any]:
        base = {"source": self.table.source, "device": self.table.device, "rows": len(self.table.rows)}
        return {**base, "sample_noise": True} if self.sample_noise else base  # noise_seed is like the run seed
