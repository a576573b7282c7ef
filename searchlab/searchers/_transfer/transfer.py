"""``searcher=transfer``: our recommended transfer across devices (a combination, ours).

1. **Zero-shot start** (syne-tune's ``ZeroShotTransfer``; the top-k baseline): the first
   ``k`` proposals are the top of the cross-device ranking (mean normalised speed over the
   prior devices, searchlab.run.priors). On a device like its priors this alone is near the
   optimum within a handful of evaluations.
2. **Model-based continuation** (``transfer_gp``): ``auto``'s GP with one input per prior
   device (its log normalised speed), warm-started with the front's results. The ARD length
   scales, fitted on the new device's results, decide how much each prior device explains
   (the role of RGPE's ranking weights, Feurer et al. 2018 §4), and ``auto``'s local finish
   searches around the incumbent, so a device whose best configurations differ from its
   priors' (the A100 among the shared convolution tables) leaves the prior's top after ``k``
   evaluations instead of stalling there.
3. **Fallback to cold search** when the device is unlike its priors: once ``check_after``
   evaluations have succeeded, and after every later one, the Spearman rank correlation
   between the prior's mean speed and the measured speed of the evaluated configurations is
   computed; at or below ``min_agreement`` the prior is dropped: the rest of the front is
   discarded and a plain ``auto`` (no prior inputs) continues with every result so far. A
   prior that ranks the device's configurations no better than chance (or in reverse) then
   costs at most ``check_after`` evaluations of ranking-led search.

Settings (``k=5``, ``check_after=8``, ``min_agreement=0``) were fixed a priori, before the
leave-one-device-out study (docs/transfer.md), not tuned on any device. Without a prior it is
``auto``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.gp import TransferGpSearcher


class TransferSearcher(TransferGpSearcher):
    name = "transfer"

    # k: top of the ranking evaluated first; check_after: successful evaluations before the
    # prior's agreement with the device is tested; min_agreement: Spearman correlation at or
    # below which the prior is dropped (cold auto continues)
    def __init__(self, space: Space, *, k: int = 5, check_after: int = 8, min_agreement: float = 0.0,
                 **kwargs: Any) -> None:
        if isinstance(check_after, bool) or not isinstance(check_after, int) or check_after < 3:
            raise ConfigError(f"searcher.check_after={check_after!r}: must be an integer >= 3")
        if isinstance(min_agreement, bool) or not isinstance(min_agreement, (int, float)) or not (
                -1 <= min_agreement < 1):
            raise ConfigError(f"searcher.min_agreement={min_agreement!r}: must be a number in [-1, 1)")
        super().__init__(space, k=k, **kwargs)
        self.check_after, self.min_agreement = check_after, float(min_agreement)
        self._observed: dict[Config, float] = {}  # successful configurations -> loss
        self.agreement: float | None = None  # the last Spearman correlation computed
        self.fell_back_at: int | None = None  # evaluations told when the prior was dropped

    @property
    def fell_back(self) -> bool:
        return self.fell_back_at is not None

    def _learn(self, config: Config, loss: float) -> None:
        if self.prior is None or self.fell_back or not np.isfinite(loss):
            return
        self._observed[config] = loss
        if len(self._observed) < self.check_after:
            return
        configs = list(self._observed)
        prior_speed = [self.prior.score(c) for c in configs]
        target_speed = [-self._observed[c] for c in configs]
        if len(set(prior_speed)) < 2 or len(set(target_speed)) < 2:
            return  # no order to compare yet
        from scipy.stats import spearmanr  # lazily: scipy.stats costs ~0.5 s to import

        rho = float(spearmanr(prior_speed, target_speed)[0])
        self.agreement = rho
        if rho <= self.min_agreement:
            self.fell_back_at = len(self.history)
            self.front = []
            self._rebuild(self.problem_space)  # plain auto: no prior inputs, every result replayed


TransferConfig = searcher_config(TransferSearcher)
