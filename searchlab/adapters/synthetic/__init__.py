"""Synthetic problems (numpy only, no device) with known optima, for tests and demos."""

from searchlab.adapters.synthetic.dag import SlotGrammarGraph, SyntheticDag
from searchlab.adapters.synthetic.knobs import SyntheticKnobs
from searchlab.adapters.synthetic.thresholds import SyntheticThresholds

SCHEMAS: dict[str, type] = {
    "synthetic_knobs": SyntheticKnobs,
    "synthetic_dag": SyntheticDag,
    "synthetic_thresholds": SyntheticThresholds,
}

__all__ = ["SCHEMAS", "SlotGrammarGraph", "SyntheticDag", "SyntheticKnobs", "SyntheticThresholds"]
