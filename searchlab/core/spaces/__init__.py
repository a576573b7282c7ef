"""Search spaces: knob spaces, derivation DAGs, threshold trees, and views between them."""

from searchlab.core.spaces._base import Sampler, Space
from searchlab.core.spaces._dag import Arc, DerivationGraph, ExplicitDAG, Node
from searchlab.core.spaces._knobs import MAX_VALUES, CategoricalKnob, IntKnob, Knob, KnobSpace, OrdinalKnob, knob_from_spec
from searchlab.core.spaces._thresholds import (
    FUTHARK_DEFAULT_THRESHOLD,
    Threshold,
    ThresholdDataset,
    ThresholdTree,
    tree_from_spec,
)
from searchlab.core.spaces._views import DecisionDAG, View, plateau_knobs, view_as

__all__ = [
    "FUTHARK_DEFAULT_THRESHOLD",
    "MAX_VALUES",
    "Arc",
    "CategoricalKnob",
    "DecisionDAG",
    "DerivationGraph",
    "ExplicitDAG",
    "IntKnob",
    "Knob",
    "KnobSpace",
    "Node",
    "OrdinalKnob",
    "Sampler",
    "Space",
    "Threshold",
    "ThresholdDataset",
    "ThresholdTree",
    "View",
    "knob_from_spec",
    "plateau_knobs",
    "tree_from_spec",
    "view_as",
]
