"""Kernel Tuner's strategies beside searchlab's searchers on the shared Kernel Tuner tables (issues 16, 22).

Both sides replay the same four cache files (``../shared/data/kernel_tuner``) and are counted
the same way: **distinct configurations looked up in the table**. Repeats and configurations
the table's restrictions exclude are not counted. ``--counting`` says what a configuration the
cache records as *failed* is, on both sides alike (``bench/peers_kt.py``; only A100 and A4000
record failures, 161 each):

- ``hidden`` (the default, as live): Kernel Tuner 1.5.0 (the ``bench`` extra) runs
  ``tune_kernel(..., simulation_mode=True)`` with a restriction that admits every recorded
  configuration, failed ones included, so its strategies meet the failures; searchlab replays
  ``problem.recorded_failures=hidden``. A failure is a counted look-up.
- ``known`` (Kernel Tuner's simulation mode as shipped, ``tune_cache``: restrictions inferred
  from the entries without an error): the failed configurations are excluded on both sides
  (searchlab: ``problem.recorded_failures=known``).

Kernel Tuner gets ``strategy_options={"max_fevals": B}``; its budget counts distinct cached
configurations visited, which is our count. A strategy stops when that budget is spent or
when it converges on its own (then its curve stays flat to B). searchlab searchers run with
``Budget(evaluations=B)``, which counts measurements (table look-ups), never known-infeasible
proposals (docs/measurement.md).

Reported per searcher: mean and median fraction of the optimum at 20/40/55/100/220 with a
95 % bootstrap interval of the mean over (table, seed) runs, and the Kernel Tuner
methodology score (searchlab/study/analysis/methodology.py) per table.

Every row keeps its per-run fractions at the checkpoints and its mean curve, so a later run
can be merged with a stored one (``--merge STEM``) instead of replaying every peer again; a
searcher run again on the next seeds (``--first-seed 10``) and merged has its two rows joined
into one of 20 seeds per table; a row run on some tables (``--tables A100,A4000``) is completed
from the stored row of the same name on the other tables, for the seeds both hold, where the
two countings coincide (no recorded failure) or the stored row counts alike. A stored row of
the other counting is left out of the report. Rows stored before issue 22 carry no counting:
Kernel Tuner's were ``known``, ours ``hidden``.
With ``--reference NAME`` (e.g. ``ours:auto``) the report compares NAME with every other
row at each checkpoint on the (table, seed) pairs both have: mean difference with a
paired-bootstrap 95 % interval, the Wilcoxon signed-rank p-value with Holm's correction over
the peers (``searchlab.study.analysis.stats``), and whether NAME's mean is the highest.

    .venv/bin/python -m bench peers [--seeds 10] [--first-seed 0] [--budget 220] [--only kt|ours] [--searchers a,b]
                                    [--kt a,b] [--counting hidden|known] [--tables A100,A4000]
                                    [--out bench/results/STEM.json] [--merge STEM] [--only merge] [--reference NAME]

A merged STEM is ``bench/results/STEM.json``, in the harness's schema or as stored before it (rows at the top).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.auto_kt import TABLE_DIR
from bench.harness import RESULTS as OUT
from bench.harness import SCHEMA, Benchmark, Context
from bench.peers_kt import complete, counting_of, failed_tables, kt_run, ours_run

TABLES = sorted(TABLE_DIR.glob("*.json.gz"))
CHECKPOINTS = (20, 40, 55, 100, 220)
FAILED_TABLES = failed_tables(TABLES)  # where the two countings differ (A100, A4000)
KT_STRATEGIES = ("random_sample", "genetic_algorithm", "pso", "simulated_annealing", "dual_annealing", "diff_evo",
                 "greedy_ils", "bayes_opt")
OURS = ("auto", "random", "optuna_tpe", "optuna_cmaes", "optuna_qmc", "dual_annealing", "greedy_ils", "simulated_annealing",
        "genetic", "portfolio", "probabilistic", "tag", "mc", "uct")


def _table_values(table: Path) -> tuple[np.ndarray, float]:
    with gzip.open(table, "rt") as fh:
        data = json.load(fh)
    times = [e.get("time") for e in data["cache"].values()]
    values = np.array([t if isinstance(t, (int, float)) else np.nan for t in times], dtype=float)
    return values, float(np.nanmin(values))


def _pad(curve: list[float], budget: int) -> np.ndarray:
    out = np.full(budget, np.inf)
    out[:len(curve)] = curve
    if curve:
        out[len(curve):] = curve[-1]  # converged or exhausted: its best stays
    return out


def _stats(fractions: np.ndarray, rng: np.random.Generator) -> dict[str, object]:
    means = [float(np.mean(rng.choice(fractions, len(fractions)))) for _ in range(2000)]
    return {"mean": float(np.mean(fractions)), "median": float(np.median(fractions)),
            "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]}


def _tables(spec: str) -> list[Path]:
    wanted = [w for w in spec.split(",") if w]
    return [t for t in TABLES if not wanted or any(w in t.name for w in wanted)]


@dataclass(frozen=True)
class Options:
    seeds: int = 10
    first_seed: int = 0  # seeds first_seed .. first_seed + seeds - 1
    budget: int = 220
    workers: int = 2
    only: str = ""  # "kt" or "ours": one side only; "merge": run nothing, report the --merge rows
    searchers: str = ""  # comma-separated searchlab searchers (default: all of OURS)
    kt: str = ""  # comma-separated Kernel Tuner strategies (default: all of KT_STRATEGIES)
    merge: str = ""  # comma-separated stems under bench/results/ whose rows to add
    reference: str = ""  # row to compare with every other (e.g. ours:auto)
    counting: str = "hidden"  # recorded failures: hidden (met and counted, as live) or known (excluded, as KT's)
    tables: str = ""  # comma-separated parts of table names to run on (default: all four)


def _run_all(side: str, names: tuple[str, ...], seeds: range, args: Options) -> dict[str, dict[str, np.ndarray]]:
    fn: Callable[[tuple[str, str, int, int, str]], list[float]] = kt_run if side == "kt" else ours_run
    budget = args.budget
    jobs = [(str(t), n, s, budget, args.counting) for t in _tables(args.tables) for n in names for s in seeds]
    with ProcessPoolExecutor(args.workers) as pool:
        curves = list(pool.map(fn, jobs, chunksize=1))
    out: dict[str, dict[str, list[np.ndarray]]] = {}
    for (table, name, _seed, _, _), curve in zip(jobs, curves):
        out.setdefault(f"{side}:{name}", {}).setdefault(Path(table).name, []).append(_pad(curve, budget))
    return {k: {t: np.array(v) for t, v in d.items()} for k, d in out.items()}


def run(ctx: Context, args: Options) -> dict[str, Any]:
    if args.only not in ("", "kt", "ours", "merge") or args.counting not in ("hidden", "known"):
        raise SystemExit("python -m bench peers: --only must be kt, ours or merge; --counting hidden or known")
    if not TABLES:
        raise SystemExit(f"python -m bench peers: no Kernel Tuner tables in {TABLE_DIR}")
    start = time.time()
    curves: dict[str, dict[str, np.ndarray]] = {}
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.only in ("", "kt"):
        kt = tuple(n for n in args.kt.split(",") if n) or KT_STRATEGIES
        curves.update(_run_all("kt", kt, seeds, args))
    if args.only in ("", "ours"):
        ours = tuple(n for n in args.searchers.split(",") if n) or OURS
        curves.update(_run_all("ours", ours, seeds, args))
    if args.only != "merge":
        ctx.used_seeds(seeds)
    return report(ctx, curves, args, time.time() - start)


def _rows(curves: dict[str, dict[str, np.ndarray]], args: Options) -> dict[str, dict[str, object]]:
    from searchlab.study.analysis.methodology import methodology_score

    rng = np.random.default_rng(0)
    rows: dict[str, dict[str, object]] = {}
    for name, per_table in sorted(curves.items()):
        fractions, scores, runs = [], {}, {}
        for table, tries in per_table.items():
            values, optimum = _table_values(TABLE_DIR / table)
            fractions.append(optimum / tries)
            best = np.where(np.isfinite(tries), tries, np.nan)
            scores[table] = methodology_score(values, True, best)[0]
            runs[table] = [[round(float(f), 6) for f in row[[c - 1 for c in CHECKPOINTS if c <= args.budget]]]
                           for row in optimum / tries]
        frac = np.vstack(fractions)
        rows[name] = {f"@{c}": _stats(frac[:, c - 1], rng) for c in CHECKPOINTS if c <= args.budget}
        rows[name]["methodology_score"] = scores
        rows[name]["runs"] = runs
        rows[name]["first_seed"] = args.first_seed
        rows[name]["counting"] = args.counting
        rows[name]["mean_curve"] = [round(float(v), 6) for v in frac.mean(0)]
    return rows


def _pairs(row: dict[str, Any], at: int) -> dict[tuple[str, int], float]:
    runs, first = row.get("runs", {}), int(row.get("first_seed", 0))
    assert isinstance(runs, dict)
    return {(table, first + i): values[at] for table, per_seed in runs.items() for i, values in enumerate(per_seed)}


def _seeds(row: dict[str, Any]) -> range:
    first, runs = int(row.get("first_seed", 0)), row.get("runs") or {}
    return range(first, first + len(next(iter(runs.values()), [])))


def _combine(first: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``first`` joined with ``other`` when they hold per-run values of consecutive seed ranges on
    the same tables; otherwise ``first`` as it is (the row listed first wins)."""
    a, b = sorted((first, other), key=lambda r: int(r.get("first_seed", 0)))
    if "runs" not in a or "runs" not in b or _seeds(a).stop != _seeds(b).start or set(a["runs"]) != set(b["runs"]):
        return first
    n_a = len(_seeds(a))
    runs = {t: a["runs"][t] + b["runs"][t] for t in a["runs"]}
    n_b = len(_seeds(b))
    frac = np.array([v for per_seed in runs.values() for v in per_seed])
    rng = np.random.default_rng(0)
    row: dict[str, Any] = {k: _stats(frac[:, i], rng) for i, k in enumerate(k for k in a if k.startswith("@"))}
    row["methodology_score"] = {t: (n_a * a["methodology_score"][t] + n_b * b["methodology_score"][t]) / (n_a + n_b)
                                for t in runs}  # seed-weighted mean of the two ranges' scores
    row["runs"], row["first_seed"] = runs, a.get("first_seed", 0)
    if "counting" in a:
        row["counting"] = a["counting"]
    row["mean_curve"] = [(n_a * x + n_b * y) / (n_a + n_b) for x, y in zip(a["mean_curve"], b["mean_curve"])]
    return row


