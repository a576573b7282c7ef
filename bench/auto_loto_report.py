"""Leave-one-table-out choice of ``auto``'s settings and its report (``bench/auto_loto.py``).

A fold holds one table out: the setting with the highest mean fraction of the optimum on the
grid runs of the other three (mean over their seeds and the checkpoints the grid reached) is
chosen, and the held-out table is reported with it on seeds 0-19 at 220 evaluations: the
stored ``ours:auto`` runs (``peers_auto.json``) where the choice is the current default, else
the ``heldout`` runs. The four held-out tables together form the row ``ours:auto_loto``
(``bench/results/peers22_auto_loto.json``), which ``bench/peers.py --merge`` compares with
every peer: ``auto`` as it would have been chosen on spaces other than the one it is ranked on.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from auto_loto import CHECKPOINTS, DEFAULTS, OUT, TABLES, label, settings

REPORT_SEEDS = range(0, 20)  # at most; a non-default choice reports the seeds its held-out runs have
REPORT_BUDGET = 220


def _lines(name: str) -> list[dict[str, Any]]:
    path = OUT / name
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def grid_scores() -> tuple[dict[str, dict[str, float]], list[int]]:
    """Setting -> table -> mean fraction over the seeds every setting completed on every table."""
    lines = _lines("auto_loto_grid.jsonl")
    labels = [label(s) for s in settings()]
    have = defaultdict(set)
    for r in lines:
        have[r["seed"]].add((r["setting"], r["table"]))
    seeds = sorted(s for s, done in have.items() if len(done) == len(labels) * len(TABLES))
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in lines:
        if r["seed"] in seeds:
            values[r["setting"]][r["table"]].append(float(np.mean(r["fractions"])))
    return {s: {t: float(np.mean(v)) for t, v in per.items()} for s, per in values.items()}, seeds


def choose(scores: dict[str, dict[str, float]], held: str, default: str = "") -> tuple[str, dict[str, float]]:
    """The setting with the highest mean score over the tables other than ``held``, and every
    setting's training score. A tie goes to the setting that keeps most of ``default``'s options
    (no change without evidence: on tables without failures ``min_feasibility`` changes nothing),
    then to the first label in sorted order."""
    train = {s: float(np.mean([v for t, v in per.items() if t != held])) for s, per in scores.items()}
    keep = set(default.split(","))
    return max(sorted(train), key=lambda s: (round(train[s], 9), len(keep & set(s.split(","))))), train


def choices() -> dict[str, dict[str, Any]]:
    """Held-out table -> the setting chosen on the other three, with its training score and the default's."""
    scores, seeds = grid_scores()
    if not seeds:
        raise SystemExit("bench/auto_loto.py: no grid seed is complete (run the grid phase first)")
    out = {}
    for held in (t.name for t in TABLES):
        chosen, train = choose(scores, held, label(DEFAULTS))
        out[held] = {"chosen": chosen, "train_score": train[chosen], "default_train_score": train[label(DEFAULTS)],
                     "is_default": chosen == label(DEFAULTS), "grid_seeds": seeds, "held_out_score": scores[chosen][held],
                     "default_held_out_score": scores[label(DEFAULTS)][held]}
    return out


def heldout_jobs(n_seeds: int) -> list[tuple[dict[str, Any], Path, int]]:
    by_label = {label(s): s for s in settings()}
    picked = choices()
    return [(by_label[c["chosen"]], t, seed) for t in TABLES for seed in range(n_seeds)
            if not (c := picked[t.name])["is_default"]]


def _default_runs() -> dict[str, list[list[float]]]:
    row = json.loads((OUT / "peers_auto.json").read_text())["results"]["ours:auto"]
    assert int(row.get("first_seed", 0)) == 0
    return {t: [list(v) for v in per_seed][:len(REPORT_SEEDS)] for t, per_seed in row["runs"].items()}


def _paired(d: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    from searchlab.study.analysis.stats import wilcoxon_pair

    boot = [float(d[rng.integers(0, len(d), len(d))].mean()) for _ in range(2000)]
    p = wilcoxon_pair(d, np.zeros_like(d))[1] if np.any(d != 0) else 1.0
    return {"mean_difference": float(d.mean()), "ci95": [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))],
            "p": float(p), "pairs": len(d)}


