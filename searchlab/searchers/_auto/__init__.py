"""The auto searcher (GP model on knob spaces) and its knob model."""
