"""The synthetic 10-knob space and objective of ``bench/proposal_time.py`` (issue 16, item 3).

Why synthetic: the shared Kernel Tuner tables (``../shared/data/kernel_tuner``) have 10
parameters but three of them take a single value, so they are 7-knob spaces of 4,362 valid
configurations -- too small for the issue's "10 knobs, ~10,000 valid" bound. This space is a
GPU-kernel-like 2D stencil with 10 real knobs, 96,768 combinations of which 9,680 satisfy the
known constraints (the work-group limit ``block_x * block_y <= 1024`` and the usual rules
of tiling, vectorisation, unrolling and local memory).

Objective (deterministic, milliseconds): ``2 * exp(smooth + rugged)`` with

- smooth: quadratic bowls in log2 space -- 256 threads per work-group best, a tile area of
  about 4-8 outputs per thread, ``block_x`` of 32-64 for coalescing -- plus additive effects
  of vector width (helps only in ``xy`` loop order), local memory (helps with tiles >= 4,
  hurts with smaller ones), padding (removes bank conflicts when ``block_x`` is a multiple of
  32), read-only cache and unrolling;
- rugged: ``0.12 * u`` with ``u`` uniform in [-1, 1] from a hash of the configuration (the
  unexplained configuration-to-configuration variation of real GPU tables).

Hidden constraint: ``tile_x * tile_y * vector * unroll > 64`` (register pressure) fails with
``RESOURCES`` (8.2 % of the valid configurations), so the searchers' feasibility handling is
exercised and timed too.
"""

from __future__ import annotations

import hashlib
import math

from searchlab.core.expr import Expression
from searchlab.core.records import Config
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob

CONSTRAINTS = (
    "block_x * block_y <= 1024",
    "block_x * block_y >= 32",
    "tile_x * tile_y <= 16",
    "vector <= tile_x",
    "unroll <= tile_y",
    "padding <= use_shmem",
    "use_shmem == 0 or (block_x * tile_x + 2) * (block_y * tile_y + 2) * 4 <= 32768",
    "read_only + use_shmem <= 1",
)


def space() -> KnobSpace:
    return KnobSpace((
        OrdinalKnob("block_x", (16, 32, 64, 128, 256, 512, 1024)),
        OrdinalKnob("block_y", (1, 2, 4, 8, 16, 32)),
        OrdinalKnob("tile_x", (1, 2, 4, 8)),
        OrdinalKnob("tile_y", (1, 2, 4, 8)),
        OrdinalKnob("vector", (1, 2, 4)),
        OrdinalKnob("unroll", (1, 2, 4)),
        OrdinalKnob("use_shmem", (0, 1)),
        OrdinalKnob("read_only", (0, 1)),
        CategoricalKnob("loop_order", ("xy", "yx")),
        OrdinalKnob("padding", (0, 1)),
    ), tuple(Expression(c) for c in CONSTRAINTS))


def _rugged(config: Config) -> float:
    key = repr(sorted(config.items())).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**63 - 1.0


def num(c: Config, name: str) -> int:
    """An integer knob's value (Config values are typed as any knob value)."""
    value = c[name]
    assert isinstance(value, int)
    return value


def hidden_failure(c: Config) -> bool:
    return num(c, "tile_x") * num(c, "tile_y") * num(c, "vector") * num(c, "unroll") > 64


def time_ms(c: Config) -> float:
    """Run time of a valid configuration that does not fail (see the module docstring)."""
    bx, by, tx, ty, vec, unroll, shmem, ro, pad = (num(c, k) for k in (
        "block_x", "block_y", "tile_x", "tile_y", "vector", "unroll", "use_shmem", "read_only", "padding"))
    xy = c["loop_order"] == "xy"
    smooth = (0.6 * (math.log2(bx * by) - 8) ** 2 / 9 + 0.25 * (math.log2(tx * ty) - 2.5) ** 2 / 4
              + 0.3 * (math.log2(bx) - 5.5) ** 2 / 9
              - (0.15 * math.log2(vec) if xy else -0.1)
              - 0.2 * shmem * (1.0 if tx * ty >= 4 else -0.5)
              - 0.12 * pad * (bx % 32 == 0) - 0.08 * ro - 0.05 * math.log2(unroll))
    return 2.0 * math.exp(smooth + 0.12 * _rugged(c))
