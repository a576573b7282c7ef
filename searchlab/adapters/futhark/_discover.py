"""The threshold tree of a compiled Futhark program and the E_par values of its datasets.

The tree comes from the server's ``tuning_params`` / ``tuning_param_class``: a threshold's
class is ``threshold(DEFAULT, PATH)`` where PATH lists every ancestor comparison with the
outcome that leads to it (``!`` = false), which is what ``futhark autotune`` parses too
(paper 003 §1.3). The parent is the deepest ancestor. ``def`` is the device's default
threshold, read from the ``-L`` start-up lines (``Default threshold: N``).

E_par values come from the ``-L`` log (``Compared NAME <= VALUE: B.``) of *dry runs*: one
with every threshold "∞" (every comparison false, so every threshold on a false path is
compared), then one per threshold that has true-branch children, with that threshold and
its ancestors set to reach them. A threshold compared several times in a run (inside a
sequential loop) gets the sequence of values: it is loop-based (§2.2, §3.2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from searchlab.core.spaces import Threshold
from searchlab.errors import ConfigError

ALL_FALSE = 2_000_000_000  # futhark autotune's thresholdMax
ALL_TRUE = 1  # futhark autotune's thresholdMin
_CLASS = re.compile(r"^threshold\(\s*([^,]*)\s*,\s*(.*)\)$")
_COMPARED = re.compile(r"^Compared (\S+) <= (-?[0-9]+): (true|false)\.$")


@dataclass(frozen=True)
class ParamClass:
    name: str
    default: str  # "def" or an integer
    path: tuple[tuple[str, bool], ...]  # (ancestor, outcome leading here)


def parse_class(name: str, text: str) -> ParamClass | None:
    """``threshold(def, !main.suff_outer_par_1 main.x)`` -> ParamClass; None for other params."""
    m = _CLASS.match(text.strip())
    if m is None:
        return None
    path = tuple((tok.lstrip("!"), not tok.startswith("!")) for tok in m.group(2).split())
    return ParamClass(name, m.group(1).strip(), path)


def build_tree(classes: Sequence[ParamClass], default_threshold: int) -> tuple[Threshold, ...]:
    """Thresholds parents first; parent = the ancestor with the longest path."""
    by_name = {c.name: c for c in classes}
    for c in classes:
        missing = [a for a, _ in c.path if a not in by_name]
        if missing:
            raise ConfigError(f"threshold {c.name}: class names unknown ancestors {missing}")
    out = []
    for c in sorted(classes, key=lambda c: (len(c.path), _number(c.name), c.name)):
        parent, branch = None, True
        if c.path:
            parent, branch = max(c.path, key=lambda a: len(by_name[a[0]].path))
        default = default_threshold if c.default == "def" else int(c.default)
        out.append(Threshold(c.name, parent=parent, branch=branch, default=default))
    return tuple(out)


def _number(name: str) -> int:
    m = re.search(r"_([0-9]+)$", name)
    return int(m.group(1)) if m else 0


def comparisons(log: Sequence[str]) -> list[tuple[str, int, bool]]:
    out = []
    for line in log:
        m = _COMPARED.match(line.strip())
        if m:
            out.append((m.group(1), int(m.group(2)), m.group(3) == "true"))
    return out


def dry_assignments(thresholds: Sequence[Threshold], classes: Mapping[str, ParamClass]) -> list[dict[str, int]]:
    """All-false, then one assignment per threshold with true-branch children."""
    names = [t.name for t in thresholds]
    runs = [dict.fromkeys(names, ALL_FALSE)]
    for t in thresholds:
        if any(c.parent == t.name and c.branch for c in thresholds):
            assign = dict.fromkeys(names, ALL_FALSE)
            for ancestor, outcome in classes[t.name].path:
                assign[ancestor] = ALL_TRUE if outcome else ALL_FALSE
            assign[t.name] = ALL_TRUE
            runs.append(assign)
    return runs


def epar_values(thresholds: Sequence[Threshold], classes: Mapping[str, ParamClass],
                run: Callable[[dict[str, int]], Sequence[str]]) -> dict[str, tuple[int, ...]]:
    """E_par values per threshold for one dataset; ``run(assignment)`` returns the -L log."""
    values: dict[str, tuple[int, ...]] = {}
    for assign in dry_assignments(thresholds, classes):
        seen: dict[str, list[int]] = {}
        for name, value, _ in comparisons(run(assign)):
            seen.setdefault(name, []).append(value)
        for name, seq in seen.items():
            if name in values or name not in classes:
                continue
            values[name] = (seq[0],) if len(set(seq)) == 1 else tuple(seq)
    return values


def dry_runs(server: Any, cases: Sequence[Any], data_sets: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the problem caches about a compiled program: the threshold tree and each
    dataset's E_par values (dry runs on an ``-L`` server), entry point signatures, and the
    other tuning parameters (sizes) with the device's defaults and limits."""
    params = server.cmd_tuning_params(cases[0].entry)
    texts = {p: str(server.cmd_tuning_param_class(p)).strip() for p in params}
    classes = [c for c in (parse_class(p, texts[p]) for p in params) if c]
    sizes = {"classes": {p: t for p, t in texts.items() if not t.startswith("threshold(")},
             "defaults": server.header(), "limits": server.header("Max ")}
    default = int(server.header().get("threshold", "32768"))
    thresholds = build_tree(classes, default)
    by_name = {c.name: c for c in classes}
    entries = {}
    for entry in {c.entry for c in cases}:
        inputs = [t.strip() for t in server.cmd_inputs(entry)]
        entries[entry] = {"inputs": inputs, "outputs": len(server.cmd("outputs", entry))}
        for data in data_sets.values():
            if data.entry == entry:
                data.input_types = tuple(t.lstrip("*") for t in inputs)
                data.n_outputs = entries[entry]["outputs"]
    datasets = []
    for case in cases:
        data = data_sets[case.name]

        def run(assign: dict[str, int], data: Any = data) -> list[str]:
            server.set_params(assign)
            inputs = server.restore(data.input, data.input_types)
            _, outs, log = server.call(data.entry, inputs, data.n_outputs)
            server.drop([*outs, *inputs])
            return list(log)

        values = epar_values(thresholds, by_name, run)
        datasets.append({"name": case.name, "values": values, "train": case.train})
    return {"thresholds": [t.__dict__ for t in thresholds], "entries": entries,
        "classes": {c.name: server_class(c) for c in classes}, "datasets": datasets, "sizes": sizes}


def server_class(c: ParamClass) -> str:
    path = " ".join(name if outcome else f"!{name}" for name, outcome in c.path)
    return f"threshold({c.default}, {path})"


def positive(values: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """E_par values without 0: only a threshold of 0 is true on E_par 0, and a ``.tuning`` file
    cannot hold one (0 means the default), so every value a tuner may write is false there and the
    plateau "<= 0" is left out of the space (``split``)."""
    return {name: tuple(int(v) for v in seq if int(v) > 0) for name, seq in values.items()}
