"""Kernel-Tuner-style sequential strategies on a knob grid, and their common driver."""
