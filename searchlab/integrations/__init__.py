"""searchlab's searchers where users already tune (issue 36, docs/integrations.md).

- :mod:`searchlab.integrations.kernel_tuner`: ``Strategy``, a user-defined strategy for Kernel Tuner's ``tune_kernel``;
- :mod:`searchlab.integrations.optuna`: ``Sampler``, an Optuna ``BaseSampler``;
- :mod:`searchlab.integrations.tune`: ``Searcher``, a Ray Tune ``Searcher``.

Each module imports its tool lazily (inside functions and class factories), so importing searchlab never
imports Kernel Tuner, Optuna or Ray. The layer sits beside the command line: it builds registered
searchers and drives them through :class:`searchlab.integrations._driver.Driver`.
"""
