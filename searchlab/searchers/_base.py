"""The searcher base class: public ask/tell owns the bookkeeping, algorithms fill hooks.

As in Nevergrad's ``optimization/base.py``: :meth:`Searcher.ask` and :meth:`Searcher.tell`
keep ids, pending candidates, history and the incumbent; a subclass implements
:meth:`Searcher._ask` (propose up to n configurations of its space, seeing what is pending)
and :meth:`Searcher._tell` (learn from one result). Results may arrive in any order, and
a searcher may return fewer proposals than asked, or none while it waits for results.

A searcher declares the space kinds it works on (in order of preference); other spaces are
reached through a view (:func:`searchlab.core.spaces.view_as`) or refused with the reason.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar, Union

import numpy as np

from searchlab.core.provenance import Ref
from searchlab.core.records import Candidate, Config, Direction, Result, loss
from searchlab.core.spaces import Space, View, view_as
from searchlab.errors import DuplicateResultError, IncompatibleError, UnknownCandidateError


@dataclass(frozen=True)
class Proposal:
    """A configuration of the searcher's space plus notes kept with the candidate
    (e.g. the DAG path that led to it), stored so that a resumed run can replay them."""

    config: Config
    meta: Mapping[str, Any] = field(default_factory=dict)


ProposalLike = Union[Proposal, Config]
T = TypeVar("T")


def drain(n: int, draw: Callable[[], T | None]) -> list[T]:
    """Up to ``n`` results of ``draw()``, stopping at the first None (nothing left for now):
    the batch loop of every searcher that proposes one configuration at a time."""
    out: list[T] = []
    while len(out) < n:
        item = draw()
        if item is None:
            break
        out.append(item)
    return out


class Searcher(ABC):
    name: ClassVar[str] = "searcher"
    space_kinds: ClassVar[tuple[type[Space], ...]] = (Space,)
    requires: ClassVar[frozenset[str]] = frozenset()  # problem capabilities needed
    # the tables / problem instances the shipped defaults were chosen on (searchlab.core.provenance): a study marks
    # its cells on them as not held out; () for defaults fixed a priori (a paper's, Kernel Tuner's)
    defaults_chosen_on: ClassVar[tuple[Ref, ...]] = ()
    # Never proposes a configuration twice. Per instance (not a ClassVar): a searcher whose
    # option allows repeats (e.g. ``no_repeat=False``) sets it in its constructor.
    unique: bool = True
    __schema_base__: ClassVar[bool] = True  # the run's parameters, not options (searchlab.core.schema.options)

    def __init__(self, space: Space, *, direction: Direction = Direction.MINIMIZE, seed: int | None = None) -> None:
        reason = self.incompatibility(space)
        if reason:
            raise IncompatibleError(reason)
        view = view_as(space, self.space_kinds)
        assert view is not None  # checked by incompatibility()
        self.view: View = view
        self.problem_space = space
        self.space: Space = view.space
        self.direction = Direction(direction)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._next_id = 0
        self._pending: dict[int, Candidate] = {}
        self._told: set[int] = set()
        self._seen: set[Config] = set()
        self.history: list[Result] = []
        self._best: Result | None = None
        self.__best_loss = math.inf  # self.loss(self._best), found once per new best (mangled: subclasses keep their own)
        self.evaluation_budget: int | None = None  # told by the loop (set_budget); None: unbounded or unknown

    def close(self) -> None:
        """Release what the searcher holds besides memory (a strategy's thread, a pool); a no-op here.

        Called by :class:`searchlab.run.loop.SearchLoop` when the search ends, whatever ended it (budget,
        wall time, target, Ctrl-C), so a searcher that drives a foreign search from a thread
        (searchlab.searchers._kernel_tuner) does not leave it blocked until garbage collection. Must be
        safe to call more than once."""
        return None  # nothing held by default

    def set_budget(self, evaluations: int | None) -> None:
        """The run's evaluation budget (``budget.evaluations``), told once by the search loop
        before the first ask, as the run's direction and seed are given at construction.

        Why: a schedule that depends on the budget (simulated annealing's cooling, Kernel Tuner's
        ``max_fevals``) must span the run it is in, not a fixed length (issue 22, item 7). Told by
        :class:`searchlab.run.loop.SearchLoop`, the one place every run (CLI, studies, ``optimize``)
        passes through, so no builder has to forward it; a searcher driven by hand keeps ``None``
        and its own defaults.
        """
        if evaluations is not None and (isinstance(evaluations, bool) or evaluations < 1):
            raise ValueError(f"set_budget({evaluations!r}): must be a positive integer or None")
        self.evaluation_budget = evaluations

    # -- compatibility ------------------------------------------------------------------
    @classmethod
    def incompatibility(cls, space: Space, capabilities: Iterable[str] | None = None) -> str | None:
        """Why this searcher cannot work on ``space`` (or a problem lacking capabilities)."""
        if capabilities is not None:
            missing = cls.requires - set(capabilities)
            if missing:
                return f"searcher {cls.name!r} needs a problem with {sorted(missing)}"
        view = view_as(space, cls.space_kinds)
        if view is None:
            kinds = ", ".join(k.kind for k in cls.space_kinds)
            return (f"searcher {cls.name!r} works on {kinds} spaces; "
                    f"this problem's space is {space.kind!r} and no view converts it")
        return cls._check_space(view.space)

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        """Hook: a reason to refuse a space of a supported kind (e.g. too large)."""
        return None

    # -- public ask/tell -----------------------------------------------------------------
    def ask(self, n: int = 1) -> list[Candidate]:
        """Up to ``n`` new candidates; fewer or none while the searcher waits for results."""
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"ask(n): n must be a positive integer, got {n!r}")
        if self.done:
            return []
        proposals = list(self._ask(n))[:n]
        out = []
        for item in proposals:
            proposal = item if isinstance(item, Proposal) else Proposal(item)
            self.space.validate(proposal.config)
            candidate = Candidate(self._next_id, self.view.decode(proposal.config), proposal.config, proposal.meta)
            self._next_id += 1
            self._pending[candidate.id] = candidate
            self._seen.add(proposal.config)
            out.append(candidate)
        return out

    def tell(self, result: Result) -> None:
        """Report a finished evaluation of a candidate this searcher proposed."""
        cid = result.candidate.id
        if cid not in self._pending:
            if cid in self._told:
                raise DuplicateResultError(f"candidate {cid} was already told")
            raise UnknownCandidateError(f"candidate {cid} was never asked of this searcher")
        candidate = self._pending.pop(cid)
        self._record(Result(candidate, result.measurement, result.worker, result.device,
                            result.t_submit, result.t_start, result.t_end, result.cache_hit))

    def replay(self, result: Result) -> None:
        """Tell a result this instance did not propose (resume, warm start)."""
        cid = result.candidate.id
        if cid in self._told or cid in self._pending:
            raise DuplicateResultError(f"candidate {cid} is already known to this searcher")
        proposal = result.candidate.proposal
        if proposal is None or not len(proposal):
            proposal = self.view.encode(result.config)
        candidate = Candidate(cid, result.config, proposal, result.candidate.meta)
        self._next_id = max(self._next_id, cid + 1)
        self._seen.add(proposal)
        self._record(Result(candidate, result.measurement, result.worker, result.device,
                            result.t_submit, result.t_start, result.t_end, result.cache_hit))

    def _record(self, result: Result) -> None:
        self._told.add(result.id)
        self.history.append(result)
        value = self.loss(result)
        if value < self.__best_loss:
            self._best, self.__best_loss = result, value
        self._tell(result.candidate, result)

    # -- state ---------------------------------------------------------------------------
    @property
    def next_id(self) -> int:
        """The id the next candidate gets: a result its driver measured without asking (a host tool's resumed or
        enqueued trial) is recorded under it and then replayed (:meth:`searchlab.run.loop.SearchLoop.observe`)."""
        return self._next_id

    @property
    def pending(self) -> Mapping[int, Candidate]:
        return MappingProxyType(self._pending)

    @property
    def best(self) -> Result | None:
        return self._best

    @property
    def done(self) -> bool:
        """True when the searcher has nothing more to propose (exhausted or converged)."""
        return self._done()

    def loss(self, result: Result | None) -> float:
        """Smaller is better, failures +inf, whatever the problem's direction."""
        return math.inf if result is None else loss(result.measurement, self.direction)

    def seen(self, proposal: Config) -> bool:
        """Proposed before (pending or told), in the searcher's space."""
        return proposal in self._seen

    @property
    def n_seen(self) -> int:
        return len(self._seen)

    # -- optional hooks of the run (issue 52, item 3): declared here with a default, never looked up by name --
    def attach_prior(self, prior: Any) -> bool:
        """``prior=``: tables of earlier runs matched to this space (:class:`searchlab.run.priors.Prior`), handed
        over once before the first proposal. Returns whether the searcher learns from it; the default ignores
        it (False: the run notes that ``prior=`` was checked but unused, a cold run)."""
        return False

    def prior_report(self) -> Mapping[str, Any] | None:
        """What the searcher made of its prior -- the tables used, their weights, a ``line`` for the run's
        notes -- for ``summary.json["priors"]``; None (the default): nothing to report."""
        return None

    def shortfall(self) -> str | None:
        """Why a searcher that is not anytime ended without a usable result (DP short of budget: paper 002
        §4.2), said in the run's summary when it stopped on its budget; None (the default): nothing to explain."""
        return None

    # -- hooks of the algorithm ------------------------------------------------------------
    @abstractmethod
    def _ask(self, n: int) -> Sequence[ProposalLike]:
        """Propose up to ``n`` configurations of ``self.space`` (see ``self.pending``)."""

    def _tell(self, candidate: Candidate, result: Result) -> None:  # noqa: B027 - optional hook
        """Learn from one result (any order; also called for replayed results)."""

    def _done(self) -> bool:
        """True once the searcher has nothing more to propose (exhausted or converged); False by default."""
        return False
