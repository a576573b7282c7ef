"""``auto``'s time per trial inside Optuna and Ray Tune, beside the tools' own samplers (issue 47, the speed item).

What is timed: the sampler's own work per trial. For Optuna, one ``study.optimize`` trial with a trivial objective
(so a trial's wall time is the sampler's ``sample_relative``/``sample_independent`` plus Optuna's bookkeeping); for
Ray Tune, one ``suggest`` plus one ``on_trial_complete`` on the searcher object, driven as Tune drives it but without
a ``Tuner`` (a Tuner adds seconds of Ray's own per-trial scheduling that no searcher changes). The first relative
trial builds ``auto``'s candidate set and is inside the numbers (it is the p90/max when it is slow).

Spaces: 10 and 30 float parameters in [-5, 5] (a shifted sphere), and one integer in [0, 10^5] and in [0, 10^6].
Peers: Optuna's ``TPESampler``; for Tune its default ``BasicVariantGenerator`` (random) and ``OptunaSearch`` (TPE).
Per (tool, space, sampler): median and p90 of the per-trial times over ``--trials`` trials x ``--seeds`` seeds, and
for ``auto`` the fallbacks it recorded (``AutoSearcher.notes``).

    cpuslot --exclusive .venv/bin/python -m bench integration_speed [--trials 30] [--seeds 3]

Writes ``bench/results/integration_speed.json`` (the harness's schema, bench/harness.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.harness import Benchmark, Context

LIMIT_S = 0.5
SPACES = {"10 floats": ("float", 10), "30 floats": ("float", 30), "int 0..1e5": ("int", 10**5),
          "int 0..1e6": ("int", 10**6)}


def _value(params: dict[str, Any]) -> float:
    return float(sum((float(v) - 1.0) ** 2 for v in params.values()))


def optuna_times(space: str, sampler: str, seed: int, trials: int) -> tuple[list[float], list[str]]:
    import optuna

    from searchlab.integrations.optuna import Sampler

    kind, size = SPACES[space]
    made: Any = Sampler("auto", seed=seed) if sampler == "auto" else optuna.samplers.TPESampler(seed=seed)
    study = optuna.create_study(sampler=made)

    def objective(trial: Any) -> float:
        if kind == "int":
            return _value({"x": trial.suggest_int("x", 0, size)})
        return _value({f"x{i:02d}": trial.suggest_float(f"x{i:02d}", -5, 5) for i in range(size)})

    times: list[float] = []
    for _ in range(trials):
        t0 = time.perf_counter()
        study.optimize(objective, n_trials=1)
        times.append(time.perf_counter() - t0)
    notes = list(made._relative.driver.searcher.notes) if sampler == "auto" and made._relative else []
    return times, notes


def tune_times(space: str, sampler: str, seed: int, trials: int) -> tuple[list[float], list[str]]:
    from ray import tune

    kind, size = SPACES[space]
    params = {"x": tune.randint(0, size + 1)} if kind == "int" else {
        f"x{i:02d}": tune.uniform(-5, 5) for i in range(size)}
    searcher: Any
    if sampler == "auto":
        from searchlab.integrations.tune import Searcher

        searcher = Searcher("auto", metric="loss", mode="min", seed=seed, space=params)
    elif sampler == "OptunaSearch":
        from ray.tune.search.optuna import OptunaSearch

        searcher = OptunaSearch(space=OptunaSearch.convert_search_space(params), metric="loss", mode="min", seed=seed)
    else:
        searcher = _Basic(seed, params)
    times: list[float] = []
    for i in range(trials):
        t0 = time.perf_counter()
        config = searcher.suggest(f"t{i}")
        searcher.on_trial_complete(f"t{i}", {"loss": _value({k: config[k] for k in params})})
        times.append(time.perf_counter() - t0)
    notes = list(searcher.driver.searcher.notes) if sampler == "auto" else []
    return times, notes


class _Basic:
    """Tune's default search (``BasicVariantGenerator``: random variants, ``generate_variants``) behind the same
    suggest/complete calls."""

    def __init__(self, seed: int, params: dict[str, Any]) -> None:
        self.params, self.rng = params, np.random.default_rng(seed)

    def suggest(self, trial_id: str) -> dict[str, Any]:
        from ray.tune.search.variant_generator import generate_variants

        _, config = next(generate_variants({"config": self.params}, random_state=int(self.rng.integers(2**31))))
        out: dict[str, Any] = config["config"]
        return out

    def on_trial_complete(self, trial_id: str, result: dict[str, Any]) -> None:
        return None


def _summary(times: list[float], notes: set[str]) -> dict[str, Any]:
    arr = np.asarray(times)
    median, p90 = float(np.median(arr)), float(np.percentile(arr, 90))
    verdict = "within 0.5 s" if p90 <= LIMIT_S else ("recorded fallback" if notes else "too slow")
    return {"median_s": round(median, 4), "p90_s": round(p90, 4), "max_s": round(float(arr.max()), 4),
            "trials": len(times), "verdict": verdict, "fallbacks": sorted(notes)}


@dataclass(frozen=True)
class Options:
    trials: int = 30
    seeds: int = 3


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    runs: dict[str, Callable[..., tuple[list[float], list[str]]]] = {"optuna": optuna_times, "tune": tune_times}
    peers = {"optuna": ["auto", "TPESampler"], "tune": ["auto", "BasicVariantGenerator", "OptunaSearch"]}
    rows: list[dict[str, Any]] = []
    seeds = ctx.used_seeds(range(opts.seeds))
    for tool, timed in runs.items():
        for space in SPACES:
            for sampler in peers[tool]:
                times: list[float] = []
                notes: set[str] = set()
                for seed in seeds:
                    t, n = timed(space, sampler, seed, opts.trials)
                    times += t
                    notes |= set(n)
                row = {"tool": tool, "space": space, "sampler": sampler, "seeds": seeds, **_summary(times, notes)}
                rows.append(row)
                ctx.log(f"{tool:6} {space:11} {sampler:22} median {row['median_s']:.4f} s  p90 {row['p90_s']:.4f} s  "
                        f"max {row['max_s']:.3f} s  {row['verdict']}")
    return {"limit_s": LIMIT_S, "trials": opts.trials, "rows": rows}


BENCHMARK = Benchmark("integration_speed", "auto's time per trial inside Optuna and Ray Tune beside the tools' own "
                      "samplers (issue 47)", Options, run, cited_by=("docs/integrations.md",))