def _stored_only(ref: dict[str, Any], peer: dict[str, Any]) -> tuple[float, list[float], float]:
    """Difference of means with an unpaired normal-approximation interval and p-value, from the
    two rows' stored means and bootstrap intervals: for a peer stored without per-run values."""
    from scipy.stats import norm

    se = [(row["ci95"][1] - row["ci95"][0]) / (2 * 1.96) for row in (ref, peer)]
    diff, spread = ref["mean"] - peer["mean"], float(np.hypot(*se))
    p = float(2 * norm.sf(abs(diff) / spread)) if spread > 0 else (1.0 if diff == 0 else 0.0)
    return diff, [diff - 1.96 * spread, diff + 1.96 * spread], p


def _against(rows: dict[str, dict[str, Any]], reference: str, at: int, c: int,
             rng: np.random.Generator) -> list[tuple[str, int, float, list[float], float, str]]:
    from searchlab.study.analysis.stats import wilcoxon_pair

    ref = _pairs(rows[reference], at)
    out = []
    for name, row in rows.items():
        if name == reference:
            continue
        other = _pairs(row, at)
        keys = sorted(k for k in ref if k in other)
        if not keys:  # an older stored row: means and intervals only
            diff, ci, p = _stored_only(rows[reference][f"@{c}"], row[f"@{c}"])
            out.append((name, 0, diff, ci, p, "unpaired, normal approximation from the stored intervals"))
            continue
        d = np.array([ref[k] - other[k] for k in keys])
        boot = [float(d[rng.integers(0, len(d), len(d))].mean()) for _ in range(2000)]
        ci = [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))]
        out.append((name, len(d), float(d.mean()), ci, wilcoxon_pair(d, np.zeros_like(d))[1],
                    "paired on (table, seed): bootstrap interval, Wilcoxon signed-rank"))
    return out


