"""Dynamic programming over sub-problems, the search of FFTW, UHFFT and Spiral (paper 002 §4.2).

DP assumes the best solution of a problem is built from the best solutions of its
sub-problems (§4.2, with its footnote on why that fails: context changes performance).
Sub-problems are solved bottom-up: once every sub-problem a rule needs is solved, each
rule of a sub-problem is tried with the best plans of the sub-problems it needs (with
``n_best`` > 1, every combination of their n best plans: Spiral's n-best DP), each
candidate is *measured alone* (a sub-problem measurement, ``extra["subproblem"]``), and
the best ``n_best`` are kept. A sub-problem with a single candidate needs no measurement.
The problem itself is the last sub-problem; its best candidate is DP's answer, and DP is
done (it is not anytime: nothing full-size is measured before the end).

DP needs a problem that can evaluate sub-problems (capability ``subproblems``) and a
space that names them (:class:`SubproblemGraph`, e.g. a grammar's derivation graph).
Sub-problems whose dependencies are all solved are proposed together, so several
evaluations can be in flight.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from searchlab.core.records import Candidate, Config, Direction, Result, Status
from searchlab.core.spaces import DerivationGraph, Space
from searchlab.errors import ConfigError
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._schema import searcher_config


@runtime_checkable
class SubproblemGraph(Protocol):
    """A derivation graph whose words decompose into sub-problem words."""

    def subproblems(self) -> Sequence[str]:
        """Sub-problem names, dependencies first; the last one is the problem itself."""
        ...

    def breakdowns(self, name: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        """(rule label, sub-problems the rule needs, in order) for each rule of ``name``."""
        ...

    def compose(self, name: str, label: str, parts: Sequence[str]) -> str:
        """The word key of ``name`` by rule ``label`` from sub-problem word keys ``parts``."""
        ...


class DpSearcher(Searcher):
    name = "dp"
    space_kinds = (DerivationGraph,)
    requires = frozenset({"subproblems"})
    unique = True

    def __init__(self, space: Space, *, n_best: int = 1, **kwargs: Any) -> None:
        if isinstance(n_best, bool) or not isinstance(n_best, int) or n_best < 1:
            raise ConfigError(f"searcher.n_best={n_best!r}: must be a positive integer")
        super().__init__(space, **kwargs)
        assert isinstance(self.space, SubproblemGraph)  # space_kinds
        self.graph: SubproblemGraph = self.space
        self.n_best = n_best
        self.order = list(self.graph.subproblems())
        self.top = self.order[-1]
        self.solved: dict[str, list[str]] = {}  # sub-problem -> its best word keys, best first
        self.measured: dict[str, dict[str, float]] = {name: {} for name in self.order}
        self._in_flight: dict[str, set[str]] = {name: set() for name in self.order}
        self._candidates: dict[str, list[str]] = {}

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        if not isinstance(space, SubproblemGraph):
            return (f"searcher 'dp' needs a space made of sub-problems (subproblems/breakdowns/compose, e.g. "
                    f"a grammar's derivation graph such as problem=dft); this space is a {type(space).__name__}")
        return None

    # -- bottom-up schedule ------------------------------------------------------------------
    def _ready(self, name: str) -> bool:
        return all(need in self.solved for _, needs in self.graph.breakdowns(name) for need in needs)

    def candidates(self, name: str) -> list[str]:
        """Every rule of ``name`` applied to the n best plans of the sub-problems it needs."""
        if name not in self._candidates:
            keys: dict[str, None] = {}
            for label, needs in self.graph.breakdowns(name):
                for parts in itertools.product(*(self.solved[need] for need in needs)):
                    keys[self.graph.compose(name, label, parts)] = None
            self._candidates[name] = list(keys)
        return self._candidates[name]

    def _settle(self) -> None:
        """Solve every ready sub-problem whose candidates are all measured (or need none)."""
        progress = True
        while progress:
            progress = False
            for name in self.order:
                if name in self.solved or not self._ready(name):
                    continue
                cands = self.candidates(name)
                if len(cands) <= 1 and name != self.top:
                    self.solved[name] = cands
                elif all(c in self.measured[name] for c in cands):
                    ranked = sorted((loss, c) for c, loss in self.measured[name].items()
                                    if c in cands and math.isfinite(loss))
                    self.solved[name] = [c for _, c in ranked[: self.n_best]]
                else:
                    continue
                progress = True

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        self._settle()
        out: list[ProposalLike] = []
        for name in self.order:
            if name in self.solved or not self._ready(name):
                continue
            for key in self.candidates(name):
                if len(out) == n:
                    return out
                if key in self.measured[name] or key in self._in_flight[name]:
                    continue
                self._in_flight[name].add(key)
                out.append(Proposal(Config(word=key), {"dp": {"subproblem": name}}))
        return out

    # -- results ---------------------------------------------------------------------------
    def _raw_loss(self, result: Result) -> float:
        """Loss within a sub-problem (the base loss is +inf for sub-problem measurements)."""
        m = result.measurement
        if m.status is not Status.OK or m.objective is None:
            return math.inf
        return -m.objective if self.direction is Direction.MAXIMIZE else m.objective

    def _tell(self, candidate: Candidate, result: Result) -> None:
        meta = candidate.meta.get("dp") or {}
        name = str(meta.get("subproblem") or result.measurement.extra.get("subproblem") or self.top)
        if name not in self.measured:
            return
        key = str(candidate.proposal["word"])
        self._in_flight[name].discard(key)
        self.measured[name][key] = self._raw_loss(result)
        self._settle()

    def _done(self) -> bool:
        return self.top in self.solved

    # -- budget ----------------------------------------------------------------------------
    def evaluations_needed(self) -> int:
        """Measurements DP makes before it has a full-size answer (every plan it keeps succeeding)."""
        plans: dict[str, int] = {}
        total = 0
        for name in self.order:
            count = sum(math.prod(plans[need] for need in needs) for _, needs in self.graph.breakdowns(name))
            plans[name] = min(self.n_best, count)
            if count > 1 or name == self.top:
                total += count
        return total

    def shortfall(self) -> str | None:
        """Why the run ends without a full-size result: DP is not anytime (§4.2)."""
        if self.top in self.solved:
            return None
        measured = sum(len(m) for m in self.measured.values())
        need = self.evaluations_needed()
        return (f"searcher=dp stopped after {measured} sub-problem measurements, before reaching the full size "
                f"{self.top}: DP measures nothing full-size until every sub-problem is solved and needs "
                f"{need} evaluations here (n_best={self.n_best}); raise budget.evaluations to at least {need}")


# n_best: plans kept per sub-problem (1: classic DP; >1: n-best DP)
DpConfig = searcher_config(DpSearcher)
