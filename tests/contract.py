"""The shared searcher contract now ships as :mod:`searchlab.testing` (a plugin's tests reuse
it); this module re-exports it so existing ``from tests.contract import ...`` keeps working."""

from searchlab.testing.contract import PROBLEMS, TINY, SearcherContract, TinyKnobs, TinyThresholds, _safe_evaluate

__all__ = ["PROBLEMS", "TINY", "SearcherContract", "TinyKnobs", "TinyThresholds", "_safe_evaluate"]
