"""Threshold tuners for Futhark-style comparison trees: the common model and its searchers."""
