"""Test helpers that ship with searchlab, so a plugin's own tests can reuse them.

:class:`SearcherContract` is the contract every searcher passes (built-ins and plugins
alike): subclass it in a pytest module and set ``searcher_cls``. Needs pytest (the
``testing`` extra: ``pip install 'searchlab[testing]'``).
"""

from searchlab.testing.contract import PROBLEMS, TINY, SearcherContract, TinyKnobs, TinyThresholds

__all__ = ["PROBLEMS", "TINY", "SearcherContract", "TinyKnobs", "TinyThresholds"]
