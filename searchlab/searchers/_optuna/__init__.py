"""The Optuna samplers as searchers, and the encoding of spaces as Optuna parameters."""
