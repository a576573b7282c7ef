"""The grammar of the C DFT library (paper 002 §4.3 on the library of §4.1, Fig. 6(b)/(c)),
for any size n (issue 26).

Two mutually recursive nonterminals per size, as the library has two mutually recursive
functions (``dft`` and ``tws`` in executor.c):

    DFT_s -> n1_s | n1v_s                 a codelet, scalar or vectorised (s has one)
    DFT_s -> TW_k DFT_{s/k}               equation (1), mixed radix: any divisor 1 < k < s
    DFT_s -> pfa DFT_a DFT_b              Good-Thomas, s = a·b, gcd(a, b) = 1, no twiddles
    DFT_p -> rader DFT_{p-1}              Rader, p a prime without a codelet
    DFT_p -> blue DFT_M                   Bluestein, M >= 2p-1 (a power of two, and the
                                          smallest M whose prime factors are all <= 7)
    DFT_n -> omp TW_k DFT_{n/k}           the top split over 2 OpenMP threads (start only)
    TW_k  -> t1_k | t1v_k                 a twiddle codelet, scalar or vectorised
    TW_k  -> buf DFT_k                    buffered: gather + scale into a buffer, then DFT_k

so DFT_k appears in several contexts (the readdressed inner stage, behind a buffer, inside
Rader's or Bluestein's convolution), the choice of codelet is a rule, and the
restructurings of §4.1 (vector, buffer, threads) are rules too. The sizes are the closure
of n under these rules; Bluestein's M is larger than p but smooth, so the grammar stays
acyclic. Deviation from FFTW: Bluestein is offered for primes only (FFTW uses it for
large prime factors, as here, and nowhere else).
"""

from __future__ import annotations

import math

from searchlab.adapters.grammar._codegen import CODELET_PRIMES, codelet_sizes, smooth
from searchlab.adapters.grammar._fft import Bluestein, Leaf, Pfa, Rader, Spec, Split, Twiddle, TwSpec
from searchlab.adapters.grammar._grammar import Grammar, Production
from searchlab.adapters.grammar._tree import Tree, symbol_of
from searchlab.core.records import FailureMode
from searchlab.errors import EvaluationError


def divisors(s: int) -> list[int]:
    """The divisors 1 < k < s, ascending."""
    small = [k for k in range(2, math.isqrt(s) + 1) if s % k == 0]
    return sorted(set(small + [s // k for k in small]))


def bluestein_lengths(n: int, primes: tuple[int, ...]) -> list[int]:
    """Convolution lengths M >= 2n-1: the next power of two, and the next M whose prime
    factors are all at most 7 (among ``primes``, those with codelets).

    Why 7-smooth and not any size with codelets (13-smooth, the rule before): the DFT_M
    behind Bluestein is most of its time, and codelets of 11 and 13 points cost more flops
    per point. Chosen on the training primes 1031, 3001, 8009, 12011 and 25013 (DP's best
    plan of each candidate M, ``docs/grammar.md``): the next 7-smooth M was the fastest at
    all five (the next 13-smooth M took 1.19-1.33x as long, the next 5-smooth one
    1.01-1.28x, the power of two 1.12-2.08x). 10007, a reported size, was not among them."""
    least = 2 * n - 1
    power = 1 << (least - 1).bit_length()
    small = tuple(p for p in primes if p <= 7)
    m = least
    while not smooth(m, small):
        m += 1
    return sorted({power, m})


def _rules_for(s: int, codelets: set[int], primes: tuple[int, ...], kinds: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Right-hand sides of DFT_s (the omp rule aside)."""
    rhs: list[tuple[str, ...]] = []
    if s in codelets:
        rhs += [(f"{kind}_{s}",) for kind in kinds]
    ks = divisors(s)
    rhs += [(f"TW_{k}", f"DFT_{s // k}") for k in ks]
    rhs += [("pfa", f"DFT_{a}", f"DFT_{s // a}") for a in ks if math.gcd(a, s // a) == 1]
    if not ks and s not in codelets:  # a prime without a codelet
        rhs.append(("rader", f"DFT_{s - 1}"))
        rhs += [("blue", f"DFT_{m}") for m in bluestein_lengths(s, primes)]
    return rhs


def dft_grammar(n: int, max_codelet: int, threads: int = 1, scalar: bool = True) -> Grammar:
    """The grammar of DFT_n; ``scalar=False`` leaves out the scalar codelets (n1, t1), so
    every codelet rule is a vector one (n1v, t1v: a loop of one transform runs their scalar
    tail, so no plan becomes impossible)."""
    kinds = ("n1", "n1v") if scalar else ("n1v",)
    codelets = set(codelet_sizes(max_codelet))
    primes = tuple(p for p in CODELET_PRIMES if p in codelets)
    rules: dict[int, list[tuple[str, ...]]] = {}
    todo = [n]
    while todo:
        s = todo.pop()
        if s in rules:
            continue
        rules[s] = _rules_for(s, codelets, primes, kinds)
        todo += [int(sym[4:]) for rhs in rules[s] for sym in rhs if sym.startswith("DFT_")]
        todo += [int(sym[3:]) for rhs in rules[s] for sym in rhs if sym.startswith("TW_")]
    stages = sorted({k for s in rules for k in divisors(s)})
    productions = [Production((f"DFT_{s}",), rhs) for s in sorted(rules) for rhs in rules[s]]
    for k in stages:
        if k in codelets:
            productions += [Production((f"TW_{k}",), (f"t{kind[1:]}_{k}",)) for kind in kinds]
        productions.append(Production((f"TW_{k}",), ("buf", f"DFT_{k}")))
    if stages and threads > 1:
        productions += [Production((f"DFT_{n}",), ("omp", f"TW_{k}", f"DFT_{n // k}")) for k in divisors(n)]
    nonterminals = [f"DFT_{s}" for s in sorted(rules)] + [f"TW_{k}" for k in stages]
    rhs_symbols = {sym for p in productions for sym in p.rhs}
    terminals = sorted(sym for sym in rhs_symbols if not sym.startswith(("DFT_", "TW_")))
    return Grammar(tuple(terminals), tuple(nonterminals), tuple(productions), f"DFT_{n}")


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
    if first == "pfa":
        return Pfa(_dft(kids[1]), _dft(kids[2]))
    if first == "rader":
        return Rader(_size(symbol), _dft(kids[1]))
    if first == "blue":
        return Bluestein(_size(symbol), _dft(kids[1]))
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
