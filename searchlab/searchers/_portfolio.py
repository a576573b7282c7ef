"""A portfolio of searchers with AUC-bandit credit assignment (OpenTuner's meta-technique).

OpenTuner (Ansel et al., *OpenTuner: an extensible framework for program autotuning*,
PACT 2014, §4.2; ``opentuner/search/bandittechniques.py``, ``AUCBanditMetaTechnique`` with
``AUCBanditQueue``) runs several techniques and, for each proposal, asks them in the order
of a bandit score ``AUC_t + C * sqrt(2 ln|H| / H_t)`` — ``|H|`` the results in a sliding
window of the last ``window`` results, ``H_t`` those of technique ``t``. The exploitation
term is the area under the curve of "was a new global best" over the technique's windowed
results, ``sum_i i*[new best at its i-th use] * 2 / (H_t (H_t + 1))``: recent successes weigh
more (Fialho et al., *Comparison-based adaptive strategy selection with bandits in
differential evolution*, PPSN 2010). Defaults ``C = 0.05``, ``window = 500`` are OpenTuner's;
OpenTuner's logarithm is base 2, kept here.

Here: members are searchers named in the config, built with their default options (or those
in ``options``) and seeds spawned from the portfolio's seed; a member that cannot work on the
space (or needs problem capabilities the portfolio cannot check) is skipped with a warning,
and if none can, the portfolio refuses with every member's reason. A member with nothing to
propose (waiting, or done) is passed over for the next in bandit order, as OpenTuner's
``MetaSearchTechnique`` does. Ids are mapped both ways: the portfolio's candidate id <->
(member, member candidate).

Adaptations, on purpose: (1) several evaluations in flight — a member's proposals still in
flight count as uses in the exploration term, so a batch does not all go to the one
untried member; (2) duplicates — a configuration already measured is told to the proposing
member at once (free), one in flight is parked and told when its twin's result arrives, so
the portfolio never evaluates a configuration twice; (3) with ``share`` (OpenTuner's shared
results database) every member also learns every other member's results (``replay``), but
only the proposer gets credit.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, Measurement, Result
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError, IncompatibleError
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable

log = logging.getLogger(__name__)
DEFAULT_MEMBERS = ("optuna_tpe", "genetic", "greedy_ils", "dual_annealing", "random")
NO_OPTIONS: Mapping[str, Mapping[str, Any]] = MappingProxyType({})  # the config default is {}, not None


class AucBandit:
    """OpenTuner's ``AUCBanditQueue`` over member indices (O(1) updates)."""

    def __init__(self, keys: int, c: float = 0.05, window: int = 500) -> None:
        self.c, self.window = c, window
        self.history: deque[tuple[int, bool]] = deque()
        self.uses = [0] * keys
        self.auc_sum = [0] * keys
        self.auc_decay = [0] * keys

    def exploitation(self, key: int) -> float:
        n = self.uses[key]
        return self.auc_sum[key] * 2.0 / (n * (n + 1.0)) if n else 0.0

    def exploration(self, key: int, in_flight: int = 0) -> float:
        n = self.uses[key] + in_flight
        if n == 0:
            return math.inf
        return math.sqrt(2.0 * math.log2(max(1, len(self.history) + in_flight)) / n)

    def score(self, key: int, in_flight: int = 0) -> float:
        return self.exploitation(key) + self.c * self.exploration(key, in_flight)

    def on_result(self, key: int, new_best: bool) -> None:
        self.history.append((key, new_best))
        self.uses[key] += 1
        if new_best:
            self.auc_sum[key] += self.uses[key]
            self.auc_decay[key] += 1
        if len(self.history) > self.window:
            old, was_best = self.history.popleft()
            self.uses[old] -= 1
            self.auc_sum[old] -= self.auc_decay[old]
            if was_best:
                self.auc_decay[old] -= 1


