"""The plugin's own tests reuse searchlab's searcher contract (searchlab.testing)."""

from searchlab_example_plugin import CoordinateDescentSearcher

from searchlab.testing import SearcherContract


class TestCoordinateDescent(SearcherContract):
    searcher_cls = CoordinateDescentSearcher
    options = {"restarts": 3}
