"""Transfer searchers: learn from prior tables of other devices or sizes (docs/transfer.md)."""
