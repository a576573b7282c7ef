"""Tables for the index-mapping and convolution rules (issue 26): Good-Thomas maps, and
Rader's and Bluestein's precomputed kernels. Computed once per size with numpy and cached
by :class:`._clib.Twiddles` beside the twiddle tables; the C executor only reads them.

- Good-Thomas (n = a·b, gcd 1): input i1·b + i2 reads x[(b·i1 + a·i2) mod n]; output
  k1·b + k2 goes to X[k] with k ≡ k1 (mod a), k ≡ k2 (mod b) (CRT), so that
  ω_n^{ik} = ω_a^{i1·k1}·ω_b^{i2·k2} and no twiddles remain.
- Rader (p prime, g a primitive root): X_{g^-q} - x_0 = Σ_r x_{g^r}·ω_p^{g^{r-q}}, a cyclic
  convolution of length p-1 with b_m = ω_p^{g^-m}; the table is DFT(b)/(p-1).
- Bluestein: jk = (j² + k² - (k-j)²)/2 gives X_k = c_k·Σ_j (x_j·c_j)·conj(c_{k-j}),
  c_j = exp(-iπj²/n): a convolution of length M >= 2n-1; the table is DFT_M(b)/M with
  b = conj(c) wrapped around. j² is reduced mod 2n first, so the phase stays exact.
"""

from __future__ import annotations

import math

import numpy as np

from searchlab.adapters.grammar._fft import Bluestein, Pfa, Rader


def valid(spec: Pfa | Rader | Bluestein) -> bool:
    """Whether the C executor can run the node safely (Bluestein with M < 2n-1 runs, wrongly,
    and the comparison with numpy.fft catches it; M < n would write out of bounds)."""
    if isinstance(spec, Pfa):
        return math.gcd(spec.a.size, spec.b.size) == 1
    if isinstance(spec, Rader):
        p = spec.size
        return spec.child.size == p - 1 and p > 2 and all(p % q for q in range(2, 1 + math.isqrt(p)))
    return spec.child.size >= spec.size


def pfa_maps(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    n = a * b
    i1, i2 = np.meshgrid(np.arange(a), np.arange(b), indexing="ij")
    map_in = ((b * i1 + a * i2) % n).ravel()
    crt = (b * pow(b, -1, a) * i1 + a * pow(a, -1, b) * i2) % n
    return np.ascontiguousarray(map_in, dtype=np.int64), np.ascontiguousarray(crt.ravel(), dtype=np.int64)


def primitive_root(p: int) -> int:
    factors = {q for q in range(2, p) if (p - 1) % q == 0 and all(q % r for r in range(2, int(q**0.5) + 1))}
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // q, p) != 1 for q in factors))


def rader_tables(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """g^r and g^-q (r, q < p-1), and DFT(b)/(p-1), b_m = ω_p^{g^-m}."""
    g = primitive_root(p)
    powers = np.array([pow(g, r, p) for r in range(p - 1)], dtype=np.int64)
    inverse = np.array([pow(g, -q, p) for q in range(p - 1)], dtype=np.int64)
    kernel = np.exp(-2j * np.pi * inverse / p)
    return powers, inverse, np.ascontiguousarray(np.fft.fft(kernel) / (p - 1))


def bluestein_tables(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The chirp c_j (j < n) and DFT_M(b)/M."""
    j = np.arange(n, dtype=np.int64)
    chirp = np.exp(-1j * np.pi * ((j * j) % (2 * n)) / n)
    b = np.zeros(m, dtype=complex)
    b[:n] = np.conj(chirp)
    b[m - n + 1:] = np.conj(chirp[1:])[::-1]
    return np.ascontiguousarray(chirp), np.ascontiguousarray(np.fft.fft(b) / m)
