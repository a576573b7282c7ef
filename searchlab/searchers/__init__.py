"""Searchers: one algorithm per private module, re-exported here.

Layout (as Optuna nests its sampler families): standalone searchers are modules
(``_random``, ``_exhaustive``, ``_dp``, ``_portfolio``); a family with its own model or driver
is a subpackage (``_auto/``, ``_bandit/``, ``_optuna/``, ``_probabilistic/``, ``_sequential/``,
``_threshold/``, ``_transfer/``, ``_kernel_tuner/``: Kernel Tuner's strategies); code shared across
families is in ``_support/``; ``_base``,
``_schema`` and ``_tunable`` are the contract every searcher builds on. Stored configs name
the public path ``searchlab.searchers.NAME`` (see ``_schema.public_target``), never a module.
Searchers import the core layer and :mod:`searchlab.registry`, nothing above.

``SCHEMAS`` maps each built-in searcher's public name (``searcher=NAME``) to its structured
config dataclass, derived from the constructor (:func:`searcher_config`: options are declared
once). pyproject.toml registers the whole dict as one ``searchlab.searchers`` entry point, so a
searcher added here is found by :mod:`searchlab.registry` with no other change; an optional
``searchlab/conf/searcher/NAME.yaml`` only adds a description line (docs/registry.md).
"""

