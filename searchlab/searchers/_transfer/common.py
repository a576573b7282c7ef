"""What every transfer searcher shares: a front of prior-derived proposals, then a base searcher.

A transfer searcher receives the run's prior once, before its first proposal
(:meth:`TransferSearcher.attach_prior`, called by the app's preparation: ``prior=[PATH,...]``,
:mod:`searchlab.run.priors`). It proposes a *front* (configurations chosen from the prior) and
then asks an ordinary registered searcher, the *base* (``searcher.base=NAME``, built through
the registry as ``portfolio`` builds its members), which learns every result -- the front's
included -- so it continues knowing them (warm start). Without a prior, or on a space priors
cannot describe, a transfer searcher is its base searcher: a cold run.

Several evaluations in flight: the base is asked only for what the front does not fill; a
base proposal of a configuration already measured is answered at once from the record, one
already in flight is parked and told when its twin's result arrives (as ``portfolio`` does),
so nothing is evaluated twice. A subclass may rebuild the base on another space or with
other options (:meth:`_rebuild`): every result so far is replayed into the new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, Measurement, Result
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._base import Proposal, ProposalLike, Searcher

NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


def checked_k(k: int, low: int, hint: str = "") -> int:
    """``searcher.k``, the length of the ranking's front, checked once for every transfer searcher."""
    if isinstance(k, bool) or not isinstance(k, int) or k < low:
        raise ConfigError(f"searcher.k={k!r}: must be an integer >= {low}{hint}")
    return k


def base_class(name: str) -> type[Searcher]:
    """A registered searcher that can be a transfer searcher's base (not a transfer one, not portfolio)."""
    from searchlab import registry
    from searchlab.searchers._build import searcher_class

    names = set(registry.searchers())
    cls = searcher_class(name, "searcher.base") if name in names else None
    if cls is None or name == "portfolio" or not issubclass(cls, Searcher) or issubclass(cls, TransferBase):
        allowed = sorted(n for n in names if n != "portfolio" and not n.startswith("transfer"))
        raise ConfigError(f"searcher.base={name!r}: must name a registered searcher that is neither portfolio nor "
                          f"a transfer searcher; choose from {allowed}")
    return cls


def short_name(source: str) -> str:
    """A prior's file name, for the printed line."""
    return source.replace("\\", "/").rsplit("/", 1)[-1]


