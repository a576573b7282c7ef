"""``searcher=transfer_topk``: zero-shot transfer, the top-k of a cross-device ranking.

Why: the simplest transfer baseline, and a strong one. Evaluate the configurations in the
order of their mean normalised speed over the prior devices (searchlab.run.priors). It is
syne-tune's ``ZeroShotTransfer`` scheduler (Wistuba, Schilling & Schmidt-Thieme, *Sequential
model-free hyperparameter tuning*, ICDM 2015, the greedy portfolio of configurations that are
good across tasks) in its simplest form: syne-tune ranks by the average rank across tasks and
fills the portfolio greedily; we rank by mean normalised speed (a failure on a prior device
counts 0), which also weighs *how much* slower a configuration is. It is the transfer-tuning
baseline of Gibson and Cano (2022, §4: reuse the schedules of the most similar kernels).

After the ``k`` best (``k=0``: every configuration the prior ranks) the base searcher
(``searcher.base``, default ``random``) continues, knowing those results. Without a prior it
is the base searcher.
"""

from __future__ import annotations

from typing import Any

from searchlab.core.spaces import Space
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._transfer.common import TransferBase, checked_k


class TransferTopKSearcher(TransferBase):
    name = "transfer_topk"
    default_base = "random"

    # k: how many of the ranking to evaluate before the base searcher (0: the whole ranking)
    def __init__(self, space: Space, *, k: int = 0, **kwargs: Any) -> None:
        self.k = checked_k(k, 0, " (0: the whole ranking)")
        super().__init__(space, **kwargs)

    def _on_prior(self, prior: Any) -> None:
        ranking = prior.ranking()
        self.front = ranking[: self.k] if self.k else ranking


TransferTopKConfig = searcher_config(TransferTopKSearcher)
