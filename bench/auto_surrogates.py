"""Which surrogate predicts the shared tables' fast configurations: an offline bake-off for ``auto`` (issue 53, item 2).

Why: on the shared A100 table only 2 of 4201 valid configurations reach 0.90 of the optimum and the optimum is a
spike whose one-knob neighbours run at 0.56-0.72 (docs/baselines.md, "The A100 trap"); after 100 evaluations
``auto``'s GP ranks them 415th-1555th. Before changing the search loop, this asks the model question alone: for
training sets of 30, 60 and 100 valid configurations, does any surrogate rank the fast ones higher?

Training sets are drawn two ways: uniformly from the valid (recorded, non-failed) configurations, ``sets`` per size
and table (seed = set number), and as ``auto`` builds them (its first ``size`` proposals in
:func:`bench.auto_tables.drive`'s setting, seeds ``auto_seeds``; a random sample alone can mislead, since auto's
data crowd around its incumbent). Every surrogate is fitted on log time (standardised) and scored on every other
valid configuration: Spearman's rho, the rank of the true best among the predictions (1 = predicted best), the rank
of the best-ranked configuration at >= 0.90 of the optimum, the fraction of the optimum of the predicted top-1 and
the best of the predicted top-5, and how many >= 0.90 configurations are in the predicted top 50. A **ceiling**
asks what a surrogate could do with (nearly) all the data: fitted on every valid configuration except the fast ones
(>= 0.90; the GPs on ``ceiling_gp_rows`` random ones of them), where does it put each fast one?

What it found (bench/results/auto_surrogates.json, _table.md): trees rank the whole table better (Spearman +0.05 to
+0.15 over the GP at every size) but do not rank the fast configurations better at 30-100 samples, on random sets
or on ``auto``'s own (on the A100 seeds that stick, every surrogate puts the two >= 0.90 configurations at rank
270 or lower); even the ceiling predicts A100's optimum at 0.46-0.70 of its speed (the GPs rank it 371st-854th, the
trees 27th-177th). In the search loop (every k-th model step from an extra-trees ensemble, SMAC's EI on the trees'
mean and spread, k = 1, 2, 4, 5, 7, on ordinal or one-hot inputs; or the objective GP on one-hot, one-hot plus
ordinal, or log-pair-product inputs) nothing beat the shipped model: chosen on seeds 100-119, reported on 0-19,
the differences at 100 evaluations were -0.020 [-0.044, +0.004] and -0.013 [-0.037, +0.013] (docs/baselines.md,
"Other surrogates"; the temporary switches are ``bench/results/auto_surrogates_inloop.patch``, the runs
``bench/results/auto_loto_surrogates*.json``).

Surrogates (encodings as in ``auto``'s ``_auto/knobs.py``: ordered knobs by normalised value index, plus the
2-adic alignment of integer sizes; or every knob one-hot; or ordinal plus products of pairs):

- ``gp_ordinal``: Matern-5/2 ARD GP with fitted hyperparameters (scikit-learn's, standing in for ``auto``'s own:
  same kernel and encoding, maximum likelihood without ``auto``'s log-normal length-scale prior);
- ``gp_onehot``: the same GP on one-hot inputs, an ARD Hamming-distance (categorical) kernel;
- ``gp_pairs``: the same GP on the ordinal inputs and their pairwise products (interactions);
- ``gp_logpairs``: the same GP on the ordinal inputs plus, for each pair of integer knobs, the log of the product of
  their values (threads per block, tile sizes: directions an axis-aligned ARD kernel cannot follow);
- ``rf`` / ``et`` / ``rf_onehot``: random forests / extra trees as in SMAC (Hutter, Hoos & Leyton-Brown 2011, §4.3);
- ``gbm``: gradient-boosted trees.

    cpuslot .venv/bin/python -m bench auto_surrogates
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.auto_tables import DEVICES, SharedTable, shared_table
from bench.harness import Benchmark, Context
from searchlab.core.records import FailureMode, Measurement, Result
from searchlab.searchers import AutoSearcher

SURROGATES = ("gp_ordinal", "gp_onehot", "gp_pairs", "gp_logpairs", "rf", "et", "rf_onehot", "gbm")


@dataclass(frozen=True)
class Options:
    sizes: list[int] = field(default_factory=lambda: [30, 60, 100])
    sets: int = 10  # random training sets per (table, size): seeds 0 .. sets-1
    auto_seeds: list[int] = field(default_factory=lambda: list(range(0, 10)))  # auto-built sets, A100 only
    auto_tables: list[str] = field(default_factory=lambda: ["A100"])
    ceiling_gp_rows: int = 600  # the ceiling's GPs are fitted on this many random rows (trees on all of them)
    surrogates: list[str] = field(default_factory=lambda: list(SURROGATES))


def _alignment(values: list[Any]) -> np.ndarray | None:
    """Per value, how many times 2 divides it (normalised), as ``auto`` encodes integer sizes; None if not useful."""
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        return None
    twos = np.array([min((v & -v).bit_length() - 1, 10) for v in values], dtype=float)
    if all(v & (v - 1) == 0 for v in values) or twos.max() == twos.min():
        return None
    return np.asarray((twos - twos.min()) / (twos.max() - twos.min()))


@dataclass(frozen=True)
class Encoded:
    keys: list[tuple[Any, ...]]  # valid configurations (table order)
    y: np.ndarray  # log time
    times: np.ndarray
    ordinal: np.ndarray
    onehot: np.ndarray
    pairs: np.ndarray
    logpairs: np.ndarray


def encode(table: SharedTable) -> Encoded:
    keys = [k for k, t in table.times.items() if t is not None]
    times = np.array([table.times[k] for k in keys], dtype=float)
    ords, hots, logs = [], [], []
    for j in range(len(table.names)):
        values = sorted({k[j] for k in table.times}, key=lambda v: (str(type(v)), v))
        if len(values) < 2:
            continue
        idx = np.array([values.index(k[j]) for k in keys])
        ords.append(idx / (len(values) - 1))
        twos = _alignment(values)
        if twos is not None:
            ords.append(twos[idx])
        hots.append(np.eye(len(values))[idx])
        if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values) and len(values) > 2:
            logs.append(np.log2(np.array([k[j] for k in keys], dtype=float)))
    ordinal = np.stack(ords, axis=1)
    d = ordinal.shape[1]
    products = [ordinal[:, a] * ordinal[:, b] for a in range(d) for b in range(a + 1, d)]
    pairs = np.hstack([ordinal, np.stack(products, axis=1)])
    sums = np.stack([logs[a] + logs[b] for a in range(len(logs)) for b in range(a + 1, len(logs))], axis=1)
    sums = (sums - sums.min(0)) / np.maximum(np.ptp(sums, axis=0), 1e-12)
    return Encoded(keys, np.log(times), times, ordinal, np.hstack(hots), pairs, np.hstack([ordinal, sums]))


def _inputs(enc: Encoded, surrogate: str) -> np.ndarray:
    if surrogate.endswith("onehot"):
        return enc.onehot
    return {"gp_pairs": enc.pairs, "gp_logpairs": enc.logpairs}.get(surrogate, enc.ordinal)


def fit_predict(surrogate: str, x: np.ndarray, y: np.ndarray, xt: np.ndarray, seed: int) -> np.ndarray:
    """Predicted standardised log time at ``xt`` after fitting on (x, y)."""
    ys = (y - y.mean()) / (y.std() or 1.0)
    if surrogate.startswith("gp_"):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        kernel = ConstantKernel(1.0, (0.05, 20.0)) * Matern(np.full(x.shape[1], 0.5), (0.03, 30.0), nu=2.5) \
            + WhiteKernel(1e-3, (1e-6, 0.5))
        gp = GaussianProcessRegressor(kernel, normalize_y=False, random_state=seed).fit(x, ys)
        return np.asarray(gp.predict(xt))
    if surrogate in ("rf", "rf_onehot", "et"):
        from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

        cls = ExtraTreesRegressor if surrogate == "et" else RandomForestRegressor
        forest = cls(n_estimators=100, min_samples_split=3, max_features=0.83, random_state=seed).fit(x, ys)
        return np.asarray(forest.predict(xt))
    if surrogate == "gbm":
        from sklearn.ensemble import GradientBoostingRegressor

        return np.asarray(GradientBoostingRegressor(n_estimators=150, max_depth=3, learning_rate=0.1, subsample=0.8,
                                                    random_state=seed).fit(x, ys).predict(xt))
    raise ValueError(surrogate)


def score(pred: np.ndarray, times: np.ndarray, optimum: float) -> dict[str, float | None]:
    """Spearman's rho of prediction against log time, the true best's rank among the predictions, and the fraction
    of the optimum of the predicted top-1 and the best of the predicted top-5 (over the held-out rows)."""
    from scipy.stats import spearmanr

    order = np.argsort(pred)
    best = int(np.argmin(times))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    good = optimum / times >= 0.9
    return {"spearman": float(spearmanr(pred, times)[0]), "best_rank": int(rank[best]),
            "good_rank": int(rank[good].min()) if good.any() else None,
            "top1": float(optimum / times[order[0]]), "top5": float(optimum / times[order[:5]].min()),
            "good_in_top50": int((optimum / times[order[:50]] >= 0.9).sum())}


def auto_rows(table: SharedTable, enc: Encoded, seed: int, size: int) -> list[int]:
    """The valid rows among ``auto``'s first ``size`` proposals (what its model was fitted on)."""
    row = {k: i for i, k in enumerate(enc.keys)}
    searcher = AutoSearcher(table.space, seed=seed)
    searcher.set_budget(size)
    rows = []
    for _ in range(size):
        asked = searcher.ask(1)
        if not asked:
            break
        key = tuple(asked[0].config[n] for n in table.names)
        value = table.times[key]
        m = Measurement.ok(value) if value is not None else Measurement.failed(FailureMode.RUNTIME, "recorded")
        searcher.tell(Result(asked[0], m))
        if value is not None:
            rows.append(row[key])
    return rows


