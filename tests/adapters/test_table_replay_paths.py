"""The replay hot path (issue 23, item 3): the noise draw, the table space's sampling and
validation shortcuts, and the drawn measurement give what the general code gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from searchlab.adapters.knobs import load_kernel_tuner_cache
from searchlab.adapters.table import TableProblem
from searchlab.adapters.table.problem import sample_index
from searchlab.core.records import Config, Measurement, Status
from searchlab.core.spaces import KnobSpace
from searchlab.errors import InvalidConfigError

KT = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"


def test_sample_index_is_uniform_and_a_function_of_seed_key_and_occurrence() -> None:
    n, keys = 7, [f'[["a",{i}]]' for i in range(2000)]
    counts = Counter(sample_index(3, k, occ, n) for k in keys for occ in range(10))
    assert set(counts) == set(range(n))
    expected = len(keys) * 10 / n
    assert all(abs(c - expected) < 0.06 * expected for c in counts.values())  # 20,000 draws: ~3 sd is 2 %
    first = [sample_index(3, k, 0, n) for k in keys]
    assert first == [sample_index(3, k, 0, n) for k in keys]  # reproducible
    for other in ([sample_index(4, k, 0, n) for k in keys], [sample_index(3, k, 1, n) for k in keys]):
        agree = sum(a == b for a, b in zip(first, other))
        assert agree < 0.25 * len(keys)  # another seed or occurrence: independent draws (1/7 agree)
    assert sample_index(2**70, keys[0], 2**65, 5) in range(5)  # large values are reduced, not refused


def _reference_sample(space: KnobSpace, rng: np.random.Generator) -> Config:
    """KnobSpace.sample as it was before the member shortcut: draw, build, check."""
    sizes = np.array([len(k.values) for k in space.knobs], dtype=np.int64)
    while True:
        index = rng.integers(sizes).tolist()
        config = Config({k.name: k.values[i] for k, i in zip(space.knobs, index)})
        if space.check(config) is None:
            return config


def test_table_space_samples_the_same_configurations_as_draw_and_check() -> None:
    space = load_kernel_tuner_cache(KT).space
    assert space._drawable() is not None  # the shortcut is taken for a recorded table
    fast, slow = np.random.default_rng(11), np.random.default_rng(11)
    ours = [space.sample(fast) for _ in range(300)]
    assert ours == [_reference_sample(space, slow) for _ in range(300)]
    assert fast.integers(1 << 30) == slow.integers(1 << 30)  # and the generators were left alike


def test_table_space_validate_still_refuses_values_outside_the_knobs() -> None:
    space = load_kernel_tuner_cache(KT).space
    member = next(iter(space.members))
    space.validate(member)
    name = space.knobs[0].name
    with pytest.raises(InvalidConfigError):
        space.validate(Config({**member, name: "not a value"}))
    with pytest.raises(InvalidConfigError):
        space.validate(Config({k: v for k, v in member.items() if k != name}))


def test_drawn_measurement_equals_the_replace_built_one() -> None:
    table = load_kernel_tuner_cache(KT)
    config, row = next((c, m) for c, m in table.rows.items() if m.status is Status.OK)
    m = TableProblem(table, sample_noise=True, noise_seed=5).evaluate(config)
    built = Measurement(Status.OK, objective=m.objective, samples=(m.objective,), sensors=dict(m.sensors),
                        compile_s=row.compile_s, run_s=row.run_s, charged_s=row.charged_s, extra=dict(m.extra),
                        failure_mode=row.failure_mode, message=row.message, datasets=dict(row.datasets), log=row.log)
    assert m == built and m.objective in row.samples and m.extra["recorded_objective"] == row.objective
    assert row.samples != (m.objective,) and len(row.samples) > 1  # the table's row is untouched
    with pytest.raises(TypeError):
        m.extra["x"] = 1  # type: ignore[index]  # read-only, as every measurement's mappings
