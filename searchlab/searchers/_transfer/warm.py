"""``searcher=transfer_warm``: warm start, the prior's top-k first, then any base searcher.

Why: the classic way to transfer into model-based search (Feurer, Springenberg & Hutter,
*Initializing Bayesian hyperparameter optimization via meta-learning*, AAAI 2015, §3: the
initial design is the best configurations of the most similar previous tasks). Here the
initial design is the top ``k`` of the cross-device ranking (mean normalised speed,
searchlab.run.priors), and the base searcher (``searcher.base``, default ``auto``) starts with
those results in its history -- for ``auto`` they replace the space-filling start whenever
``k >= searcher.base_options.initial``. Deviation: Feurer et al. pick the tasks by
meta-feature distance; we have no meta-features of a GPU, so every prior device counts alike.
"""

from __future__ import annotations

from typing import Any

from searchlab.core.spaces import Space
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.common import TransferBase, checked_k


class TransferWarmSearcher(TransferBase):
    name = "transfer_warm"
    default_base = "auto"

    # k: configurations of the ranking evaluated before the base searcher takes over
    def __init__(self, space: Space, *, k: int = 5, **kwargs: Any) -> None:
        self.k = checked_k(k, 1)
        super().__init__(space, **kwargs)

    def _on_prior(self, prior: Any) -> None:
        self.front = prior.ranking()[: self.k]


TransferWarmConfig = searcher_config(TransferWarmSearcher)
