"""Exhaustive search: every member once, in the space's enumeration order.

It enumerates knob products (minus known-infeasible ones), DAG sinks, and threshold
plateaus (paper 003 Alg. 4 on plateau representatives). Its runs become replayable tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from searchlab.records import Config
from searchlab.searchers._base import ProposalLike, Searcher
from searchlab.spaces import Space


@dataclass
class ExhaustiveConfig:
    _target_: str = "searchlab.searchers.ExhaustiveSearcher"
    max_size: int = 1_000_000
    shuffle: bool = False  # seeded random order instead of enumeration order


class ExhaustiveSearcher(Searcher):
    name = "exhaustive"
    space_kinds = (Space,)
    max_size_default = 1_000_000

    def __init__(self, space: Space, *, max_size: int = 1_000_000, shuffle: bool = False, **kwargs: object) -> None:
        if space.size() > max_size:
            from searchlab.errors import IncompatibleError

            raise IncompatibleError(
                f"searcher 'exhaustive': the space has {space.size()} members, more than max_size={max_size}"
            )
        super().__init__(space, **kwargs)  # type: ignore[arg-type]
        self._iter: Iterator[Config] = iter(self._order(shuffle))
        self._exhausted = False

    def _order(self, shuffle: bool) -> Iterator[Config] | list[Config]:
        if not shuffle:
            return self.space.enumerate()
        members = list(self.space.enumerate())
        self.rng.shuffle(members)  # type: ignore[arg-type]
        return members

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[Config] = []
        for config in self._iter:
            if not self.seen(config):
                out.append(config)
                if len(out) == n:
                    break
        else:
            self._exhausted = True
        return out

    def _done(self) -> bool:
        return self._exhausted
