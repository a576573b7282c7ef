"""``searcher=transfer``: our recommended transfer across devices (a combination, ours).

1. **Zero-shot start** (syne-tune's ``ZeroShotTransfer``; the top-k baseline): the first
   ``k`` proposals are the top of the cross-device ranking (mean normalised speed over the
   prior devices, searchlab.run.priors). Nothing is measured yet, so every table counts alike.
2. **Agreement-weighted front**: from ``check_after`` successful evaluations on, each prior
   table is weighed by how well it ranks the measured points (RGPE's ranking-loss weights,
   Feurer, Letham, Hutter & Bakshy 2018 §4.1; :mod:`.agreement`), and until ``front``
   evaluations the next proposal is the best unmeasured configuration of the *weighted*
   ranking. A device like one of its priors (the W6600 like the MI250X) follows that prior.
3. **Model-based continuation** (``transfer_gp``): ``auto``'s GP with one input per kept prior
   table (its log normalised speed), knowing every result so far; its ARD length scales decide
   how much each prior explains, and ``auto``'s local finish searches around the incumbent,
   so a device whose best configurations differ from its priors' (the A100) leaves them.
4. **Agreement test, each table separately**: after every successful evaluation from
   ``check_after`` on, Kendall's tau between the table's speed and the measured speed, with the
   Fieller-Hartley-Pearson 95 % interval (:func:`.agreement.kendall_interval`). A table whose
   whole interval lies at or below ``min_agreement`` is dropped (weight 0, its GP input
   removed); when every table is dropped, plain cold ``auto`` continues with every result.

Recorded: every proposal's meta carries the weights in force and ``cold`` (whether cold
``auto`` had taken over), so the run's records hold the decision at each evaluation;
:meth:`TransferSearcher.prior_report` is what the run's ``summary.json`` (``priors``) and its
printed note say at the end. ``k=5``, ``check_after=5``, ``min_agreement=0`` and the interval's
95 % were fixed a priori; ``front`` was chosen by leave-one-device-out on the four shared
convolution tables (docs/transfer.md says which tables chose what). Without a prior it is ``auto``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from searchlab.core.provenance import SHARED_CONVOLUTION
from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._auto.searcher import AutoSearcher
from searchlab.searchers._base import Proposal, ProposalLike
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.agreement import MIN_POINTS, Agreement, kendall_interval, ranking_weights
from searchlab.searchers._transfer.common import short_name
from searchlab.searchers._transfer.gp import TransferGpSearcher, augment

FRONT = 10  # chosen by leave-one-device-out on the four shared tables (docs/transfer.md)
MAX_FRONT = 100


def _checked(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"searcher.{name}={value!r}: must be an integer >= {low}")
    return value


class TransferSearcher(TransferGpSearcher):
    name = "transfer"
    defaults_chosen_on = SHARED_CONVOLUTION  # FRONT, by leave-one-device-out on the four shared tables (docs/transfer.md)

    # k: top of the equal-weight ranking evaluated first; check_after: successful evaluations
    # before the tables are weighed and tested (>= 5, the interval's minimum); front: evaluations
    # led by the agreement-weighted ranking before the GP; min_agreement: Kendall's tau at or
    # below which a table's whole 95 % interval must lie for it to be dropped
    def __init__(self, space: Space, *, k: int = 5, check_after: int = MIN_POINTS, front: int = FRONT,
                 min_agreement: float = 0.0, **kwargs: Any) -> None:
        _checked("check_after", check_after, MIN_POINTS)
        if _checked("front", front, 0) > MAX_FRONT:  # the weights cost ~n^2 per tell while the front runs
            raise ConfigError(f"searcher.front={front!r}: must be an integer in [0, {MAX_FRONT}]")
        if isinstance(min_agreement, bool) or not isinstance(min_agreement, (int, float)) or not (
                -1 <= min_agreement < 1):
            raise ConfigError(f"searcher.min_agreement={min_agreement!r}: must be a number in [-1, 1)")
        super().__init__(space, k=k, **kwargs)
        self.check_after, self.front_len, self.min_agreement = check_after, front, float(min_agreement)
        self._observed: dict[Config, float] = {}  # successful configurations -> loss
        self._keep: list[bool] = []
        self.weights: np.ndarray = np.zeros(0)
        self.agreements: tuple[Agreement, ...] = ()
        self.dropped_at: dict[str, int] = {}  # table -> evaluations told when it was dropped
        self.fell_back_at: int | None = None  # evaluations told when cold auto took over
        self._configs: list[Config] = []
        self._speeds = np.zeros((0, 0))

    @property
    def fell_back(self) -> bool:
        return self.fell_back_at is not None

    def _on_prior(self, prior: Any) -> None:
        super()._on_prior(prior)
        self._keep = [True] * len(prior.tables)
        self.weights = np.full(len(prior.tables), 1.0 / max(len(prior.tables), 1))
        self._configs = list(prior.configs)  # canonical-key order: ties of the weighted ranking
        self._speeds = np.array([[t.speed.get(c, 0.0) for c in self._configs] for t in prior.tables])

    # -- proposing ----------------------------------------------------------------------
    def _ask(self, n: int) -> Sequence[ProposalLike]:
        if self.prior is not None and not self.fell_back and not self.front and self._configs:
            self.front = self._weighted_front(min(n, self.front_len - self.n_seen))
        meta = self._state_meta()
        return [Proposal(p.config, {**p.meta, **meta}) if isinstance(p, Proposal) else Proposal(p, meta)
                for p in super()._ask(n)]

    def _weighted_front(self, room: int) -> list[Config]:
        """The next ``room`` unmeasured configurations of the agreement-weighted ranking."""
        if room <= 0:
            return []
        score = self.weights @ self._speeds
        out: list[Config] = []
        for i in np.lexsort((np.arange(len(score)), -score)):
            config = self._configs[int(i)]
            if not self.seen(config) and self.space.check(config) is None:
                out.append(config)
                if len(out) == room:
                    break
        return out

    def _state_meta(self) -> dict[str, Any]:
        if self.prior is None:
            return {}
        return {"prior_weights": [round(float(w), 4) for w in self.weights], "cold": self.fell_back}

    # -- learning -----------------------------------------------------------------------
    def _learn(self, config: Config, loss: float) -> None:
        if self.prior is None or self.fell_back or not np.isfinite(loss):
            return
        self._observed[config] = loss
        if len(self._observed) < self.check_after:
            return
        configs = list(self._observed)
        measured = np.array([-self._observed[c] for c in configs])
        table_speed = np.array([[t.speed.get(c, 0.0) for c in configs] for t in self.prior.tables])
        self.agreements = tuple(self._agreement(t.source, row, measured) for t, row in zip(self.prior.tables, table_speed))
        drop = [i for i, a in enumerate(self.agreements) if self._keep[i] and a.hi is not None and a.hi <= self.min_agreement]
        for i in drop:
            self._keep[i] = False
            self.dropped_at[self.prior.tables[i].source] = len(self.history)
        if self.n_seen < self.front_len or drop:
            self.weights = ranking_weights(table_speed, measured, self._keep, seed=self._weight_seed())
        if drop:
            self._drop_tables()

    def _agreement(self, source: str, speed: np.ndarray, measured: np.ndarray) -> Agreement:
        got = kendall_interval(list(speed), list(measured))
        if got is None:
            return Agreement(source, None, None, None, len(measured))
        return Agreement(source, got[0], got[1], got[2], len(measured))

    def _weight_seed(self) -> int:
        return int(np.random.SeedSequence([int(self.seed or 0), len(self.history)]).generate_state(1)[0])

    def _drop_tables(self) -> None:
        """Rebuild the GP without the dropped tables' inputs; cold ``auto`` when none is left."""
        self.front = []
        if not any(self._keep):
            self.fell_back_at = len(self.history)
            self._rebuild(self.problem_space)  # plain auto: no prior inputs, every result replayed
            return
        kept = dataclasses.replace(self.prior, tables=tuple(t for t, k in zip(self.prior.tables, self._keep) if k))
        self._rebuild(self.problem_space, initial=self.k)
        if isinstance(self._inner, AutoSearcher):
            augment(self._inner, kept)

    # -- what the run records and prints --------------------------------------------------
    def prior_report(self) -> Mapping[str, Any] | None:
        """The priors used, their final weights and agreement, and whether cold ``auto`` took over."""
        if self.prior is None:
            return None
        by = {a.source: a for a in self.agreements}
        tables = [{"source": t.source, "device": t.device, "weight": round(float(w), 4), "used": keep,
                   "dropped_at": self.dropped_at.get(t.source),
                   **({"tau": round(a.tau, 4), "ci95": [round(a.lo or 0, 4), round(a.hi or 0, 4)], "points": a.points}
                      if (a := by.get(t.source)) is not None and a.tau is not None else {"tau": None})}
                  for t, w, keep in zip(self.prior.tables, self.weights, self._keep)]
        return {"tables": tables, "cold_auto": self.fell_back, "fell_back_at": self.fell_back_at,
                "line": self._line(tables)}

    def _line(self, tables: list[dict[str, Any]]) -> str:
        used = ", ".join(f"{short_name(t['source'])} (weight {t['weight']:.2f}"
                         + (f", tau {t['tau']:+.2f} [{t['ci95'][0]:+.2f}, {t['ci95'][1]:+.2f}])" if t["tau"] is not None
                            else ")") for t in tables if t["used"])
        dropped = ", ".join(f"{short_name(t['source'])} after {t['dropped_at']}" for t in tables if not t["used"])
        if self.fell_back:
            return (f"prior: every table misordered the measured points ({dropped}); "
                    f"cold auto took over after {self.fell_back_at} evaluations")
        return f"prior: used {used}" + (f"; dropped {dropped}" if dropped else "") + "; cold auto did not take over"


TransferConfig = searcher_config(TransferSearcher)