class TransferBase(Searcher):
    """Front from the prior, then the base searcher (see the module docstring)."""

    name = "transfer_common"
    space_kinds = (Space,)
    default_base = "auto"

    def __init__(self, space: Space, *, base: str = "", base_options: Mapping[str, Any] = NO_OPTIONS,
                 **kwargs: Any) -> None:
        self._base_cls = base_class(base or self.default_base)
        self._base_options = dict(base_options or {})
        super().__init__(space, **kwargs)
        self.prior: Any = None  # searchlab.run.priors.Prior once attached
        self.front: list[Config] = []  # prior-derived configurations still to propose, in order
        self._generation = 0
        self._inner = self._make_inner(self.problem_space)
        self._inner_next = 0  # an id above every inner candidate's, for replays into it
        self._measured: dict[Config, Measurement] = {}
        self._twins: dict[Config, list[Candidate]] = {}
        self._exhausted = False
        self._pruned = False  # the base searches part of the space (transfer_prune widens it when done)

    @classmethod
    def incompatibility(cls, space: Space, capabilities: Iterable[str] | None = None) -> str | None:
        reason = super().incompatibility(space, capabilities)
        return reason or base_class(cls.default_base).incompatibility(space, capabilities)

    # -- prior ------------------------------------------------------------------------
    def attach_prior(self, prior: Any) -> bool:
        """Called once by the run's preparation (searchlab.run.priors.give_prior), before any proposal."""
        if self.n_seen or self.prior is not None:
            raise ConfigError(f"searcher {self.name!r}: a prior must be attached once, before the first proposal")
        self.prior = prior
        self._on_prior(prior)
        return True

    def _on_prior(self, prior: Any) -> None:
        """Hook: plan the front from the prior (the default: nothing, i.e. a cold run)."""

    def prior_report(self) -> Mapping[str, Any] | None:
        """What the run's summary.json (``priors``) and its closing note say about the prior:
        here every table counts alike and nothing tests it (``searcher=transfer`` overrides)."""
        if self.prior is None:
            return None
        tables = [{"source": t.source, "device": t.device, "weight": round(1.0 / len(self.prior.tables), 4),
                   "used": True} for t in self.prior.tables]
        names = ", ".join(short_name(t.source) for t in self.prior.tables)
        return {"tables": tables, "cold_auto": False, "fell_back_at": None,
                "line": f"prior: used {names} (equal weights; searcher={self.name} tests no agreement, "
                        "so cold auto never takes over)"}

    # -- base searcher ----------------------------------------------------------------
    def _make_inner(self, space: Space, **options: Any) -> Searcher:
        seed = None
        if self.seed is not None:
            seed = int(np.random.SeedSequence([int(self.seed), self._generation]).generate_state(1)[0])
        from searchlab.searchers._build import build_searcher

        return build_searcher(self._base_cls, space, direction=self.direction, seed=seed,
                              options={**self._base_options, **options}, where=f"searcher.base={self._base_cls.name}")

    def _rebuild(self, space: Space, **options: Any) -> None:
        """A new base searcher on ``space`` that learns every result so far."""
        self._generation += 1
        self._inner = self._make_inner(space, **options)
        self._inner_next = 0
        for result in self.history:
            if space is self.problem_space or space.check(result.config) is None:
                self._replay_inner(result.config, result.measurement)

    def _replay_inner(self, config: Config, measurement: Measurement) -> None:
        try:
            self._inner.space.validate(self._inner.view.encode(config))
        except Exception:
            return  # outside a pruned base space: the base cannot hold it
        self._inner.replay(Result(Candidate(self._inner_next, config, Config(), {}), measurement))
        self._inner_next += 1

    # -- proposing ----------------------------------------------------------------------
    def _front_open(self) -> bool:
        """Hook: whether the front may still propose (``transfer`` closes it on an unlike device)."""
        return True

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[ProposalLike] = []
        in_flight = {c.proposal for c in self.pending.values()}
        while self.front and len(out) < n and self._front_open():
            config = self.front.pop(0)
            if not self.seen(config) and self.space.check(config) is None:
                out.append(Proposal(config, {"from": "prior"}))
                in_flight.add(config)
        for _ in range(16 * n):
            if len(out) >= n or self._inner.done:
                break
            batch = self._inner.ask(1)
            if not batch:
                break
            cand = batch[0]
            self._inner_next = max(self._inner_next, cand.id + 1)
            if cand.config in self._measured:
                self._inner.tell(Result(cand, self._measured[cand.config]))
            elif cand.config in in_flight:
                self._twins.setdefault(cand.config, []).append(cand)
            else:
                in_flight.add(cand.config)
                out.append(Proposal(cand.config, {"from": "base", "gen": self._generation, "inner_id": cand.id}))
        if not out and not self.pending:
            out.extend(self._fallback())
        return out

    def _fallback(self) -> list[ProposalLike]:
        """Nothing new from front or base with nothing in flight: a random unseen configuration."""
        for _ in range(200):
            config = self.space.sample(self.rng)
            if not self.seen(config):
                return [Proposal(config, {"from": "fallback"})]
        left = next((c for c in self.space.enumerate() if not self.seen(c)), None)
        if left is None:
            self._exhausted = True
            return []
        return [Proposal(left, {"from": "fallback"})]

    # -- learning -----------------------------------------------------------------------
    def _tell(self, candidate: Candidate, result: Result) -> None:
        config, measurement = candidate.config, result.measurement
        self._measured[config] = measurement
        inner_id = candidate.meta.get("inner_id")
        if candidate.meta.get("gen") == self._generation and isinstance(inner_id, int) and inner_id in self._inner.pending:
            inner = self._inner.pending[inner_id]
            self._inner.tell(Result(inner, measurement, result.worker, result.device, result.t_submit, result.t_start,
                                    result.t_end, result.cache_hit))
        else:  # the front's result, a replayed one, or one of an earlier base: the base learns it
            self._replay_inner(config, measurement)
        for twin in self._twins.pop(config, []):
            if twin.id in self._inner.pending:
                self._inner.tell(Result(twin, measurement))
        self._learn(config, self.loss(result))

    def _learn(self, config: Config, loss: float) -> None:
        """Hook: a subclass's own bookkeeping (stagnation, detection), after the base learned."""

    def _done(self) -> bool:
        return self._exhausted or (not self.front and self._inner.done and not self._pruned)
