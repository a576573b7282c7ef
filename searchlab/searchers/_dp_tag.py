"""DP when it fits the budget, then ``tag_scaled`` (``searcher=dp_tag``; issue 38, item 3).

Why. At 2^16 no TAG, ``tag_scaled`` or MC run of 150 evaluations found a plan within 0.8 of
FFTW_MEASURE in more than 1 of 5 seeds (docs/grammar.md, "DFT search at 2^16"), while DP over
sub-problems (paper 002 §4.2, the search of FFTW and Spiral, :mod:`searchlab.searchers._dp`)
needs 145 evaluations there and its plan ran at 1.01 of FFTW. DP is cheap exactly where the
derivation graph has few sub-problems (powers of two: 70 evaluations at 2^10, 91 at 4096, 130 at
2^15, 145 at 2^16), and useless where it does not fit: it is not anytime (nothing full-size is
measured before its last sub-problem), and mixed-radix sizes need 336-2011 evaluations.

So this searcher decides once, before its first proposal, from numbers known in advance:

- the space accepts sub-words (the problem measures sub-problems, capability ``subproblems``,
  e.g. ``problem=dft``), and
- DP's evaluation count (:meth:`DpSearcher.evaluations_needed`) is at most ``fit`` x the run's
  evaluation budget (an unknown budget never fits: DP would have no end in sight);

then DP runs to its answer and the evaluations left go to ``tag_scaled`` (paper 002 §3 with
issue 38's scaled exploration), which is told DP's full-size measurements so it never re-measures
them. Otherwise the whole run is ``tag_scaled``. Deviation from the paper: §4.2 presents DP and
TAG as rivals; here DP is the opening of an anytime TAG run, chosen by cost.

``fit`` = 1.0 and the rule itself were chosen on the DFT training sizes 4096, 32768, 6000, 50000
and 2^18 (DP fits 150 evaluations at 4096 and 32768 only), and judged on the held-out sizes
(docs/grammar.md, bench/dag_heldout.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchlab.core.provenance import DFT_TRAINING_SIZES
from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import DerivationGraph, Space
from searchlab.errors import ConfigError
from searchlab.searchers._bandit.tag_scaled import TagScaledSearcher
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._dp import DpSearcher, SubproblemGraph
from searchlab.searchers._schema import searcher_config


class DpTagSearcher(Searcher):
    name = "dp_tag"
    defaults_chosen_on = (DFT_TRAINING_SIZES,)  # when DP opens, and tag_scaled's settings (docs/grammar.md)
    space_kinds = (DerivationGraph,)
    unique = True  # DP is unique; tag_scaled (no_repeat) is told DP's full-size words

    def __init__(self, space: Space, *, fit: float = 1.0, **kwargs: Any) -> None:
        if isinstance(fit, bool) or not isinstance(fit, (int, float)) or not 0 < fit <= 1:
            raise ConfigError(f"searcher.fit={fit!r}: must be a number in (0, 1], e.g. searcher.fit=1.0")
        super().__init__(space, **kwargs)
        self.fit = float(fit)
        self._tag = TagScaledSearcher(self.space, direction=self.direction, seed=self.seed)
        self._dp: DpSearcher | None = None
        if getattr(self.space, "subwords", False) and isinstance(self.space, SubproblemGraph):
            self._dp = DpSearcher(self.space, direction=self.direction, seed=self.seed)
        self._use_dp: bool | None = None  # decided at the first ask
        self._dp_spent = 0
        self._handed_over = False

    def set_budget(self, evaluations: int | None) -> None:
        super().set_budget(evaluations)
        self._tag.set_budget(evaluations)
        if not self.history and not self.pending:
            self._use_dp = None  # not proposed yet: decide on this budget

    @property
    def plan(self) -> str:
        """What this run does (summaries, bench): ``dp+tag_scaled`` or ``tag_scaled``."""
        return "dp+tag_scaled" if self._decide() else "tag_scaled"

    def _decide(self) -> bool:
        if self._use_dp is None:
            budget = self.evaluation_budget
            self._use_dp = (self._dp is not None and budget is not None
                            and self._dp.evaluations_needed() <= self.fit * budget)
        return self._use_dp

    def _in_dp(self) -> bool:
        return self._decide() and self._dp is not None and not self._dp.done

    def _hand_over(self) -> None:
        """tag_scaled starts: it takes the budget DP left and knows DP's full-size words."""
        if self._handed_over:
            return
        self._handed_over = True
        if self._dp is None:
            return
        if self._use_dp and self.evaluation_budget is not None:
            self._tag.set_budget(max(1, self.evaluation_budget - self._dp_spent))
        for r in self._dp.history:  # also a resumed DP phase that no longer fits: never re-measured
            if not r.measurement.is_subproblem:
                self._tag.replay(Result(Candidate(r.candidate.id, r.config, r.candidate.proposal, {}),
                                        r.measurement))

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        if self._in_dp():
            assert self._dp is not None
            return [Proposal(c.config, {**c.meta, "phase": "dp", "delegate_id": c.id}) for c in self._dp.ask(n)]
        if self._dp is not None and self._use_dp and self._dp.pending:
            return []  # DP's last answers are still in flight
        self._hand_over()
        return [Proposal(c.config, {**c.meta, "phase": "tag", "delegate_id": c.id}) for c in self._tag.ask(n)]

    def _tell(self, candidate: Candidate, result: Result) -> None:
        phase, inner_id = candidate.meta.get("phase"), candidate.meta.get("delegate_id")
        inner = self._dp if phase == "dp" else self._tag
        if inner is not None and isinstance(inner_id, int) and inner_id in inner.pending:
            if phase == "dp":
                self._dp_spent += 1
            inner.tell(Result(inner.pending[inner_id], result.measurement, result.worker, result.device,
                              result.t_submit, result.t_start, result.t_end, result.cache_hit))
            return
        # a replayed result (resume): the phase that proposed it learns it as its own history
        target = inner if inner is not None else self._tag
        if phase == "dp":
            self._dp_spent += 1
        target.replay(Result(Candidate(candidate.id, candidate.config, candidate.proposal or Config(), {}),
                             result.measurement))

    def _done(self) -> bool:
        return not self._in_dp() and self._tag.done


# fit: DP runs first when its evaluation count is at most fit x budget.evaluations
DpTagConfig = searcher_config(DpTagSearcher)