from searchlab.searchers._auto.searcher import AutoConfig, AutoSearcher
from searchlab.searchers._bandit.mc import McConfig, McSearcher
from searchlab.searchers._bandit.tag import TagConfig, TagSearcher
from searchlab.searchers._bandit.tag_scaled import ArmTerms, TagScaledConfig, TagScaledSearcher, ascent_terms
from searchlab.searchers._bandit.uct import UctConfig, UctSearcher
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._build import SearcherSpec, build_searcher, searcher_class, searcher_name
from searchlab.searchers._dp import DpConfig, DpSearcher, SubproblemGraph
from searchlab.searchers._dp_tag import DpTagConfig, DpTagSearcher
from searchlab.searchers._exhaustive import ExhaustiveConfig, ExhaustiveSearcher
from searchlab.searchers._kernel_tuner import SCHEMAS as KERNEL_TUNER_SCHEMAS
from searchlab.searchers._kernel_tuner import (
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
from searchlab.searchers._optuna.base import OptunaSearcher
from searchlab.searchers._optuna.samplers import (
    OptunaCmaesConfig,
    OptunaCmaesSearcher,
    OptunaGpConfig,
    OptunaGpSearcher,
    OptunaQmcConfig,
    OptunaQmcSearcher,
    OptunaRandomConfig,
    OptunaRandomSearcher,
    OptunaTpeConfig,
    OptunaTpeSearcher,
)
from searchlab.searchers._portfolio import PortfolioConfig, PortfolioSearcher
from searchlab.searchers._probabilistic.searcher import (
    ProbabilisticConfig,
    ProbabilisticSearcher,
    ProbabilisticTrivialConfig,
    ProbabilisticTrivialSearcher,
)
from searchlab.searchers._random import RandomConfig, RandomSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._sequential.dual_annealing import DualAnnealingConfig, DualAnnealingSearcher
from searchlab.searchers._sequential.genetic import GeneticConfig, GeneticSearcher
from searchlab.searchers._sequential.greedy_ils import GreedyIlsConfig, GreedyIlsSearcher
from searchlab.searchers._sequential.simulated_annealing import SimulatedAnnealingConfig, SimulatedAnnealingSearcher
from searchlab.searchers._threshold.active import ActiveConfig, ActiveSearcher
from searchlab.searchers._threshold.binary import BinaryConfig, BinarySearcher
from searchlab.searchers._threshold.cma_index import CmaIndexConfig, CmaIndexSearcher
from searchlab.searchers._threshold.futhark_autotune import FutharkAutotuneConfig, FutharkAutotuneSearcher
from searchlab.searchers._threshold.instrumented import InstrumentedConfig, InstrumentedSearcher
from searchlab.searchers._threshold.simple import SimpleConfig, SimpleSearcher
from searchlab.searchers._transfer.gp import TransferGpConfig, TransferGpSearcher
from searchlab.searchers._transfer.prune import TransferPruneConfig, TransferPruneSearcher
from searchlab.searchers._transfer.topk import TransferTopKConfig, TransferTopKSearcher
from searchlab.searchers._transfer.transfer import TransferConfig, TransferSearcher
from searchlab.searchers._transfer.warm import TransferWarmConfig, TransferWarmSearcher
from searchlab.searchers._tunable import Tunable, tunable_ranges

SCHEMAS: dict[str, type] = {
    "auto": AutoConfig,
    "random": RandomConfig,
    "exhaustive": ExhaustiveConfig,
    "dual_annealing": DualAnnealingConfig,
    "greedy_ils": GreedyIlsConfig,
    "simulated_annealing": SimulatedAnnealingConfig,
    "genetic": GeneticConfig,
    "optuna_tpe": OptunaTpeConfig,
    "optuna_cmaes": OptunaCmaesConfig,
    "optuna_gp": OptunaGpConfig,
    "optuna_qmc": OptunaQmcConfig,
    "optuna_random": OptunaRandomConfig,
    "portfolio": PortfolioConfig,
    "tag": TagConfig,
    "tag_scaled": TagScaledConfig,
    "mc": McConfig,
    "uct": UctConfig,
    "dp": DpConfig,
    "dp_tag": DpTagConfig,
    "simple": SimpleConfig,
    "binary": BinaryConfig,
    "active": ActiveConfig,
    "cma_index": CmaIndexConfig,
    "instrumented": InstrumentedConfig,
    "futhark_autotune": FutharkAutotuneConfig,
    "probabilistic": ProbabilisticConfig,
    "probabilistic_trivial": ProbabilisticTrivialConfig,
    "transfer": TransferConfig,
    "transfer_topk": TransferTopKConfig,
    "transfer_warm": TransferWarmConfig,
    "transfer_prune": TransferPruneConfig,
    "transfer_gp": TransferGpConfig,
    **KERNEL_TUNER_SCHEMAS,  # kt_<strategy>: Kernel Tuner's strategies in searchlab's loop (the bench extra)
}

__all__ = [
    "SCHEMAS",
    "ActiveSearcher",
    "ArmTerms",
    "AutoSearcher",
    "BinarySearcher",
    "CmaIndexSearcher",
    "DpSearcher",
    "DpTagSearcher",
    "DualAnnealingSearcher",
    "ExhaustiveSearcher",
    "FutharkAutotuneSearcher",
    "GeneticSearcher",
    "GreedyIlsSearcher",
    "InstrumentedSearcher",
    "KtBasinhoppingSearcher",
    "KtDiffEvoSearcher",
    "KtDualAnnealingSearcher",
    "KtFireflyAlgorithmSearcher",
    "KtGeneticAlgorithmSearcher",
    "KtGreedyIlsSearcher",
    "KtGreedyMlsSearcher",
    "KtPsoSearcher",
    "KtRandomSampleSearcher",
    "KtSimulatedAnnealingSearcher",
    "McSearcher",
    "OptunaCmaesSearcher",
    "OptunaGpSearcher",
    "OptunaQmcSearcher",
    "OptunaRandomSearcher",
    "OptunaSearcher",
    "OptunaTpeSearcher",
    "PortfolioSearcher",
    "ProbabilisticSearcher",
    "ProbabilisticTrivialSearcher",
    "Proposal",
    "ProposalLike",
    "RandomSearcher",
    "Searcher",
    "SearcherSpec",
    "SimpleSearcher",
    "SimulatedAnnealingSearcher",
    "SubproblemGraph",
    "TagScaledSearcher",
    "TagSearcher",
    "TransferGpSearcher",
    "TransferPruneSearcher",
    "TransferSearcher",
    "TransferTopKSearcher",
    "TransferWarmSearcher",
    "Tunable",
    "UctSearcher",
    "ascent_terms",
    "build_searcher",
    "searcher_class",
    "searcher_config",
    "searcher_name",
    "tunable_ranges",
]
