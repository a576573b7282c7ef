"""Optuna's samplers behind ask/tell, on every space kind: the shared base (the samplers
themselves, TPE, CMA-ES, GP, QMC and random, are in :mod:`.samplers`).

Encoding (how a configuration becomes Optuna parameters):

- ``IntKnob`` -> ``suggest_int(low, high, step, log)``; Optuna refuses ``log`` with a
  ``step`` other than 1, so such a knob is an index ``suggest_int(0, n - 1)``;
- ``OrdinalKnob`` -> an index ``suggest_int(0, n - 1)``, not a categorical: the order is the
  point of an ordinal knob (powers of two, tile sizes), and TPE's, GP's and CMA-ES's numeric
  models use it, while CMA-ES cannot handle categoricals at all;
- ``CategoricalKnob`` -> ``suggest_categorical`` over the value indices (values may be tuples,
  which Optuna does not accept as choices);
- threshold trees arrive as plateau knobs (ordinal knobs of plateau representatives, paper 003
  §3.5), hence plateau indices;
- derivation DAGs define-by-run: from ``space.root`` each node with more than one arc that
  derives a word (``count_sinks(child) > 0``) is a categorical named by the node's key over
  those arc labels, until ``is_word``; the path is kept in the candidate's meta.

Failures (FAILED, TIMEOUT, CRASHED, and known-infeasible configurations, which are caught
before proposing, free) reach the sampler as a constraint violation (``trial.set_constraint``,
+1 infeasible, -1 feasible, so a GP's probability of feasibility is near 1 at known-good
points; TPE and GP model it, DESIGN.md: otherwise Optuna 5 keeps proposing them), with the
worst loss seen so far as value. CMA-ES ignores constraints (and warns about them), so it
gets the worst loss only. A failure before any working configuration stays open (TPE's
constant liar treats running trials as bad) until a value exists.

Duplicates: samplers may propose a configuration again. We deduplicate (``unique = True``):
an already-measured configuration is told its known loss at once (a free observation, the
sampler learns it is known) and the sampler is asked again; one still in flight is parked and
told when its twin's result arrives. After ``max_retries`` such draws (or known-infeasible
ones) in a row, a random unseen configuration is enqueued (``study.enqueue_trial``); when
none is left the searcher is done. ``optuna_gp`` does not ask again (``repair``): each ask is
a GP fit and an acquisition optimisation, so a repeated or known-infeasible draw is settled
as above (which teaches the GP that it is known) and replaced by the nearest fresh valid
configuration, by index steps (``Grid.nearest``) -- the repair step of constrained BO
(docs/baselines.md, issue 16). Telling such draws FAIL instead, so that the models skip
them, was tried: the GP then never learns them and 210 of 220 proposals were repairs.

Evaluations in flight are running trials: TPE's ``constant_liar``; GP's acquisition
(``qLogEI``) conditions on running trials; CMA-ES, QMC and random sample independently of
them. Replayed results become trials through ``enqueue_trial`` + ``ask`` + ``tell``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import DerivationGraph, KnobSpace, Space
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._optuna.encoding import DagEncoder, Encoder, KnobEncoder, Meta
from searchlab.searchers._support.neighbours import Grid

CONSTRAINT = "failed"


@contextmanager
def quiet_optuna() -> Iterator[None]:
    """Optuna's INFO lines (a study created, each trial finished) kept out of a run's output while our own
    study works, and the user's level restored after (issue 36, item 7: building or running a searcher
    must not change Optuna's global logging level for the rest of the process)."""
    import optuna

    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(max(level, optuna.logging.WARNING))
    try:
        yield
    finally:
        optuna.logging.set_verbosity(level)


