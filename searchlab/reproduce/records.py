"""A finished repeat as a run of the records file: what ``python -m searchlab.study DIR`` reads of it.

Each of Kernel Tuner's results becomes one evaluation (encoded by the one encoder,
:func:`searchlab.core._rows.encode`, in the worker that ran the repeat), in the order Kernel Tuner made them: its
configuration, its objective (a number when ``invalidity`` is ``correct``), its status and failure mode
(``compile``, ``runtime``, ``correctness`` -> ``wrong_output``, ``timeout``, ``constraints``), and as charged time
the sum of the time keys the experiment counts (seconds: what the methodology's time axis adds up), the compile
time and the summed runtimes in their columns. What the methodology reads of each result (every time key, the value
as Kernel Tuner gave it, the invalidity) is the run's config's ``kernel_tuner`` entry, one JSON per repeat
(:mod:`searchlab.reproduce.arrays`' compact form): a JSON object per evaluation doubled the cost of a repeat.

The run's problem is the space (``<gpu>/<application>``), its searcher the strategy's name, its seed the repeat's
index (so the study pairs repeats by index, as reproduce's own tests do; the seed that was used is in its config),
its known optimum the space's best valid value, and its fingerprint the space file's digest. Its config names the
searcher and the space file as a run's config does (``searcher._target_`` for a searchlab searcher, ``problem.path``),
so the study marks a space that chose a searcher's shipped defaults, as reproduce does.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["evaluation_rows", "record", "space_facts"]

_MODES = {"compile": "compile", "runtime": "runtime", "correctness": "wrong_output", "timeout": "timeout",
          "constraints": "constraint"}


def space_facts(space: Any) -> tuple[str, float]:
    """The space's fingerprint (its T4 file's digest) and its optimum (best valid objective)."""
    values = []
    for row in space.doc["results"]:
        if row.get("invalidity") != "correct":
            continue
        for m in row.get("measurements") or ():
            if m.get("name") == space.objective and isinstance(m.get("value"), (int, float)):
                values.append(float(m["value"]))
    return (space.digest or hashlib.sha256(space.key.encode()).hexdigest())[:16], \
        (min(values) if space.minimization else max(values))


def evaluation_rows(run: Mapping[str, Any], started: float, ended: float) -> tuple[Any, ...]:
    """A repeat's compact run (with its ``configs``, searchlab ``Config`` objects) as encoded evaluations, its
    timestamps spread over the repeat."""
    from searchlab.core._rows import encode
    from searchlab.core.records import Candidate, FailureMode, Measurement, Result, Status

    rows = []
    n = max(len(run["i"]), 1)
    keys = list(run["keys"])
    at_compile = keys.index("compilation") if "compilation" in keys else None
    at_runtimes = keys.index("runtimes") if "runtimes" in keys else None
    for j, (config, times, value, invalidity) in enumerate(zip(run["configs"], run["t"], run["v"], run["i"])):
        ok = invalidity == "correct" and isinstance(value, (int, float)) and math.isfinite(value)
        mode = FailureMode.NONE if ok else FailureMode(_MODES.get(str(invalidity), "invalid"))
        status = Status.OK if ok else (Status.TIMEOUT if mode is FailureMode.TIMEOUT else Status.FAILED)
        counted = [t for t in times if t is not None and math.isfinite(t) and t >= 0]
        measurement = Measurement(status, objective=float(value) if ok else None, failure_mode=mode,
                                  message="" if ok else f"Kernel Tuner: {invalidity}", charged_s=float(sum(counted)),
                                  compile_s=_time(times, at_compile), run_s=_time(times, at_runtimes))
        at = started + (ended - started) * j / n
        rows.append(encode(Result(Candidate(j, config, config), measurement, "kernel_tuner", "simulated", at, at, at)))
    return tuple(rows)


def _time(times: list[Any], at: int | None) -> float:
    value = None if at is None else times[at]
    return float(value) if value is not None and math.isfinite(value) and value >= 0 else 0.0


def record(plan: Any, index: int, outcome: Mapping[str, Any], started: float, ended: float, node: str,
           facts: tuple[str, float], versions: Mapping[str, str]) -> Any:
    """The ``RunRecord`` of repeat ``index`` of ``plan``'s group (its rows encoded by the worker)."""
    from searchlab.core.store import RunRecord

    group, spec = plan.group, plan.spec
    config: dict[str, Any] = {
        "group": group.key, "repeat": index, "seed": outcome["seed"], "seed_fixed": bool(outcome.get("seed_fixed")),
        "attempts": outcome["attempts"], "search_method": group.search_method, "samples": group.samples,
        "hyperparameters": dict(group.hyperparameters), "budget": dict(spec.budget),
        "problem": {"path": str(group.space.t4), "objective": spec.objective}, "searcher": _searcher(group),
        "kernel_tuner": outcome["compact"]}
    fingerprint, optimum = facts
    return RunRecord(name=f"{group.key}/seed_{index}", problem=f"{group.space.gpu}/{group.space.application}",
                     searcher=group.name, seed=index, config=config,
                     direction="minimize" if group.space.minimization else "maximize",
                     objective_name=spec.objective, fingerprint=fingerprint, known_optimum=optimum,
                     versions=dict(versions), devices=({"name": group.space.gpu, "kind": "simulated"},), node=node,
                     status="finished", stop_reason="budget", started=started, ended=ended,
                     evaluations=tuple(outcome["rows"]))


def _searcher(group: Any) -> Mapping[str, Any]:
    """The searcher as a run's config names it: a registered searchlab searcher by its target, else Kernel Tuner's."""
    if group.custom != "searchlab":
        return {"name": f"kernel_tuner:{group.search_method}", "custom": group.custom}
    from searchlab import registry
    from searchlab.reproduce.checks import searchlab_params

    name, _, options = searchlab_params(group.hyperparameters, group.key)
    return {"_target_": registry.entry("searcher", name).target, **options}
