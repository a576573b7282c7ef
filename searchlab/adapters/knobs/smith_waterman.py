"""``smith_waterman``: local sequence alignment scores, swath-parallel (paper 001 §8.1).

Each work-group aligns the query against one database sequence (linear gap penalty). The DP
matrix is processed in vertical swaths of ``swath`` columns, one work-item per column, along
anti-diagonals (a wavefront: work-item ``j`` handles row ``t - j`` at step ``t``); the last
column of a swath is kept in local memory as the boundary of the next. The substitution
table lookup ("compare individual letters") reads a copy of the table in local memory;
``share`` columns share one copy, so ``ceil(swath / share)`` copies are kept: wider swaths
are faster (fewer steps) but need bigger work-groups and, with little sharing, more memory.
The known constraint ``share <= swath`` comes from the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from searchlab.adapters._values import ints
from searchlab.adapters.knobs._arch import paper_archs
from searchlab.adapters.knobs._common import HostData
from searchlab.adapters.knobs._opencl import OpenCLKnobProblem
from searchlab.core.records import Config
from searchlab.core.spaces import IntKnob, Knob
from searchlab.errors import ConfigError

ALPHABET = 24
GAP = 3

def reference_scores(query: np.ndarray, db: np.ndarray, table: np.ndarray, gap: int = GAP) -> np.ndarray:
    """Best local-alignment score of ``query`` against each row of ``db`` (numpy, row-wise).

    Row recurrence: ``E_j = max(0, H[i-1][j-1] + s, H[i-1][j] - g)`` then
    ``H[i][j] = max(E_j, H[i][j-1] - g) = max_k<=j (E_k - g (j - k))``, a cumulative maximum.
    """
    d, m = db.shape
    length = len(query)
    idx = np.arange(1, length + 1)
    best = np.zeros(d, dtype=np.int64)
    prev = np.zeros((d, length + 1), dtype=np.int64)
    for i in range(m):
        s = table[query[None, :], db[:, i][:, None]]  # (d, length)
        e = np.maximum(0, np.maximum(prev[:, :-1] + s, prev[:, 1:] - gap))
        h = np.maximum.accumulate(e + gap * idx, axis=1) - gap * idx
        prev = np.concatenate([np.zeros((d, 1), dtype=np.int64), h], axis=1)
        best = np.maximum(best, h.max(axis=1))
    return best


class SmithWaterman(OpenCLKnobProblem):
    name = "smith_waterman"
    kernel_name = "sw"
    code_version = "2"
    rtol, atol = 0.0, 0.0
    # swath is the work-group; every table copy takes local memory; the code does not grow
    ARCHS = paper_archs(max_wg=(32, 64), code_bytes=(1 << 20, 1 << 20), local_mem=(6000, 12_000, 9000, 20_000),
                        compile_s=1.0)

    def __init__(self, sequences: int = 16, length: int = 128, query: int = 128, max_swath: int = 64,
                 max_share: int = 16, **common: Any) -> None:
        """The database, the query and the swath and share bounds. Its options, declared once (searchlab.core.schema).

        Args:
            sequences: database sequences (one work-group each)
            length: database sequence length (DP rows)
            query: query length (DP columns)
            max_swath: swath widths 4, 8, ..., max_swath
            max_share: the share knob's upper bound
            common: arch, measure, limits, model (OpenCLKnobProblem)
        """
        if min(sequences, length, query, max_share) < 1 or max_swath < 4:
            raise ConfigError(f"problem smith_waterman: sequences={sequences}, length={length}, query={query}, "
                              f"max_share={max_share} must be >= 1 and max_swath={max_swath} >= 4")
        self.sequences, self.length, self.query_len = sequences, length, query
        self.max_swath, self.max_share = max_swath, max_share
        super().__init__(**common)

    def knobs(self) -> Sequence[Knob]:
        return (IntKnob("swath", 4, self.max_swath, step=4), IntKnob("share", 1, self.max_share))

    def known_constraints(self) -> Sequence[str]:
        return ("share <= swath",)

    def source(self, config: Config) -> str:
        w, s = ints(config, "swath", "share")
        copies = -(-w // s)
        return "\n".join([
            f"#define W {w}\n#define S {s}\n#define NCOPY {copies}\n#define M {self.length}\n#define L {self.query_len}",
            f"#define A {ALPHABET}\n#define G {GAP}",
            "__kernel __attribute__((reqd_work_group_size(W,1,1)))",
            "void sw(__global const uchar* q, __global const uchar* db, __global const int* table, __global int* out) {",
            "  __local int tab[NCOPY * A * A];", "  __local int h1[W], h2[W];", "  __local int bound[M + 1], bnew[M + 1];",
            "  const int lid = get_local_id(0);", "  __global const uchar* d = db + get_group_id(0) * M;",
            "  for (int i = lid; i < NCOPY * A * A; i += W) tab[i] = table[i % (A * A)];",
            "  for (int i = lid; i <= M; i += W) { bound[i] = 0; bnew[i] = 0; }",
            "  __local const int* mytab = tab + (lid / S) * A * A;",
            "  int best = 0;",
            "  for (int j0 = 0; j0 < L; j0 += W) {",
            "    const int j = j0 + lid; const int qc = (j < L) ? q[j] : 0;",
            "    int up = 0;", "    h1[lid] = 0; h2[lid] = 0;", "    barrier(CLK_LOCAL_MEM_FENCE);",
            "    for (int t = 0; t < M + W - 1; t++) {",
            "      const int i = t - lid; int h = 0;",
            "      if (i >= 0 && i < M && j < L) {",
            "        const int left = lid ? h1[lid - 1] : bound[i + 1];",
            "        const int diag = lid ? h2[lid - 1] : bound[i];",
            "        h = max(max(0, diag + mytab[qc * A + d[i]]), max(up - G, left - G));",
            "        best = max(best, h); up = h;",
            "        if (lid == W - 1) bnew[i + 1] = h;",
            "      }",
            "      barrier(CLK_LOCAL_MEM_FENCE);",
            "      h2[lid] = h1[lid]; h1[lid] = h;",
            "      barrier(CLK_LOCAL_MEM_FENCE);",
            "    }",
            "    for (int i = lid; i <= M; i += W) bound[i] = bnew[i];",
            "    barrier(CLK_LOCAL_MEM_FENCE);",
            "  }",
            "  h1[lid] = best;", "  barrier(CLK_LOCAL_MEM_FENCE);",
            "  if (lid == 0) { int b = 0; for (int k = 0; k < W; k++) b = max(b, h1[k]); out[get_group_id(0)] = b; }",
            "}",
        ])

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        (w,) = ints(config, "swath")
        return (self.sequences * w,), (w,)

    def host_data(self) -> HostData:
        rng = np.random.default_rng(4)
        table = rng.integers(-4, 5, (ALPHABET, ALPHABET))
        table = np.triu(table) + np.triu(table, 1).T
        np.fill_diagonal(table, rng.integers(4, 11, ALPHABET))
        q = rng.integers(0, ALPHABET, self.query_len).astype(np.uint8)
        db = rng.integers(0, ALPHABET, (self.sequences, self.length)).astype(np.uint8)
        ref = reference_scores(q.astype(np.int64), db.astype(np.int64), table.astype(np.int64))
        return HostData((q, db, table.astype(np.int32)), np.zeros(self.sequences, np.int32), ref, fill=-1)
