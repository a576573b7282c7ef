"""``searcher=transfer_gp``: ``auto``'s Gaussian process with the prior devices as model inputs.

Why: a model-based method lets the *new* device's results decide how much each prior device
is worth, instead of trusting a fixed ranking. RGPE (Feurer, Letham, Hutter & Bakshy,
*Scalable meta-learning for Bayesian optimization using ranking-weighted Gaussian process
ensembles*, 2018, §4) weighs one GP per prior task by how well it ranks the target's
observations. Our variant keeps ``auto``'s single GP (``_auto/knobs.py``: Matérn-5/2 ARD on
log run time, feasibility model, kriging believer, local finish) and appends one input per
prior table, the configuration's log normalised speed there (clipped at 1 % of the best,
scaled to [0, 1]). The ARD length scales, fitted on the target's results, then play the role
of RGPE's weights: a prior device whose speeds explain the target gets a short length scale,
one that does not gets a long one and is ignored. Input augmentation with per-configuration
task information is the idea of Bardenet, Brendel, Kégl & Sebag (*Collaborative
hyperparameter tuning*, ICML 2013, §3), here with measured speeds instead of meta-features.

The initial design is the top ``k`` of the cross-device ranking (warm start, Feurer et al.
2015), then the model steps (``auto``'s ``initial`` is set to ``k``). Without a prior, or on
spaces other than knob spaces, it is ``auto``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from searchlab.core.spaces import KnobSpace, Space
from searchlab.errors import ConfigError
from searchlab.searchers._auto.searcher import AutoSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.warm import TransferWarmSearcher

FLOOR = 0.01  # speeds below 1 % of the best (and failures) are one value: "bad there"


def prior_features(prior: Any, pool: list[Any]) -> np.ndarray:
    """One column per prior table: log(max(speed, FLOOR)) scaled to [0, 1] (1: that table's best)."""
    cols = []
    for table in prior.tables:
        s = np.array([max(table.speed.get(c, 0.0), FLOOR) for c in pool])
        cols.append(1.0 - np.log(s) / math.log(FLOOR))
    return np.column_stack(cols) if cols else np.zeros((len(pool), 0))


def augment(searcher: AutoSearcher, prior: Any) -> bool:
    """Append the prior columns to ``auto``'s model inputs; False when ``auto`` runs no knob model."""
    model = getattr(searcher, "_model", None)
    if model is None:
        return False
    model.x = np.hstack([model.x, prior_features(prior, model.pool)])
    return True


class TransferGpSearcher(TransferWarmSearcher):
    """``transfer_warm`` whose base is ``auto`` with the prior columns in its model."""

    name = "transfer_gp"

    # k: configurations of the ranking evaluated first (the GP's initial design)
    def __init__(self, space: Space, *, k: int = 5, **kwargs: Any) -> None:
        super().__init__(space, k=k, **kwargs)
        if not issubclass(self._base_cls, AutoSearcher):
            raise ConfigError(f"searcher.base={self._base_cls.name!r}: transfer_gp extends auto's model (base=auto)")

    def _on_prior(self, prior: Any) -> None:
        if not isinstance(self.space, KnobSpace):
            return
        self._rebuild(self.problem_space, initial=self.k)
        if isinstance(self._inner, AutoSearcher) and augment(self._inner, prior):
            super()._on_prior(prior)


TransferGpConfig = searcher_config(TransferGpSearcher)
