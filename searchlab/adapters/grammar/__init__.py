"""Grammar problems (paper 002): any acyclic grammar as a derivation DAG, and the grammar
of our adaptive C DFT library (generated codelets, recursive executor, timed in C)."""

from searchlab.adapters.grammar._grammar import Grammar, Production, load_grammar, word_counts
from searchlab.adapters.grammar._strings import StringGraph
from searchlab.adapters.grammar._tree import TreeGraph
from searchlab.adapters.grammar.dft import SEARCH_BATCH_S, SEARCH_PROTOCOL, DftProblem, dft_grammar, ruletree
from searchlab.adapters.grammar.problem import GrammarProblem, Word

SCHEMAS: dict[str, type] = {
    "dft": DftProblem,
    "grammar": GrammarProblem,
}

__all__ = [
    "SCHEMAS",
    "SEARCH_BATCH_S",
    "SEARCH_PROTOCOL",
    "DftProblem",
    "Grammar",
    "GrammarProblem",
    "Production",
    "StringGraph",
    "TreeGraph",
    "Word",
    "dft_grammar",
    "load_grammar",
    "ruletree",
    "word_counts",
]
