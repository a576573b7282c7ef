"""Uniform random search without repeats: the baseline every study needs.

On a derivation DAG it is uniform over *words* (using exact sink counts), unlike the
Monte-Carlo descent of paper 002 §4, which is uniform over arcs at each step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.searchers._base import ProposalLike, Searcher, drain
from searchlab.searchers._schema import searcher_config


class RandomSearcher(Searcher):
    name = "random"
    space_kinds = (Space,)

    def __init__(self, space: Space, *, tries: int = 200, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.tries = tries
        self._left: list[Config] | None = None  # unseen members, once draws keep colliding
        self._exhausted = False
        self._sampler = self.space.sampler(self.rng)  # draws ahead in blocks on knob spaces (Sampler)

    def _draw(self) -> Config | None:
        if self._left is None:
            for _ in range(self.tries):
                config = self._sampler.draw()
                if not self.seen(config):
                    return config
            self._sampler.sync()  # the generator is used directly from here on
            self._left = [c for c in self.space.enumerate() if not self.seen(c)]
        self._left = [c for c in self._left if not self.seen(c)]
        if not self._left:
            self._exhausted = True
            return None
        return self._left.pop(int(self.rng.integers(len(self._left))))

    def _draw_unseen(self) -> Config | None:
        config = self._draw()
        if config is not None:
            self._seen.add(config)  # so the next draw in this batch avoids it
        return config

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        return drain(n, self._draw_unseen)

    def _done(self) -> bool:
        return self._exhausted


# tries: rejection draws before falling back to enumerating what is left
RandomConfig = searcher_config(RandomSearcher)
