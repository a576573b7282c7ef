"""The ask/tell driver of the threshold tuners of paper 003 (the tree model is in ``common``).

:class:`GeneratorSearcher`: an algorithm written as a generator that yields the
configurations it needs (a :class:`Need`); the driver proposes those it cannot compose from
the caches and resumes the algorithm once all have results. A "benchmark run" of the paper
is one evaluation: one configuration over all training datasets.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searchlab.core.records import Config, Result
from searchlab.core.spaces import ThresholdTree
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._threshold.common import Observations, TreeModel


@dataclass(frozen=True)
class Need:
    """Configurations an algorithm needs results for. ``force``: evaluate even if
    composable; ``fresh``: run again even if evaluated before (a tool without a cache)."""

    configs: tuple[Config, ...]
    force: bool = False
    fresh: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)


class GeneratorSearcher(Searcher):
    """Runs an algorithm written as a generator of :class:`Need` under ask/tell.

    Several configurations of one Need are proposed at once (they may run concurrently);
    results can arrive in any order and may be replayed (resume): the algorithm is resumed
    only when every configuration it needs has a result or a composed value."""

    space_kinds = (ThresholdTree,)
    instrumented = False  # compose per-dataset times from instrumentation too

    def __init__(self, space: ThresholdTree, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        assert isinstance(self.space, ThresholdTree)
        self.model = TreeModel(self.space)
        self.obs = Observations(self.model, self.direction)
        self.final: Config | None = None
        self.runs = 0  # evaluations proposed (benchmark runs)
        self.trace: list[dict[str, Any]] = []  # decisions, for reports and tests
        self._gen: Iterator[Need] = self._algorithm()
        self._need: Need | None = None
        self._slots: list[tuple[Config, int]] = []  # (config, j): a fresh Need waits for j-th result
        self._requested: dict[Config, int] = {}
        self._issued: dict[Config, int] = {}
        self.by_config: dict[Config, list[Result]] = {}  # every result of a configuration, in order
        self._finished = False

    @abstractmethod
    def _algorithm(self) -> Iterator[Need]:
        """Yield Needs; read results with :meth:`cost` / :meth:`dataset_costs` after each."""

    def available(self, config: Config) -> bool:
        return self.obs.cost(config, self.instrumented) is not None

    def cost(self, config: Config) -> float:
        value = self.obs.cost(config, self.instrumented)
        return math.inf if value is None else value

    def dataset_costs(self, config: Config) -> dict[str, float] | None:
        if config in self.obs.results and not math.isfinite(self.cost(config)):
            return {d.name: math.inf for d in self.model.train}
        return self.obs.dataset_costs(config, self.instrumented)

    def fresh_result(self, config: Config) -> Result:
        """The result of the latest fresh request of ``config``."""
        return self.by_config[config][self._requested[config] - 1]

    def _missing(self, need: Need) -> list[Config]:
        if need.fresh:
            return [c for c, j in self._slots if len(self.by_config.get(c, ())) < j]
        if need.force:
            return [c for c in need.configs if c not in self.obs.results]
        return [c for c in need.configs if not self.available(c)]

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[ProposalLike] = []
        while len(out) < n:
            if self._need is None:
                if self._finished:
                    break
                try:
                    self._need = next(self._gen)
                except StopIteration:
                    self._finished = True
                    break
                if self._need.fresh:
                    self._slots = []
                    for c in self._need.configs:
                        self._requested[c] = self._requested.get(c, 0) + 1
                        self._slots.append((c, self._requested[c]))
            missing = self._missing(self._need)
            if not missing:
                self._need = None
                continue
            if self._need.fresh:
                fresh = [c for c, j in self._slots if self._issued.get(c, 0) < j]
            else:
                fresh = [c for c in dict.fromkeys(missing) if not self.seen(c)]
            if not fresh:  # the rest is in flight
                break
            for config in fresh[: n - len(out)]:
                self._seen.add(config)
                self._issued[config] = self._issued.get(config, 0) + 1
                self.runs += 1
                out.append(Proposal(config, dict(self._need.meta)))
        return out

    def _tell(self, candidate: Any, result: Result) -> None:
        config = candidate.proposal
        self.obs.add(config, result)
        self.by_config.setdefault(config, []).append(result)
        self._issued[config] = max(self._issued.get(config, 0), len(self.by_config[config]))

    def _done(self) -> bool:
        return self._finished
