"""The probabilistic searcher (paper 001): its model, calibration and regression."""
