"""Live training problems for ``problem=searcher_settings``: ``dft:N`` beside tables (issue 38).

Why: a DAG searcher's settings (``tag_scaled``) are tuned on DFT sizes no table holds: the grammar
has 10^9-10^17 words. A live spec ``dft:N`` in ``problem.train`` is a :class:`DftProblem` of size
N whose plans are measured *once*, the first time any replay (any seed, any setting) proposes them,
into a shared cache (``problem.cache=PATH``, a JSON file kept between runs); later replays read the
cached value, so every setting sees the same numbers (paired) and a repeated plan costs nothing.

- Protocol: ``searchlab.adapters.grammar.SEARCH_PROTOCOL`` (3-10 runs, 3 ms, a 3 % interval, batches of
  0.5 ms, thread CPU clock, pinned), the one the DFT benchmarks use; the cache records it and refuses another.
- Reference (the "optimum" of the fraction score): DP's best plan (paper 002 §4.2; sub-problems in
  context), found once through the same cache and stored with it. A plan can beat it (a score > 1).
- Live replays run in this process, one after another, never as Ray tasks: two timings at once on
  one machine disturb each other.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.adapters.grammar.dft import SEARCH_BATCH_S, SEARCH_PROTOCOL
from searchlab.core.records import Config, Direction, FailureMode, Measurement, loss
from searchlab.errors import ConfigError, EvaluationError

SPEC = re.compile(r"^dft:(\d+)$")
PROTOCOL: dict[str, Any] = dataclasses.asdict(SEARCH_PROTOCOL)  # as the cache records it
BATCH_S = SEARCH_BATCH_S
FORMAT = "searchlab-live-cache-1"


def is_live(entry: str) -> bool:
    return SPEC.match(entry) is not None


class LiveCache:
    """(spec, word) -> objective (None: failed), and each spec's reference, in one JSON file."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path).expanduser().resolve() if path else None
        self.entries: dict[str, dict[str, Any]] = {}
        self.measured = 0  # plans timed by this process (not read from the file)
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text())
            except (OSError, ValueError) as exc:
                raise ConfigError(f"problem.cache={str(path)!r}: not a readable cache ({exc})") from None
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ConfigError(f"problem.cache={str(path)!r}: not a searchlab live cache (format {FORMAT!r})")
            self.entries = data["entries"]
            for spec, entry in self.entries.items():
                if entry.get("protocol") != PROTOCOL | {"batch_s": BATCH_S}:
                    raise ConfigError(f"problem.cache={str(path)!r}: {spec} was measured under another protocol "
                                      f"({entry.get('protocol')}); use a new cache file")

    def rows(self, spec: str) -> dict[str, float | None]:
        entry = self.entries.setdefault(spec, {"protocol": PROTOCOL | {"batch_s": BATCH_S}, "rows": {}})
        rows: dict[str, float | None] = entry["rows"]
        return rows

    def save(self) -> None:
        """Write the whole cache atomically (a crash leaves the old file, never half of one)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "entries": self.entries}))
        os.replace(tmp, self.path)


class LiveTarget:
    """One ``dft:N`` training problem: the problem, built on first use, and its cached rows."""

    def __init__(self, spec: str, cache: LiveCache) -> None:
        match = SPEC.match(spec)
        if match is None:
            raise ConfigError(f"problem.train: {spec!r} is not a live spec (dft:N)")
        self.spec, self.n, self.cache = spec, int(match.group(1)), cache
        if not 2 <= self.n <= 2**22:
            raise ConfigError(f"problem.train: {spec!r}: the DFT size must be in 2 .. 2^22")
        self._problem: Any = None

    @property
    def problem(self) -> Any:
        if self._problem is None:
            from searchlab.adapters.grammar import DftProblem

            self._problem = DftProblem(size=self.n, measure=SEARCH_PROTOCOL, batch_s=BATCH_S)
            self._problem.setup(self._problem.device)
        return self._problem

    @property
    def space(self) -> Any:
        return self.problem.space

    def measure(self, config: Config) -> Measurement:
        """The cached value of this plan, measured now if no replay has proposed it before."""
        word = str(config["word"])
        rows = self.cache.rows(self.spec)
        sub = word.split("(", 1)[0] != self.problem.graph.root
        if word not in rows:
            try:
                rows[word] = self.problem.evaluate(config).objective
            except EvaluationError:  # wrong output: a failed plan, cached as such
                rows[word] = None
            self.cache.measured += 1
        value = rows[word]
        extra = {"subproblem": word.split("(", 1)[0]} if sub else {}
        if value is None:
            return Measurement.failed(FailureMode.RUNTIME, "failed when first measured", extra=extra)
        return Measurement.ok(value, extra=extra)

    def reference(self) -> float:
        """DP's best plan's value (found once, through the cache, and stored with it)."""
        entry = self.cache.entries.setdefault(self.spec, {"protocol": PROTOCOL | {"batch_s": BATCH_S}, "rows": {}})
        if entry.get("reference") is None:
            from searchlab.searchers import DpSearcher

            dp = DpSearcher(self.space, direction=Direction.MAXIMIZE)
            best = self._drive(dp, 10**6)
            entry["reference"] = -min(best) if best else None
            if entry["reference"] is None:
                raise ConfigError(f"problem.train: {self.spec}: DP found no working plan to score against")
            self.cache.save()
        return float(entry["reference"])

    def _drive(self, searcher: Any, budget: int) -> list[float]:
        """The one loop (:func:`searchlab.run.loop.search`) with this target's cached measurement as its worker,
        until ``budget`` full-size evaluations (sub-problems do not count); the best-so-far loss after each."""
        from searchlab.run.loop import search

        curve: list[float] = []
        best = math.inf

        def evaluate(candidate: Any) -> Measurement:
            nonlocal best
            m = self.measure(candidate.config)
            if not m.is_subproblem:
                best = min(best, loss(m, Direction.MAXIMIZE))
                curve.append(best)
            return m

        search(searcher, evaluate, horizon=budget, until=lambda: len(curve) >= budget)
        return curve

    def replay(self, searcher: str, settings: Mapping[str, Any], seed: int, budget: int) -> list[float]:
        """The best-so-far loss (-Mflop/s) after each of ``budget`` evaluations of one seeded run."""
        from searchlab.searchers import build_searcher

        instance = build_searcher(searcher, self.space, direction=Direction.MAXIMIZE, seed=seed, options=settings)
        curve = self._drive(instance, budget)
        return curve + [curve[-1] if curve else math.inf] * (budget - len(curve))

    def score(self, curves: list[list[float]]) -> float:
        """Mean over runs of the mean fraction of DP's best over the budget (as fraction_score)."""
        ref = self.reference()
        return sum(sum((-c / ref) if math.isfinite(c) else 0.0 for c in curve) / len(curve)
                   for curve in curves) / len(curves)
