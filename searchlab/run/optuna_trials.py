"""One evaluation as one Optuna trial: the one writer that ``export optuna`` and the live view share.

An evaluation becomes a trial with its configuration as ``params`` (each knob a ``CategoricalDistribution`` over
its values: exact for numbers and strings alike; an integer range too long to list, an ``IntDistribution``), its
objective as the value (the study's direction is the run's), its state ``COMPLETE``, or ``FAIL`` for a failed,
timed-out or infeasible evaluation, and what Optuna has no field for as user attributes: ``samples``, ``status``,
``failure_mode``, ``message`` and ``device`` (plus what the caller adds: the evaluation's number, its worker).
optuna-dashboard and ``optuna.load_study`` open the study. Optuna is imported inside the functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, cast

from searchlab.core.records import Config, Measurement

LISTED = 1000  # values a knob may have and still be one CategoricalDistribution over all of them


def wide(value: Any) -> Any:
    """An integer outside 64 bits as its decimal string: Parquet, pandas and Optuna hold no wider number
    (issue 47, item 15: a ``10**400`` knob value crashed ``export optuna`` and ``export parquet``)."""
    return str(value) if type(value) is int and not -(2**63) <= value < 2**63 else value


def choice(value: Any) -> Any:
    """A configuration value as an Optuna categorical choice (None, bool, int, float, str)."""
    return wide(value) if value is None or isinstance(value, (bool, int, float, str)) else json.dumps(value, default=str)


class Distributions:
    """Each parameter's distribution: from the values the space lists (fixed), else from the values seen so far
    (a threshold tree's or a DAG's configurations; the distribution grows as the run goes)."""

    def __init__(self, values: Mapping[str, Iterable[Any]] | None = None, space: Any = None) -> None:
        self.fixed: dict[str, Any] = {}
        self.seen: dict[str, list[Any]] = {}
        for knob in getattr(space, "knobs", ()) or ():
            self.fixed[knob.name] = _knob_distribution(knob)
        for name, listed in (values or {}).items():
            self.seen[name] = list(dict.fromkeys(choice(v) for v in listed))

    def of(self, params: Mapping[str, Any]) -> dict[str, Any]:
        from optuna.distributions import CategoricalDistribution

        out = {}
        for name, value in params.items():
            if name in self.fixed:
                out[name] = self.fixed[name]
                continue
            seen = self.seen.setdefault(name, [])
            if value not in seen:
                seen.append(value)
            out[name] = CategoricalDistribution(tuple(seen))
        return out


def _knob_distribution(knob: Any) -> Any:
    from optuna.distributions import CategoricalDistribution, IntDistribution

    if knob.count > LISTED and hasattr(knob, "low"):
        return IntDistribution(knob.low, knob.high, step=knob.step) if not knob.log else \
            IntDistribution(knob.low, knob.high, log=True)
    return CategoricalDistribution(tuple(dict.fromkeys(choice(v) for v in knob.values)))


def attributes(m: Measurement, device: str) -> dict[str, Any]:
    return {"samples": list(m.samples), "status": m.status.value, "failure_mode": m.failure_mode.value,
            "message": m.message, "device": device}


def frozen_trial(config: Config | Mapping[str, Any], m: Measurement, distributions: Distributions,
                 attrs: Mapping[str, Any]) -> Any:
    """The evaluation as an Optuna ``FrozenTrial`` (not yet in any study)."""
    from optuna.trial import TrialState, create_trial

    params = {n: choice(v) for n, v in config.items()}
    for name, dist in distributions.fixed.items():  # an IntDistribution takes the number itself
        if name in params and not hasattr(dist, "choices"):
            params[name] = config[name]
    ok = m.status.value == "ok" and m.objective is not None and math.isfinite(m.objective)
    return create_trial(params=params, distributions=distributions.of(params),
                        value=cast(float, m.objective) if ok else None,
                        state=TrialState.COMPLETE if ok else TrialState.FAIL, user_attrs=dict(attrs))
