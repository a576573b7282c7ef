"""Block and tile sizes of a compiled Futhark program as knobs beside its thresholds
(``problem.sizes=true``, docs/futhark.md "Block and tile sizes").

``futhark autotune`` tunes thresholds only (paper 003 §1.3 tunes the comparisons of
incremental flattening); the compiler also leaves *size* parameters open: thread-block
sizes, numbers of blocks, (register) tile sizes. The server lists them with the thresholds
(``tuning_params``) and gives their class (``tuning_param_class``: ``thread_block_size``,
``grid_size``, ``tile_size``, ``reg_tile_size``, ...).

Two facts measured on pocl (Futhark 0.25.27) shape this module:

- a size is a ``-D`` option of the OpenCL program, fixed when the server builds it: a
  ``set_tuning_param`` on a size of a running server changes what the host launches but not
  the compiled kernels, and the next call fails (``Invalid work group size``, OpenCL error
  -54). So every size assignment gets its own servers, started with ``--param NAME=VALUE``,
  kept in a small LRU (:class:`ServerPool`);
- the OpenCL ``--cache-file`` holds one build (keyed by the build options), and writing it
  makes pocl compile every kernel of the program to a binary (≈ 23 s CPU even for a small
  matrix product, over a minute of wall time on a loaded machine); without it pocl compiles
  only the kernels a run launches (≈ 1 s) and keeps them in its own kernel cache, which the
  next server with the same sizes finds. So servers of non-default sizes run without one.

Deviation from the paper: the thesis's tuners search the threshold tree only; with sizes on,
the space is a knob space (thresholds as their plateau knobs, §3.5, plus the size knobs),
which the generic searchers take and the tree tuners refuse.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searchlab.adapters._default import mapping_of, unknown_names
from searchlab.core.records import Config
from searchlab.core.spaces import KnobSpace, OrdinalKnob, ThresholdDataset, ThresholdTree, plateau_knobs
from searchlab.errors import ConfigError

# class -> its name in the server's -L start-up line "Default NAME: N"
SIZE_CLASSES = {"thread_block_size": "block size", "grid_size": "grid size", "tile_size": "tile size",
                "reg_tile_size": "register tile size"}
GRID_CAP = 1024  # our cap: the API allows 2^31 blocks, not a range worth sampling uniformly
REG_TILE_CAP = 16  # no device limit is reported for register tiles: r x r accumulators per thread
LIVE_SETTINGS = 2  # size assignments whose servers stay running (two processes each)

Sizes = tuple[tuple[str, int], ...]  # a size assignment, sorted by name: the servers' key


@dataclass(frozen=True)
class SizeParam:
    name: str
    cls: str  # the server's tuning_param_class
    default: int  # the device's default for the class (-L "Default ...")
    values: tuple[int, ...]  # the knob's domain, increasing


def _powers(high: int) -> list[int]:
    out, p = [], 1
    while p <= high:
        out.append(p)
        p *= 2
    return out


def domain(cls: str, default: int, limits: Mapping[str, int]) -> tuple[int, ...]:
    """Powers of two the device allows for a class, plus the default (see module doc / docs)."""
    block = limits.get("thread block size", 1024)
    if cls == "thread_block_size":
        high = block
    elif cls == "grid_size":
        high = min(limits.get("grid size", GRID_CAP), GRID_CAP)
    elif cls == "tile_size":  # a t x t tile is one thread per element of a block
        high = max(p for p in _powers(limits.get("tile size", block)) if p * p <= block)
    else:
        high = REG_TILE_CAP
    return tuple(sorted({*_powers(high), default}))


def size_params(classes: Mapping[str, str], defaults: Mapping[str, str],
                limits: Mapping[str, str]) -> tuple[SizeParam, ...]:
    """The size parameters among a program's tuning parameters (other classes are left alone)."""
    lim = {k.lower(): int(v) for k, v in limits.items() if v.strip().isdigit()}
    out = []
    for name in sorted(classes):
        cls = classes[name].strip()
        if cls not in SIZE_CLASSES:
            continue
        default = int(defaults.get(SIZE_CLASSES[cls], "1"))
        out.append(SizeParam(name, cls, default, domain(cls, default, lim)))
    return tuple(out)