def _searcher_class(name: str) -> type[Searcher]:
    """A member by its registered name: built-ins and plugins alike (the one lookup, searchlab.searchers._build)."""
    from searchlab import registry
    from searchlab.searchers._build import searcher_class

    names = set(registry.searchers())
    if name not in names or name == "portfolio":
        raise ConfigError(f"searcher.members: {name!r} is not a searcher a portfolio can hold; "
                          f"choose from {sorted(names - {'portfolio'})}")
    cls = searcher_class(name, "searcher.members")
    if not issubclass(cls, Searcher) or issubclass(cls, PortfolioSearcher):
        raise ConfigError(f"searcher.members: {name!r} is not a searcher a portfolio can hold")
    return cls


class PortfolioSearcher(Searcher):
    name = "portfolio"
    space_kinds = (Space,)

    def __init__(self, space: Space, *, members: Sequence[str] = DEFAULT_MEMBERS,
                 options: Mapping[str, Mapping[str, Any]] = NO_OPTIONS, c: Annotated[float, Tunable(0.005, 0.5, log=True)] = 0.05,
                 window: Annotated[int, Tunable(20, 1000, log=True)] = 500,
                 share: Annotated[bool, Tunable(choices=(True, False))] = True, max_redraws: int = 16, **kwargs: Any) -> None:
        if not members or len(set(members)) != len(members):
            raise ConfigError(f"searcher.members={list(members)}: need at least one searcher, each named once")
        if c < 0 or window < 1 or max_redraws < 1:
            raise ConfigError(f"searcher.c={c}, window={window}, max_redraws={max_redraws}: "
                              "need c >= 0, window >= 1, max_redraws >= 1")
        unknown = set(options or {}) - set(members)
        if unknown:
            raise ConfigError(f"searcher.options names {sorted(unknown)}, which are not members {list(members)}")
        super().__init__(space, **kwargs)
        self.members, self.names = self._build(list(members), dict(options or {}))
        self.bandit = AucBandit(len(self.members), c, window)
        self.share, self.max_redraws = share, max_redraws
        self._flight: dict[Config, tuple[int, Candidate]] = {}  # our proposal -> (member, its candidate)
        self._twins: dict[Config, list[tuple[int, Candidate]]] = {}
        self._measured: dict[Config, Measurement] = {}
        self._next_ids = [0] * len(self.members)
        self._best_loss = math.inf
        self._exhausted = False

    def _build(self, names: list[str], options: dict[str, Mapping[str, Any]]) -> tuple[list[Searcher], list[str]]:
        from searchlab.searchers._build import build_searcher

        classes = [_searcher_class(n) for n in names]
        seeds: list[int | None] = [None] * len(names)
        if self.seed is not None:
            seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(self.seed).spawn(len(names))]
        built, kept, reasons = [], [], []
        for name, cls, seed in zip(names, classes, seeds):
            reason = cls.incompatibility(self.problem_space)
            if reason is None and cls.requires:
                reason = f"searcher {name!r} needs problem capabilities {sorted(cls.requires)}"
            if reason is not None:
                log.warning("portfolio: skipping member %s: %s", name, reason)
                reasons.append(reason)
                continue
            built.append(build_searcher(cls, self.problem_space, direction=self.direction, seed=seed,
                                        options=options.get(name, {}), where=f"searcher.members: {name}"))
            kept.append(name)
        if not built:
            raise IncompatibleError("searcher 'portfolio': no member can work on this problem: " + "; ".join(reasons))
        return built, kept

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        reasons = [_searcher_class(n).incompatibility(space) for n in DEFAULT_MEMBERS]
        if all(reasons):
            return "searcher 'portfolio': no default member can work on this space: " + "; ".join(map(str, reasons))
        return None

    # -- proposing ----------------------------------------------------------------------
    def _order(self) -> list[int]:
        in_flight = [0] * len(self.members)
        for k, _ in self._flight.values():
            in_flight[k] += 1
        keys = [int(k) for k in self.rng.permutation(len(self.members))]  # ties broken at random
        return sorted(keys, key=lambda k: -self.bandit.score(k, in_flight[k]))

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[ProposalLike] = []
        for _ in range(n * self.max_redraws):
            if len(out) == n or self._exhausted:
                break
            drawn = self._draw()
            if drawn is None:
                break  # every member waits (or is done): results are in flight
            k, candidate = drawn
            if self._settle(k, candidate):
                continue
            self._flight[candidate.config] = (k, candidate)
            out.append(Proposal(candidate.config, {"member": self.names[k], "member_meta": dict(candidate.meta)}))
        if not out and not self.pending and not self._flight:
            out.extend(self._fallback())
        return out

    def _draw(self) -> tuple[int, Candidate] | None:
        for k in self._order():
            if self.members[k].done:
                continue
            batch = self.members[k].ask(1)
            if batch:
                self._next_ids[k] = max(self._next_ids[k], batch[0].id + 1)
                return k, batch[0]
        return None

    def _settle(self, k: int, candidate: Candidate) -> bool:
        """A member proposed something known or in flight: answer or park it; False if new."""
        config = candidate.config
        if config in self._measured:
            self.members[k].tell(Result(candidate, self._measured[config]))
        elif config in self._flight:
            self._twins.setdefault(config, []).append((k, candidate))
        elif (reason := self.space.check(config)) is not None:
            self._measured[config] = Measurement.infeasible(reason)
            self.members[k].tell(Result(candidate, self._measured[config]))
        else:
            return False
        return True

    def _fallback(self) -> list[ProposalLike]:
        """No member proposed anything new with nothing in flight: a random unseen member."""
        for _ in range(200):
            config = self.space.sample(self.rng)
            if config not in self._measured:
                return [Proposal(config, {"member": None})]
        left = next((c for c in self.space.enumerate() if c not in self._measured), None)
        if left is None:
            self._exhausted = True
            return []
        return [Proposal(left, {"member": None})]

    # -- learning -----------------------------------------------------------------------
    def _tell(self, candidate: Candidate, result: Result) -> None:
        config, measurement = candidate.proposal, result.measurement
        self._measured[config] = measurement
        loss = self.loss(result)
        new_best = loss < self._best_loss
        self._best_loss = min(self._best_loss, loss)
        told: set[int] = set()
        if config in self._flight:
            k, member_candidate = self._flight.pop(config)
            self.members[k].tell(Result(member_candidate, measurement, result.worker, result.device,
                                        result.t_submit, result.t_start, result.t_end, result.cache_hit))
            self.bandit.on_result(k, new_best)
            told.add(k)
        elif candidate.meta.get("member") in self.names:  # replayed: the proposer learns and gets credit
            k = self.names.index(candidate.meta["member"])
            self._replay_into(k, config, measurement, candidate.meta.get("member_meta") or {})
            self.bandit.on_result(k, new_best)
            told.add(k)
        for k, twin in self._twins.pop(config, []):
            self.members[k].tell(Result(twin, measurement))
            told.add(k)
        if self.share:
            for k in range(len(self.members)):
                if k not in told:
                    self._replay_into(k, config, measurement, {})

    def _replay_into(self, k: int, config: Config, measurement: Measurement, meta: Mapping[str, Any]) -> None:
        candidate = Candidate(self._next_ids[k], config, Config(), meta)
        self._next_ids[k] += 1
        self.members[k].replay(Result(candidate, measurement))

    def _done(self) -> bool:
        return self._exhausted or all(m.done for m in self.members)


# options: member name -> its options
# c: OpenTuner's C: exploration weight
# window: results the bandit remembers
# share: members learn each other's results (credit goes to the proposer only)
# max_redraws: duplicate proposals per slot before a random unseen configuration
PortfolioConfig = searcher_config(PortfolioSearcher)
