"""Grammar problems (paper 002): any acyclic grammar as a derivation DAG, and the DFT
Cooley-Tukey breakdown grammar on executable numpy FFT plans."""

from searchlab.adapters.grammar._grammar import Grammar, Production, load_grammar, word_counts
from searchlab.adapters.grammar._strings import StringGraph
from searchlab.adapters.grammar._tree import TreeGraph
from searchlab.adapters.grammar.dft import DftConfig, DftProblem, dft_grammar
from searchlab.adapters.grammar.problem import GrammarProblem, GrammarProblemConfig, Word

SCHEMAS: dict[str, type] = {
    "dft": DftConfig,
    "grammar": GrammarProblemConfig,
}

__all__ = [
    "SCHEMAS",
    "DftConfig",
    "DftProblem",
    "Grammar",
    "GrammarProblem",
    "GrammarProblemConfig",
    "Production",
    "StringGraph",
    "TreeGraph",
    "Word",
    "dft_grammar",
    "load_grammar",
    "word_counts",
]