def _evaluate(enc: Encoded, train: list[int], surrogates: list[str], seed: int, optimum: float) -> dict[str, Any]:
    test = np.setdiff1d(np.arange(len(enc.keys)), train)
    out: dict[str, Any] = {"train_best": float(optimum / enc.times[train].min())}
    for s in surrogates:
        x = _inputs(enc, s)
        pred = fit_predict(s, x[train], enc.y[train], x[test], seed)
        out[s] = score(pred, enc.times[test], optimum)
    return out


def summarise(rows: list[dict[str, Any]], surrogates: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in surrogates:
        got = [r[s] for r in rows]
        out[s] = {m: float(np.mean([g[m] for g in got])) for m in got[0] if m != "good_rank"}
        out[s]["best_rank_median"] = float(np.median([g["best_rank"] for g in got]))
        ranks = [g["good_rank"] for g in got if g["good_rank"] is not None]
        out[s]["good_rank_median"] = float(np.median(ranks)) if ranks else None
        out[s]["good_rank_sets"] = len(ranks)
    return out


def ceiling(enc: Encoded, surrogates: list[str], optimum: float, gp_rows: int, seed: int) -> dict[str, Any]:
    """The best any surrogate could do here: fitted on every valid configuration except the fast ones (>= 0.90 of the
    optimum), where does it put each fast one? Its predicted time's rank among the true times of all the others
    (1: predicted faster than every one of them), and its predicted fraction of the optimum."""
    fast = np.flatnonzero(optimum / enc.times >= 0.9)
    rest = np.setdiff1d(np.arange(len(enc.keys)), fast)
    out: dict[str, Any] = {"fast": [float(optimum / enc.times[i]) for i in fast]}
    for s in surrogates:
        train = rest
        if s.startswith("gp_") and len(rest) > gp_rows:
            train = np.sort(np.random.default_rng(seed).choice(rest, gp_rows, replace=False))
        x = _inputs(enc, s)
        y = enc.y[train]
        pred = fit_predict(s, x[train], y, x[fast], seed) * (y.std() or 1.0) + y.mean()
        out[s] = [{"rank": int((enc.y[rest] < p).sum()) + 1, "predicted_fraction": float(optimum / math.exp(p))}
                  for p in pred]
    return out


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    results: dict[str, Any] = {"random": {}, "auto_built": {}, "ceiling": {}}
    for device in DEVICES:
        table = shared_table(device)
        results["ceiling"][device] = ceiling(encode(table), opts.surrogates, table.optimum, opts.ceiling_gp_rows, 0)
        ctx.log(f"{device} ceiling: fast ones' predicted ranks " + ", ".join(
            f"{s} {[r['rank'] for r in results['ceiling'][device][s]]}" for s in opts.surrogates))
    for device in DEVICES:
        table = shared_table(device)
        enc = encode(table)
        for size in opts.sizes:
            rows = []
            for k in ctx.used_seeds(range(opts.sets)):
                train = np.random.default_rng(k).choice(len(enc.keys), size, replace=False).tolist()
                rows.append(_evaluate(enc, train, opts.surrogates, k, table.optimum))
            results["random"][f"{device}|{size}"] = {"summary": summarise(rows, opts.surrogates), "sets": rows}
            ctx.log(f"{device} random {size}: " + ", ".join(
                f"{s} rho {results['random'][f'{device}|{size}']['summary'][s]['spearman']:.2f}"
                for s in opts.surrogates))
    for device in opts.auto_tables:
        table = shared_table(device)
        enc = encode(table)
        for size in opts.sizes:
            rows = []
            for seed in ctx.used_seeds(opts.auto_seeds):
                train = auto_rows(table, enc, seed, size)
                rows.append({"seed": seed, **_evaluate(enc, train, opts.surrogates, seed, table.optimum)})
            results["auto_built"][f"{device}|{size}"] = {"summary": summarise(rows, opts.surrogates), "sets": rows}
            ctx.log(f"{device} auto-built {size}: " + ", ".join(
                f"{s} rank {results['auto_built'][f'{device}|{size}']['summary'][s]['best_rank_median']:.0f}"
                for s in opts.surrogates))
    return results


def _rank(m: dict[str, Any]) -> str:
    return "-" if m.get("good_rank_median") is None else f"{m['good_rank_median']:.0f} ({m['good_rank_sets']})"


def report(ctx: Context, results: Any) -> None:
    lines = ["| set | table | n | surrogate | Spearman | best's rank (median) | best-ranked >=0.9 config's rank (median, "
             "sets) | top-1 | top-5 | >=0.9 in top 50 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for kind in ("random", "auto_built"):
        for key, cell in results[kind].items():
            device, size = key.split("|")
            for s, m in cell["summary"].items():
                lines.append(f"| {kind} | {device} | {size} | {s} | {m['spearman']:.2f} | {m['best_rank_median']:.0f} | "
                             f"{_rank(m)} | {m['top1']:.3f} | {m['top5']:.3f} | {m['good_in_top50']:.1f} |")
    lines += ["", "Ceiling (fitted on every valid configuration but the >= 0.90 ones): each fast configuration's "
              "predicted rank among the others (its true fraction of the optimum in brackets)", "",
              "| table | surrogate | predicted ranks |", "|---|---|---|"]
    for device, cell in results.get("ceiling", {}).items():
        for s, got in cell.items():
            if s != "fast":
                lines.append(f"| {device} | {s} | " + ", ".join(
                    f"{r['rank']} ({f:.2f})" for r, f in zip(got, cell["fast"])) + " |")
    path = ctx.artefact("_table.md")
    path.write_text("\n".join(lines) + "\n")
    ctx.log(f"wrote {path}")
    if not ctx.quiet:
        print("\n".join(lines))


BENCHMARK = Benchmark("auto_surrogates", "which surrogate ranks the shared tables' fast configurations best, on random "
                      "and auto-built training sets of 30/60/100 (issue 53, item 2)", Options, run, report,
                      cited_by=("docs/baselines.md",))
