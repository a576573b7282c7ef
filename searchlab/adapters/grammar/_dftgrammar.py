"""The grammar of the C DFT library (paper 002 §4.3 on the library of §4.1, Fig. 6(b)/(c)).

Two mutually recursive nonterminals per size, as the library has two mutually recursive
functions (``dft`` and ``tws`` in executor.c):

    DFT_s -> n1_s | n1v_s                 a codelet, scalar or vectorised (s <= max_codelet)
    DFT_s -> TW_k DFT_{s/k}               equation (1), 1 < k < s
    DFT_n -> omp TW_k DFT_{n/k}           the top split over 2 OpenMP threads (start only)
    TW_k  -> t1_k | t1v_k                 a twiddle codelet, scalar or vectorised (k <= max_codelet)
    TW_k  -> buf DFT_k                    buffered: gather + scale into a buffer, then DFT_k

so DFT_k appears in two contexts (as the readdressed inner stage, and behind a buffer
writing at a stride), the choice of codelet is a rule, and the restructurings of §4.1
(vector, buffer, threads) are rules too.
"""

from __future__ import annotations

import math

from searchlab.adapters.grammar._fft import Leaf, Spec, Split, Twiddle, TwSpec
from searchlab.adapters.grammar._grammar import Grammar, Production
from searchlab.adapters.grammar._tree import Tree, symbol_of
from searchlab.core.records import FailureMode
from searchlab.errors import EvaluationError


def dft_grammar(n: int, max_codelet: int, threads: int = 1) -> Grammar:
    sizes = [2**j for j in range(1, int(math.log2(n)) + 1)]
    leaves = [s for s in sizes if s <= max_codelet]
    stages = [k for k in sizes if k <= n // 2]
    terminals = [f"{kind}_{s}" for s in leaves for kind in ("n1", "n1v")]
    terminals += [f"{kind}_{k}" for k in stages if k <= max_codelet for kind in ("t1", "t1v")]
    rules = [Production((f"DFT_{s}",), (f"{kind}_{s}",)) for s in leaves for kind in ("n1", "n1v")]
    rules += [Production((f"DFT_{s}",), (f"TW_{k}", f"DFT_{s // k}")) for s in sizes for k in sizes if 1 < k < s]
    rules += [Production((f"TW_{k}",), (f"{kind}_{k}",)) for k in stages if k <= max_codelet for kind in ("t1", "t1v")]
    rules += [Production((f"TW_{k}",), ("buf", f"DFT_{k}")) for k in stages]
    if stages:
        terminals.append("buf")
    if stages and threads > 1:
        terminals.append("omp")
        rules += [Production((f"DFT_{n}",), ("omp", f"TW_{k}", f"DFT_{n // k}")) for k in stages]
    nonterminals = [f"DFT_{s}" for s in sizes] + [f"TW_{k}" for k in stages]
    return Grammar(tuple(terminals), tuple(nonterminals), tuple(rules), f"DFT_{n}")


def _size(symbol: str) -> int:
    return int(symbol.rsplit("_", 1)[1])


def ruletree(tree: Tree) -> Spec | TwSpec:
    """The plan spec of a complete derivation tree rooted at DFT_s or TW_k."""
    if isinstance(tree, str):
        raise EvaluationError(FailureMode.INVALID, f"{tree!r} is not expanded")
    symbol, kids = tree
    first = symbol_of(kids[0])
    if symbol.startswith("TW_"):
        if first == "buf":
            return Twiddle("buf", _size(symbol), _dft(kids[1]))
        return Twiddle(first.rsplit("_", 1)[0], _size(symbol))
    if len(kids) == 1:
        return Leaf(first.rsplit("_", 1)[0], _size(symbol))
    parallel = first == "omp"
    tw, dft = kids[1:] if parallel else kids
    stage = ruletree(tw)
    assert isinstance(stage, Twiddle)
    return Split(stage, _dft(dft), parallel)


def _dft(tree: Tree) -> Spec:
    spec = ruletree(tree)
    if isinstance(spec, Twiddle):
        raise EvaluationError(FailureMode.INVALID, f"{tree!r}: a DFT was expected")
    return spec
