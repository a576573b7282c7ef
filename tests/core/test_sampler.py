"""Block sampling (issue 23, item 3): ``Space.sampler`` draws exactly what one ``sample`` call per
draw gives, and ``sync`` leaves the generator where those calls would have left it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchlab.adapters.knobs import load_kernel_tuner_cache
from searchlab.core.records import Config
from searchlab.core.spaces import IntKnob, KnobSpace, OrdinalKnob, Sampler
from searchlab.interchange.table import TableKnobSpace
from searchlab.searchers import RandomSearcher

KT = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"


def _constrained() -> KnobSpace:
    return KnobSpace((IntKnob("a", 0, 9), OrdinalKnob("b", (1, 2, 4, 8)), IntKnob("c", 1, 5)),
                     constraints=("a * b <= 20", "c != 3"))


@pytest.mark.parametrize("draws", [1, 63, 64, 65, 200])
@pytest.mark.parametrize("which", ["constrained", "table"])
def test_block_sampler_draws_what_sample_draws_and_sync_rewinds(which: str, draws: int) -> None:
    space = _constrained() if which == "constrained" else load_kernel_tuner_cache(KT).space
    ahead, one_by_one = np.random.default_rng(5), np.random.default_rng(5)
    sampler = space.sampler(ahead)
    assert [sampler.draw() for _ in range(draws)] == [space.sample(one_by_one) for _ in range(draws)]
    sampler.sync()
    assert ahead.bit_generator.state == one_by_one.bit_generator.state
    assert ahead.integers(1 << 40) == one_by_one.integers(1 << 40)
    sampler.sync()  # twice is harmless
    assert sampler.draw() == space.sample(one_by_one)  # and drawing goes on from there


def test_a_table_space_draws_its_listed_members_themselves() -> None:
    space = load_kernel_tuner_cache(KT).space
    rng = np.random.default_rng(0)
    drawn = [space.sample(rng) for _ in range(50)]
    members = {m: m for m in space.members}
    assert all(c is members[c] for c in drawn)  # the listed object: its key and hash made once


def test_a_member_recorded_with_another_value_type_keeps_the_knob_values_key() -> None:
    knobs = (OrdinalKnob("x", (1, 2)), OrdinalKnob("y", (3, 4)))
    members = frozenset({Config(x=1.0, y=3), Config(x=2, y=4)})  # 1.0 == 1, but its JSON key differs
    space = TableKnobSpace(knobs, members=members)
    rng = np.random.default_rng(1)
    keys = {space.sample(rng).key for _ in range(40)}
    assert keys == {Config(x=1, y=3).key, Config(x=2, y=4).key}


def test_random_search_falls_back_to_the_synced_generator_when_draws_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its rejection draws random search uses its generator directly: the proposals are those
    of one ``sample`` call per draw, to the last one, only if the sampler synced first."""
    space = KnobSpace((IntKnob("a", 0, 5), IntKnob("b", 0, 4)))
    ahead = [c.config for c in RandomSearcher(space, seed=3, tries=3).ask(30)]
    monkeypatch.setattr(KnobSpace, "sampler", lambda self, rng: Sampler(self, rng))
    searcher = RandomSearcher(space, seed=3, tries=3)
    assert ahead == [c.config for c in searcher.ask(30)]
    assert len(set(ahead)) == 30 and searcher.ask(1) == [] and searcher.done
