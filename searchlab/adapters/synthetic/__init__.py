"""Synthetic problems (numpy only, no device) with known optima, for tests and demos."""

from searchlab.adapters.synthetic.dag import SlotGrammarGraph, SyntheticDag, SyntheticDagConfig
from searchlab.adapters.synthetic.knobs import SyntheticKnobs, SyntheticKnobsConfig
from searchlab.adapters.synthetic.thresholds import SyntheticThresholds, SyntheticThresholdsConfig

SCHEMAS: dict[str, type] = {
    "synthetic_knobs": SyntheticKnobsConfig,
    "synthetic_dag": SyntheticDagConfig,
    "synthetic_thresholds": SyntheticThresholdsConfig,
}

__all__ = ["SCHEMAS", "SlotGrammarGraph", "SyntheticDag", "SyntheticKnobs", "SyntheticThresholds"]
