"""Support code shared by several searcher families: neighbourhoods on a knob grid, the Gaussian process."""
