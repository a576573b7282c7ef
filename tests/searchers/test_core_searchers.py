"""Contract tests for the core searchers."""

from searchlab.searchers import ExhaustiveSearcher, RandomSearcher
from tests.contract import SearcherContract


class TestRandomContract(SearcherContract):
    searcher_cls = RandomSearcher


class TestExhaustiveContract(SearcherContract):
    searcher_cls = ExhaustiveSearcher