def grid_heldout() -> dict[str, Any]:
    """Each fold's chosen setting minus the defaults on its held-out table, paired on the grid's own
    runs (its seeds, its budget): available as soon as the grid is, before any ``heldout`` run."""
    picked, lines = choices(), _lines("auto_loto_grid.jsonl")
    runs = {(r["setting"], r["table"], r["seed"]): r["fractions"] for r in lines}
    seeds = next(iter(picked.values()))["grid_seeds"]
    pairs = [(runs[(c["chosen"], t, s)], runs[(label(DEFAULTS), t, s)]) for t, c in picked.items() for s in seeds]
    rng = np.random.default_rng(3)
    width = min(len(a) for a, _ in pairs)
    return {f"@{c}": _paired(np.array([a[i] - b[i] for a, b in pairs]), rng) for i, c in enumerate(CHECKPOINTS[:width])}


def report() -> None:
    picked, default = choices(), _default_runs()
    held = defaultdict(dict)
    for r in _lines("auto_loto_heldout.jsonl"):
        held[(r["setting"], r["table"])][r["seed"]] = r["fractions"]
    n = len(REPORT_SEEDS)
    for table, c in picked.items():
        if not c["is_default"]:
            runs = held.get((c["chosen"], table), {})
            n = min(n, next((s for s in REPORT_SEEDS if s not in runs), len(REPORT_SEEDS)))
    if n == 0:
        raise SystemExit("bench/auto_loto.py: a fold chose a non-default setting and has no held-out runs (run heldout)")
    loto = {t: (default[t] if c["is_default"] else [held[(c["chosen"], t)][s] for s in range(n)])[:n]
            for t, c in picked.items()}
    default = {t: v[:n] for t, v in default.items()}
    rng = np.random.default_rng(2)
    at = [c for c in CHECKPOINTS if c <= REPORT_BUDGET]
    vs_default = {}
    for i, c in enumerate(at):
        d = np.array([loto[t][s][i] - default[t][s][i] for t in loto for s in range(n)])
        vs_default[f"@{c}"] = _paired(d, rng)
    frac = np.array([v for per in loto.values() for v in per])
    rows = {f"@{c}": _stats(frac[:, i], rng) for i, c in enumerate(at)}
    row = {**rows, "runs": loto, "first_seed": 0, "counting": "hidden", "folds": picked,
           "methodology_score": {}, "mean_curve": []}  # per-run values at the checkpoints only
    meta = {"grid": "bench/results/auto_loto_grid.jsonl", "defaults": label(DEFAULTS), "report_seeds": n,
            "budget": REPORT_BUDGET, "counting": "hidden"}
    result = {"meta": meta,
              "folds": picked, "loto_minus_default": vs_default,
              "grid_loto_minus_default": grid_heldout(), "results": {"ours:auto_loto": row}}
    (OUT / "peers22_auto_loto.json").write_text(json.dumps(result, indent=1))
    for table, c in picked.items():
        print(f"{table}: chosen on the other three {c['chosen']} (train {c['train_score']:.3f}, default "
              f"{c['default_train_score']:.3f}); held-out grid score {c['held_out_score']:.3f} "
              f"vs default {c['default_held_out_score']:.3f}")
    for k, v in result["grid_loto_minus_default"].items():
        print(f"grid runs: loto - default {k}: {v['mean_difference']:+.4f} "
              f"[{v['ci95'][0]:+.4f}, {v['ci95'][1]:+.4f}] p={v['p']:.3g}")
    for k, v in vs_default.items():
        print(f"loto - default {k}: {v['mean_difference']:+.4f} [{v['ci95'][0]:+.4f}, {v['ci95'][1]:+.4f}] p={v['p']:.3g}")


def _stats(fractions: np.ndarray, rng: np.random.Generator) -> dict[str, object]:
    means = [float(np.mean(rng.choice(fractions, len(fractions)))) for _ in range(2000)]
    return {"mean": float(np.mean(fractions)), "median": float(np.median(fractions)),
            "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]}
