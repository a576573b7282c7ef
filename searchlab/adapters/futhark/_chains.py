"""Incremental-flattening chains: the threshold structure Futhark's rule G3 generates.

For a map with inner parallelism, G3 (paper 003 Fig. 1.5, §1.1.3) makes up to three
versions guarded by ``suff_outer_par <= Par(outer nest)`` (true: parallelise the outer
nest, sequentialise the body), then ``suff_intra_par <= Par(intra group)`` *and* "fits in a
work-group" (true: one work-group per outer element), else flatten further. Applied to
nested maps this gives a chain (Fig. 1.6c): each threshold is the false child of the one
before, and the last false branch is the fully flattened version.

As in Futhark's ``ExtractKernels``: outer thresholds default to the runtime's default
threshold (2^15) and compare against the product of the outer nest widths; intra
thresholds default to ``intraMinInnerPar`` (32) and compare against the intra-group
parallelism; the comparison is made and logged even when the group does not fit, in
which case the intra version is skipped (``intra_suff_and_fits``). Here "fits" also
covers the group's local memory, which pocl would otherwise abort on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from searchlab.core.spaces import FUTHARK_DEFAULT_THRESHOLD, Threshold

INTRA_DEFAULT = 32  # Futhark's intraMinInnerPar, the default of suff_intra_par thresholds
ENTRY = "main"


@dataclass(frozen=True)
class Level:
    """One guarded version of a chain: taken when ``threshold <= E_par`` (and it fits)."""

    kind: str  # "outer" | "intra"
    version: str  # name of the code version guarded by this level


@dataclass(frozen=True)
class Chain:
    """A parallel construct: ``levels`` in comparison order, then the flattened version."""

    construct: str
    levels: tuple[Level, ...]
    flat: str

    @property
    def versions(self) -> tuple[str, ...]:
        return (*(level.version for level in self.levels), self.flat)


def threshold_names(chains: Sequence[Chain]) -> dict[str, tuple[str, ...]]:
    """Futhark-style names, numbered in program order: ``main.suff_outer_par_0`` ..."""
    names: dict[str, tuple[str, ...]] = {}
    counter = 0
    for chain in chains:
        out = []
        for level in chain.levels:
            out.append(f"{ENTRY}.suff_{level.kind}_par_{counter}")
            counter += 1
        names[chain.construct] = tuple(out)
    return names


def chain_thresholds(chains: Sequence[Chain]) -> tuple[Threshold, ...]:
    """The threshold tree: each threshold is the false child of the previous one."""
    names = threshold_names(chains)
    out: list[Threshold] = []
    for chain in chains:
        parent: str | None = None
        for level, name in zip(chain.levels, names[chain.construct]):
            default = INTRA_DEFAULT if level.kind == "intra" else FUTHARK_DEFAULT_THRESHOLD
            out.append(Threshold(name, parent=parent, branch=False, default=default))
            parent = name
    return tuple(out)


def param_class(threshold: Threshold, thresholds: Sequence[Threshold]) -> str:
    """Futhark's ``--print-params`` class: ``threshold(def, !main.suff_outer_par_0 ...)``.

    The path lists every ancestor comparison with its required outcome (``!`` = false),
    which is what ``futhark autotune`` parses to rebuild the threshold forest."""
    by_name = {t.name: t for t in thresholds}
    path: list[str] = []
    node = threshold
    while node.parent is not None:
        path.append(node.parent if node.branch else f"!{node.parent}")
        node = by_name[node.parent]
    default = "def" if threshold.default == FUTHARK_DEFAULT_THRESHOLD else str(threshold.default)
    return f"threshold({default}, {' '.join(reversed(path))})"


@dataclass(frozen=True)
class Step:
    """One execution of a chain (one loop iteration): E_par and fits per threshold."""

    epar: tuple[int, ...]
    fits: tuple[bool, ...]


def choose(chain: Chain, names: Sequence[str], config: Mapping[str, int], step: Step
           ) -> tuple[int, list[tuple[str, int, bool]]]:
    """Walk the chain: the index of the version taken and the comparisons made (logged)."""
    made: list[tuple[str, int, bool]] = []
    for i, (name, e, fits) in enumerate(zip(names, step.epar, step.fits)):
        cmp = int(config[name]) <= e
        made.append((name, e, cmp))
        if cmp and fits:
            return i, made
    return len(chain.levels), made


def comparison_line(name: str, value: int, outcome: bool) -> str:
    """Futhark's ``-L`` log line (``sizeLoggingCode`` in the OpenCL backend)."""
    return f"Compared {name} <= {value}: {'true' if outcome else 'false'}."


def as_ints(config: Mapping[str, Any]) -> dict[str, int]:
    """A threshold (or size) assignment with int values: every value of these spaces is an integer."""
    return {k: int(v) for k, v in config.items()}
