"""The core layer: what every other layer may import, and which imports none of them."""
