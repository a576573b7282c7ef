"""The plugin's own tests reuse searchlab's searcher contract (searchlab.testing)."""

from searchlab.testing import SearcherContract
from searchlab_example_plugin import CoordinateDescentSearcher


class TestCoordinateDescent(SearcherContract):
    searcher_cls = CoordinateDescentSearcher
    options = {"restarts": 3}