def compare(rows: dict[str, dict[str, Any]], reference: str, budget: int) -> dict[str, object]:
    """NAME against every other row at each checkpoint (see the module doc); Holm over the peers."""
    from searchlab.study.analysis.stats import holm

    rng = np.random.default_rng(1)
    out: dict[str, object] = {}
    for at, c in enumerate(c for c in CHECKPOINTS if c <= budget):
        raw = _against(rows, reference, at, c, rng)
        adjusted = holm([p for *_, p, _ in raw])
        peers: dict[str, dict[str, Any]] = {
            name: {"pairs": n, "mean_difference": d, "ci95": ci, "p": p, "p_holm": q, "method": how,
                   "verdict": ("ahead" if d > 0 else "behind") if q < 0.05 else "no difference"}
            for (name, n, d, ci, p, how), q in zip(raw, adjusted)}
        best_peer = max(peers, key=lambda n: rows[n][f"@{c}"]["mean"])
        out[f"@{c}"] = {"best_peer": best_peer, "highest_mean": all(v["mean_difference"] > 0 for v in peers.values()),
                        "against_best_peer": peers[best_peer], "peers": peers}
    return out


def _merge(sources: list[dict[str, Any]], counting: str) -> dict[str, Any]:
    """The rows of ``counting``: rows of one name and counting joined first (the next seeds, or other
    tables), then completed from the other counting's row on the tables without recorded failures."""
    by: dict[tuple[str, str], Any] = {}
    for source in sources:
        for name, row in source.items():
            key = (name, counting_of(name, row))
            if key not in by:
                by[key] = row
            elif set(by[key].get("runs") or ()) == set(row.get("runs") or ()):
                by[key] = _combine(by[key], row)  # extended by the next seeds, or kept
            else:
                by[key] = complete(by[key], row, name, FAILED_TABLES)
    other = "known" if counting == "hidden" else "hidden"
    return {name: complete(row, by[(name, other)], name, FAILED_TABLES) if (name, other) in by else row
            for (name, c), row in sorted(by.items()) if c == counting}