class OptunaSearcher(Searcher):
    """Base: one Optuna study per searcher; subclasses build the sampler."""

    space_kinds = (KnobSpace, DerivationGraph)  # thresholds arrive as plateau knobs
    sampler_label: ClassVar[str] = "sampler"
    models_conditionals: ClassVar[bool] = True  # False: only parameters shared by all trials are modelled
    uses_constraints: ClassVar[bool] = True  # False: the sampler ignores (and warns about) constraints

    def __init__(self, space: Space, *, max_retries: int = 16, **kwargs: Any) -> None:
        from searchlab.errors import ConfigError

        if max_retries < 1:
            raise ConfigError(f"searcher.max_retries={max_retries}: must be >= 1")
        super().__init__(space, **kwargs)
        import optuna

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampler = self._sampler(optuna, int(self.rng.integers(2**31 - 1)))
        with quiet_optuna():
            self.study = optuna.create_study(direction="minimize", sampler=sampler)
        space = self.space
        assert isinstance(space, (DerivationGraph, KnobSpace))  # space_kinds
        self.encoder: Encoder = DagEncoder(space) if isinstance(space, DerivationGraph) else KnobEncoder(space)
        self.max_retries = max_retries
        self._open: dict[Config, Any] = {}  # proposal -> its running trial
        self._twins: dict[Config, list[Any]] = {}  # duplicate trials waiting for the first's result
        self._known: dict[Config, float] = {}
        self._unscored: list[Any] = []  # failed trials told once a working value exists
        self._worst: float | None = None
        self._exhausted = False
        self._grid: Grid | None = None  # set by a searcher that repairs draws instead of asking again
        self.duplicates = 0
        self.repairs = 0

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        if isinstance(space, DerivationGraph) and not cls.models_conditionals:
            return (f"searcher {cls.name!r}: Optuna's {cls.sampler_label} models only the parameters every trial "
                    "shares (IntersectionSearchSpace); on a derivation DAG the decisions after the root differ "
                    "between trials and would all be drawn by its independent RandomSampler; use optuna_tpe or "
                    "optuna_random on DAGs")
        return None

    def _sampler(self, optuna: Any, seed: int) -> Any:
        raise NotImplementedError

    # -- proposing ----------------------------------------------------------------------
    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[ProposalLike] = []
        while len(out) < n and not self._exhausted:
            proposal = self._propose()
            if proposal is None:
                break
            out.append(proposal)
        return out

    def _propose(self) -> Proposal | None:
        for _ in range(self.max_retries):
            with quiet_optuna():
                trial = self.study.ask()
            config, meta = self.encoder.sample(trial)
            if not self._settle(trial, config):
                self._open[config] = trial
                return Proposal(config, meta)
            if self._grid is not None:  # repair instead of asking again
                self.repairs += 1
                return self._instead(self._grid.nearest(config, self._fresh, self.rng))
        return self._instead(None)

    def _instead(self, config: Config | None) -> Proposal | None:
        """Propose ``config`` (a repair) or else a random unseen configuration, as a running trial."""
        found = (config, {}) if config is not None else self._unseen()
        if found is None:
            self._exhausted = True
            return None
        self._open[found[0]], meta = self._open_trial(*found)
        return Proposal(found[0], meta)

    def _settle(self, trial: Any, config: Config) -> bool:
        """Deal with a sampled configuration that must not be proposed; False if it is new."""
        if config in self._known:
            self.duplicates += 1
            self._finish(trial, self._known[config])
        elif config in self._open:
            self.duplicates += 1
            self._twins.setdefault(config, []).append(trial)
        elif self.space.check(config) is not None:
            self._known[config] = math.inf
            self._finish(trial, math.inf)
        else:
            return False
        return True

    def _fresh(self, config: Config) -> bool:
        return config not in self._known and config not in self._open and self.space.check(config) is None

    def _unseen(self) -> tuple[Config, Meta] | None:
        for _ in range(200):
            config, meta = self.encoder.random(self.rng)
            if self._fresh(config):
                return config, meta
        return next(((c, m) for c, m in self.encoder.members() if self._fresh(c)), None)

    def _open_trial(self, config: Config, meta: Meta) -> tuple[Any, Meta]:
        """A running trial with the parameters of ``config`` (fallback proposals, replay)."""
        with quiet_optuna():
            self.study.enqueue_trial(self.encoder.params(config, meta))
            trial = self.study.ask()
        sampled, meta = self.encoder.sample(trial)
        assert sampled == config, (sampled, config)
        return trial, meta

    # -- learning -----------------------------------------------------------------------
    def _finish(self, trial: Any, loss: float) -> None:
        if self.uses_constraints:
            trial.set_constraint(CONSTRAINT, -1.0 if math.isfinite(loss) else 1.0)
        with quiet_optuna():
            if math.isfinite(loss):
                self.study.tell(trial, loss)
                first = self._worst is None
                self._worst = loss if self._worst is None else max(self._worst, loss)
                if first:
                    for waiting in self._unscored:
                        self.study.tell(waiting, self._worst)
                    self._unscored.clear()
                return
            if self._worst is None:
                self._unscored.append(trial)
            else:
                self.study.tell(trial, self._worst)

    def _tell(self, candidate: Candidate, result: Result) -> None:
        config, loss = candidate.proposal, self.loss(result)
        self._known[config] = loss
        trial = self._open.pop(config, None)
        if trial is None:  # a replayed result: make it a trial of the study
            trial, _ = self._open_trial(config, candidate.meta)
        self._finish(trial, loss)
        for twin in self._twins.pop(config, []):
            self._finish(twin, loss)

    def _done(self) -> bool:
        return self._exhausted