@dataclass(frozen=True)
class ThresholdSizeSpace(KnobSpace):
    """Thresholds (as their plateau knobs: the values the tree view gives) and sizes.

    It answers what the Futhark report and bench ask of a threshold tree (datasets,
    defaults, all-false), with every size at its default there."""

    tree: ThresholdTree | None = field(default=None, compare=False)
    sizes: tuple[SizeParam, ...] = field(default=(), compare=False)
    kind = "thresholds+sizes"

    @classmethod
    def build(cls, tree: ThresholdTree, sizes: tuple[SizeParam, ...]) -> ThresholdSizeSpace:
        knobs = (*plateau_knobs(tree).knobs, *(OrdinalKnob(s.name, s.values) for s in sizes))
        return cls(knobs, (), tree, sizes)

    @property
    def threshold_tree(self) -> ThresholdTree:
        assert self.tree is not None
        return self.tree

    def size_defaults(self) -> dict[str, int]:
        return {s.name: s.default for s in self.sizes}

    def train_datasets(self) -> tuple[ThresholdDataset, ...]:
        return self.threshold_tree.train_datasets()

    def validation_datasets(self) -> tuple[ThresholdDataset, ...]:
        return self.threshold_tree.validation_datasets()

    def default_config(self) -> Config:
        """Untuned: thresholds and sizes at the device's defaults."""
        return Config({**self.threshold_tree.default_config(), **self.size_defaults()})

    def all_false(self) -> Config:
        return Config({**self.threshold_tree.all_false(), **self.size_defaults()})

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["sizes"] = {s.name: {"class": s.cls, "default": s.default} for s in self.sizes}
        out["thresholds"] = list(self.threshold_tree.names)
        return out


class ServerPool:
    """Servers per size assignment (a timing and a logging one, each started when first
    needed, so the second finds the kernels the first built in the OpenCL implementation's
    cache); the least recently used assignment is closed first (at most ``capacity`` live)."""

    def __init__(self, start: Callable[[Sizes, bool], Any], capacity: int = LIVE_SETTINGS) -> None:
        self._start = start
        self.capacity = capacity
        self._live: OrderedDict[Sizes, dict[bool, Any]] = OrderedDict()

    def get(self, sizes: Sizes, log: bool) -> Any:
        if sizes not in self._live:
            while len(self._live) >= self.capacity:
                _, old = self._live.popitem(last=False)
                for server in old.values():
                    server.close()
            self._live[sizes] = {}
        self._live.move_to_end(sizes)
        servers = self._live[sizes]
        if log not in servers:
            servers[log] = self._start(sizes, log)
        return servers[log]

    def servers(self) -> Iterator[Any]:
        for servers in self._live.values():
            yield from servers.values()

    def close(self) -> None:
        for server in self.servers():
            server.close()
        self._live.clear()


def user_default(space: ThresholdTree | ThresholdSizeSpace, tree: ThresholdTree, sizes: Sequence[SizeParam],
                 given: Mapping[str, Any] | None) -> Config:
    """``problem.default`` over the space's default (Futhark's, i.e. no ``.tuning`` file): names not
    given keep Futhark's default, as in a ``.tuning`` file. A threshold is any integer in
    [0, 2^63) (0: the device's default; a threshold need not sit on a plateau), a size one of its
    values; anything else is one line (issue 46, item 3)."""
    base = space.default_config()
    where = "problem.default"
    values = mapping_of(given, where, "{" + f"{tree.names[0]}: 1000" + "}")
    if values is None:
        return base
    by_size = {p.name: p for p in sizes}
    unknown_names(values, (*tree.names, *by_size), where)
    out = dict(base)
    for name, value in values.items():
        if name in by_size:
            if isinstance(value, bool) or value not in by_size[name].values:
                raise ConfigError(f"{where}.{name}={value!r}: not one of its values {list(by_size[name].values)}")
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
            raise ConfigError(f"{where}.{name}={value!r}: a threshold must be an integer in [0, 2^63) (0: the default)")
        out[name] = int(value)
    return Config(out)
