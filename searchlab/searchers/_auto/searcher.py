"""``searcher=auto``: the searcher we recommend when you do not want to study searchers.

- **Knob spaces** (OpenCL/CUDA kernels, Kernel Tuner tables, user programs): model-based
  search over the valid configurations (``_auto/knobs.py``: GP on log time x feasibility
  model, space-filling start, kriging believer for evaluations in flight, local finish,
  alignment feature for integer sizes, a prior on the length scales). Measured against
  Kernel Tuner's strategies and every searchlab searcher in ``bench/peers.py``
  (docs/baselines.md, "auto"), with the margin to the best peer at each budget.
- **Threshold trees** (Futhark programs): ``binary`` (paper 003 Alg. 5), the tuner with the
  best benchmark-runs-to-quality trade-off in ``bench/thresholds.py`` that needs no problem
  capability (``instrumented`` is cheaper but needs instrumentation).
- **Derivation DAGs** (grammars, DFT): ``dp_tag`` (issue 38): DP over sub-problems (paper 002
  §4.2) when the problem measures sub-problems and DP's evaluation count fits the budget, then
  ``tag_scaled`` (paper 002 §3 with threshold ascent's exploration scaled to the arms and plays);
  otherwise ``tag_scaled`` alone. Chosen on the training DFT sizes (DP fits 150 evaluations at 4096
  and 32768: better final plan at 32768, a tie at 4096); held out, at 2^16 its plan ran at 0.93-1.16
  of FFTW_MEASURE in 5 of 5 seeds (docs/grammar.md, bench/dft_fftw.py). ``tag_scaled`` itself beat
  MC at 10007 and 2^16 held out. ``searcher.dag=tag`` gives the paper's TAG.

The delegate for thresholds and DAGs is an ordinary searcher driven through its public
ask/tell; its candidates are mapped to ours one to one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from searchlab.core.provenance import DFT_TRAINING_SIZES, SHARED_CONVOLUTION
from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import KnobSpace, Space, ThresholdTree
from searchlab.errors import ConfigError
from searchlab.searchers._auto.model import KnobModel
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable


def _delegate_class(name: str, option: str) -> type[Searcher]:
    from searchlab import registry
    from searchlab.searchers._build import searcher_class  # the one lookup (issue 52)

    if name in ("auto", "portfolio") or name not in registry.searchers():
        raise ConfigError(f"searcher.{option}={name!r}: must name a registered searcher other than auto/portfolio")
    return searcher_class(name, f"searcher.{option}")


class AutoSearcher(Searcher):
    name = "auto"
    # knobs: prior, alignment, min_feasibility compared on the four shared convolution tables (docs/baselines.md,
    # "How the defaults were chosen"); DAGs: its delegates' settings, on the DFT training sizes (docs/grammar.md)
    defaults_chosen_on = (*SHARED_CONVOLUTION, DFT_TRAINING_SIZES)
    space_kinds = (Space,)  # every kind as itself: the knob model, or a delegate for its kind

    # initial: space-filling proposals before the model takes over; candidates: valid configurations
    # considered (all when fewer); local_every: every k-th model step searches the incumbent's one-knob
    # neighbours (0: never); refit_growth: refit the GP's hyperparameters when the observations have grown by this
    # factor since the last fit, once there are 40 (before that by 1.25; between fits the posterior is updated
    # exactly, _auto/model.py);
    # alignment: the 2-adic alignment of integer sizes as a model input; prior: median of the log-normal
    # prior on the GP's length scales (0: none, plain maximum likelihood); min_feasibility: model steps
    # skip candidates predicted to fail with probability above 1 - this while any other is left (0: EI x p only);
    # focus: after each fit the model keeps its posterior only for this many candidates, those with the lowest
    # lower confidence bound (0: all; _auto/model.py says what it trades);
    # thresholds / dag: the delegate on threshold trees / derivation DAGs.
    def __init__(self, space: Space, *, initial: Annotated[int, Tunable(3, 40, log=True)] = 10, candidates: int = 20000,
                 local_every: Annotated[int, Tunable(0, 8)] = 3,
                 refit_growth: Annotated[float, Tunable(1.05, 4.0)] = 3.0,
                 alignment: Annotated[bool, Tunable(choices=(True, False))] = True,
                 prior: Annotated[float, Tunable(choices=(0.0, 0.25, 0.5, 1.0, 2.0, 4.0))] = 1.0,
                 min_feasibility: Annotated[float, Tunable(0.0, 0.9)] = 0.5,
                 focus: Annotated[int, Tunable(0, 4096)] = 1024,
                 thresholds: str = "binary", dag: str = "dp_tag", **kwargs: Any) -> None:
        for option, value, low in (("initial", initial, 1), ("candidates", candidates, 10), ("local_every", local_every, 0),
                                   ("focus", focus, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"searcher.{option}={value!r}: must be an integer >= {low}")
        if isinstance(refit_growth, bool) or not isinstance(refit_growth, (int, float)) or not 1 < refit_growth <= 100:
            raise ConfigError(f"searcher.refit_growth={refit_growth!r}: must be a number in (1, 100]")
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0 <= prior < 1e6:
            raise ConfigError(f"searcher.prior={prior!r}: must be a number >= 0 (the prior's median length scale; "
                              "0 = no prior)")
        if isinstance(min_feasibility, bool) or not isinstance(min_feasibility, (int, float)) or not (
                0 <= min_feasibility < 1):
            raise ConfigError(f"searcher.min_feasibility={min_feasibility!r}: must be a number in [0, 1) "
                              "(0 = weight EI by the probability of running only)")
        if not isinstance(alignment, bool):
            raise ConfigError(f"searcher.alignment={alignment!r}: must be true or false")
        super().__init__(space, **kwargs)
        self._inner: Searcher | None = None
        self._model: KnobModel | None = None
        if isinstance(self.space, KnobSpace):
            self._model = KnobModel(self.space, self.direction, self.rng, initial=initial, candidates=candidates,
                                    local_every=local_every, refit_growth=float(refit_growth), alignment=alignment,
                                    prior=prior, min_feasibility=float(min_feasibility), focus=focus)
        else:
            name, option = (thresholds, "thresholds") if isinstance(self.space, ThresholdTree) else (dag, "dag")
            self._inner = _delegate_class(name, option)(self.space, direction=self.direction, seed=self.seed)

    def set_budget(self, evaluations: int | None) -> None:
        """The delegate (thresholds, DAGs) spans the same run, so it hears the budget too."""
        super().set_budget(evaluations)
        if self._inner is not None:
            self._inner.set_budget(evaluations)

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        return None

    @classmethod
    def incompatibility(cls, space: Space, capabilities: Iterable[str] | None = None) -> str | None:
        reason = super().incompatibility(space, capabilities)
        if reason is None and not isinstance(space, KnobSpace):
            delegate = _delegate_class("binary" if isinstance(space, ThresholdTree) else "dp_tag", "delegate")
            reason = delegate.incompatibility(space, capabilities)
        return reason

    @property
    def delegate(self) -> str:
        """What ``auto`` runs on this space (shown in summaries and docs)."""
        return "model-based (GP x feasibility, valid set)" if self._inner is None else self._inner.name

    @property
    def notes(self) -> tuple[str, ...]:
        """Where a cheaper model stood in for the full one on this space, and why (also logged to
        ``searchlab.auto``): a sampled candidate set on a huge unconstrained product, hyperparameters fitted on a
        subset of a long history (``_auto/knobs.py``). Empty when the full model ran."""
        return tuple(self._model.notes) if self._model is not None else ()

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        if self._inner is not None:
            out: list[ProposalLike] = []
            for cand in self._inner.ask(n):
                out.append(Proposal(cand.config, {**cand.meta, "delegate_id": cand.id}))
            return out
        assert self._model is not None
        pending = [self._model.row[c.proposal] for c in self.pending.values() if c.proposal in self._model.row]
        picks: list[ProposalLike] = []
        for _ in range(n):
            row = self._model.next_row(pending)
            if row is None:
                break
            self._model.take(row)
            pending.append(row)
            picks.append(self._model.pool[row])
        return picks

    def _tell(self, candidate: Candidate, result: Result) -> None:
        if self._model is not None:
            self._model.observe(candidate.proposal, result)
            return
        assert self._inner is not None
        inner_id = candidate.meta.get("delegate_id")
        if isinstance(inner_id, int) and inner_id in self._inner.pending:
            inner = self._inner.pending[inner_id]
            self._inner.tell(Result(inner, result.measurement, result.worker, result.device,
                                    result.t_submit, result.t_start, result.t_end, result.cache_hit))
        else:  # a replayed result (resume): the delegate learns it as its own history
            self._inner.replay(Result(Candidate(candidate.id, candidate.config, Config(), {}), result.measurement))

    def _done(self) -> bool:
        if self._inner is not None:
            return self._inner.done
        assert self._model is not None
        return self._model.exhausted


AutoConfig = searcher_config(AutoSearcher)