def _stored(stem: str) -> dict[str, Any]:
    """The rows of a stored result: the harness's schema, or the layout before it (rows under "results")."""
    doc = json.loads((OUT / f"{stem}.json").read_text())
    rows: dict[str, Any] = doc["results"]["results"] if doc.get("schema") == SCHEMA else doc["results"]
    return rows


def report(ctx: Context, curves: dict[str, dict[str, np.ndarray]], args: Options, wall: float) -> dict[str, Any]:
    merged = [s for s in args.merge.split(",") if s]
    rows = _merge([_rows(curves, args)] + [_stored(stem) for stem in merged], args.counting)
    meta = {"seeds": args.seeds, "first_seed": args.first_seed, "budget": args.budget,
            "tables": [t.name for t in _tables(args.tables)], "wall_s": round(wall, 1),
            "load_average": os.getloadavg(), "counting": args.counting,
            "counted": "distinct configurations looked up; restricted and repeats not counted",
            "merged_from": merged, "note": "replays: no timing in these numbers; other sessions shared the 2-core machine"}
    result: dict[str, Any] = {"meta": meta, "results": rows}
    if args.reference:
        if args.reference not in rows:
            raise SystemExit(f"python -m bench peers: --reference {args.reference!r} is not among the rows {sorted(rows)}")
        result["comparison"] = {"reference": args.reference, **compare(rows, args.reference, args.budget)}
    _plot(rows, ctx.artefact(".png"))
    for name, row in sorted(rows.items(), key=lambda kv: -kv[1]["@40"]["mean"]):
        cells = "  ".join(f"{k} {v['mean']:.3f} [{v['ci95'][0]:.3f},{v['ci95'][1]:.3f}]"
                          for k, v in row.items() if k.startswith("@"))
        ctx.log(f"{name:28s} {cells}")
    for at, cmp in result.get("comparison", {}).items():
        if at.startswith("@"):
            best = cmp["against_best_peer"]
            ctx.log(f"{args.reference} {at}: vs best peer {cmp['best_peer']}: {best['mean_difference']:+.3f} "
                    f"[{best['ci95'][0]:+.3f}, {best['ci95'][1]:+.3f}], Holm p={best['p_holm']:.3g} ({best['verdict']})")
    return result


def _plot(rows: dict[str, dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for name, row in sorted(rows.items()):
        curve = row.get("mean_curve")
        if isinstance(curve, list):
            ax.plot(np.arange(1, len(curve) + 1), curve, label=name, ls="--" if name.startswith("kt:") else "-",
                    lw=2.5 if name == "ours:auto" else 1.2)
    ax.set_xlabel("distinct configurations looked up")
    ax.set_ylabel("mean fraction of optimum (4 tables x seeds)")
    ax.set_ylim(0.3, 1.0)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Kernel Tuner strategies (dashed) and searchlab searchers on the shared tables")
    fig.tight_layout()
    fig.savefig(path, dpi=110)



BENCHMARK = Benchmark("peers", "Kernel Tuner's strategies beside searchlab's searchers on the shared tables, both "
                      "counted alike (issues 16, 22)", Options, run, cited_by=("docs/baselines.md",))
