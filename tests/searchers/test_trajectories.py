"""Speed-ups that must not change what a searcher proposes (issue 23: the rows left out of
``study=tuned_peers`` for cost).

Each fingerprint below is the SHA-256 (first 16 hex digits) of the proposal sequence of one seeded
replay on the small convolution_A100 table, recorded with the code before the speed-ups (commit
081f390): ``probabilistic``'s Gabriel test and distances, Kernel Tuner's cost function in the bridge.
A change that moves any proposal of these runs fails here. The same check on the full
convolution_A100 table, seeds 0-2 x 220 evaluations, is in docs/baselines.md ("Left out").
"""

from __future__ import annotations

import hashlib
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from searchlab import registry
from searchlab.adapters.knobs.kernel_tuner import KernelTunerCache
from searchlab.api import optimize
from searchlab.run.loop import Budget

SMALL = Path(__file__).resolve().parents[2] / "tests" / "data" / "kt_convolution_A100_small.json.gz"


def fingerprint(name: str, budget: int, seed: int, **options: Any) -> str:
    problem = KernelTunerCache(path=str(SMALL))
    searcher = registry.searcher_class(name)(problem.space, direction=problem.direction, seed=seed, **options)
    outcome = optimize(problem, searcher, Budget(evaluations=budget))
    sequence = [sorted((k, repr(v)) for k, v in r.candidate.proposal.items()) for r in outcome.results]
    return hashlib.sha256(json.dumps(sequence).encode()).hexdigest()[:16]


RUNS: list[tuple[str, int, int, dict[str, Any], str]] = [
    ("probabilistic", 80, 0, {}, "d7ba49307ee5454f"),
    ("probabilistic", 60, 1, {"neighbors": "knn"}, "2c84aa6b18104def"),
    ("probabilistic", 60, 2, {"candidates": 300, "combine": "product"}, "2d9f86e1480357c2"),
    ("probabilistic_trivial", 80, 1, {}, "cd708b112354c149"),
]
KT_RUNS: list[tuple[str, int, int, dict[str, Any], str]] = [
    ("kt_basinhopping", 120, 0, {}, "c1351e21a906e09e"),
    ("kt_basinhopping", 120, 1, {"method": "Powell"}, "c6e62a276e85a7e1"),
    ("kt_basinhopping", 120, 2, {"method": "Nelder-Mead", "T": 0.1}, "f043f23eea60ebfe"),
    ("kt_basinhopping", 120, 3, {"method": "BFGS"}, "c9725d981d204684"),
]


@pytest.mark.parametrize(("name", "budget", "seed", "options", "expected"), RUNS)
def test_probabilistic_proposes_what_it_did_before(name: str, budget: int, seed: int, options: dict[str, Any],
                                                   expected: str) -> None:
    assert fingerprint(name, budget, seed, **options) == expected


@pytest.mark.skipif(find_spec("kernel_tuner") is None, reason="needs Kernel Tuner (the bench extra)")
@pytest.mark.parametrize(("name", "budget", "seed", "options", "expected"), KT_RUNS)
def test_kt_basinhopping_proposes_what_it_did_before(name: str, budget: int, seed: int, options: dict[str, Any],
                                                     expected: str) -> None:
    assert fingerprint(name, budget, seed, **options) == expected
