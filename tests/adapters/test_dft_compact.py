"""Compact twiddles and the chunked loop interchange of the C DFT library (issue 26, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from searchlab.adapters.grammar import _clib
from searchlab.adapters.grammar._fft import Leaf, Pfa, Spec, Split, Twiddle, describe


def _error(spec: Spec, v: int = 1, stride: int = 1) -> float:
    """C plan against numpy.fft: v transforms, neighbours in memory when stride > 1 (ivs = 1)."""
    lib = _clib.load(32)
    lib.fl_set_clock(0)
    plan = _clib.Plan(lib, spec, _clib.Twiddles())
    n = spec.size
    x = np.random.default_rng(n).standard_normal(n * v) * (1 + 0.5j)
    y = np.zeros_like(x)
    if stride > 1:  # v transforms reading at stride v (the inner stage of a top split)
        plan.run_dft(x, y, (v, 1), (v, 1, n), 1)
        want = np.fft.fft(x.reshape(n, v).T, axis=1).ravel()
    else:
        plan.run_dft(x, y, (1, 1), (v, n, n), 1)
        want = np.fft.fft(x.reshape(v, n), axis=1).ravel()
    plan.close()
    return float(np.linalg.norm(y - want) / np.linalg.norm(want))


SPECS = [
    Split(Twiddle("t1v", 8), Split(Twiddle("t1v", 8), Split(Twiddle("t1v", 32), Leaf("n1v", 32)))),  # 2^16
    Split(Twiddle("t1", 4), Split(Twiddle("t1v", 5), Leaf("n1v", 15))),  # m = 75: B = 25, odd
    Split(Twiddle("buf", 24, Pfa(Leaf("n1v", 3), Leaf("n1", 8))), Split(Twiddle("t1v", 5), Leaf("n1", 25))),
    Split(Twiddle("t1", 4), Split(Twiddle("t1v", 5), Leaf("n1v", 15)), parallel=True),  # blocks split by threads
    Split(Twiddle("buf", 8, Split(Twiddle("t1v", 2), Leaf("n1v", 4))),  # buffered groups, replicated twiddles
          Split(Twiddle("buf", 12, Split(Twiddle("t1", 4), Leaf("n1", 3))), Split(Twiddle("t1v", 16), Leaf("n1", 32)))),
    Split(Twiddle("t1v", 16), Split(Twiddle("t1", 16), Split(Twiddle("t1v", 4), Leaf("n1", 16))), parallel=True),
]


@pytest.mark.parametrize("spec", SPECS, ids=describe)
@pytest.mark.parametrize("v, stride", [(1, 1), (3, 1), (11, 11)])
def test_every_split_compacted_still_matches_numpy(spec: Spec, v: int, stride: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_clib, "COMPACT_BYTES", [0])  # every split with a block compacts
    assert _clib.compact_block(spec.tw.size, spec.dft.size) > 0  # type: ignore[union-attr]
    assert _error(spec, v, stride) < 1e-13


@pytest.mark.parametrize("v, stride", [(1, 1), (11, 11)])
def test_chunked_interchange_matches_numpy_with_full_tables(v: int, stride: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_clib, "COMPACT_BYTES", [1 << 40])  # no split compacts
    for spec in SPECS:
        assert _clib.compact_block(spec.tw.size, spec.dft.size) == 0  # type: ignore[union-attr]
        assert _error(spec, v, stride) < 1e-13, describe(spec)


def test_only_tables_beyond_the_caches_are_compacted() -> None:
    assert _clib.compact_block(8, 8192) == 64  # 7 x 8192 complex: 917 kB
    assert _clib.compact_block(32, 32768) == 32  # the block's (k-1) x B twiddles stay within 16 kB
    assert _clib.compact_block(32, 32) == 0  # 16 kB: kept whole
    assert _clib.compact_block(2, 1 << 20) == 64
    assert _clib.compact_block(4, 65537) == 0  # a prime m has no block


def test_compact_table_holds_the_roots_it_stands_for() -> None:
    n, k, block = 4096, 8, 16
    table = _clib.Twiddles().compact(n, k, block)
    lo, hi = table[: (k - 1) * block].reshape(k - 1, block), table[(k - 1) * block:].reshape(k - 1, -1)
    full = _clib.Twiddles()(n, k)
    j = np.arange(n // k)
    rebuilt = hi[:, j // block] * lo[:, j % block]
    assert np.abs(rebuilt - full).max() < 1e-15
