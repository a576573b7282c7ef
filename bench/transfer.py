"""Transfer across devices, leave one device out (issue 25): the study and its report, one command.

Runs ``python -m searchlab.study study=transfer_lodo`` (each of the four shared convolution tables tuned with the
other three as ``prior=``; up to 7 searchers x 20 seeds x 100 evaluations, replayed with recorded-sample noise,
a run directory per cell) into ``--study-dir``: the baselines in one study (``<dir>/grid``), ``transfer`` in one
study per ``searcher.front`` that the held-out devices' folds chose on the other three tables (the
``transfer_select`` benchmark; ``<dir>/transfer_front<K>``). It then reports per held-out device and searcher
the mean fraction of the optimum after 5/10/20/50/100 evaluations with 95 % percentile-bootstrap intervals over
seeds, paired Wilcoxon signed-rank tests against cold ``auto`` (Holm over the four devices, per searcher and
budget), the issue's goals for ``searcher=transfer``, and the cases where a transfer method is significantly
worse than cold ``auto``. A run's fraction at n is the table optimum over the *recorded table value* of the best
configuration among its first n evaluations (noise-free), so replay noise does not inflate it.

Issue 38 adds: ``searcher=transfer`` against the zero-shot ranking (``transfer_topk``) after 10, 20 and 100
evaluations (paired differences with 95 % bootstrap intervals and Wilcoxon tests, Holm over the four devices per
budget) and, from each ``transfer`` run's ``summary.json`` (``priors``), how often cold ``auto`` took over and
which tables were dropped. Re-running into the same ``--study-dir`` keeps finished runs (the study resumes);
``--report-only`` re-reads them. The report is the markdown (``<out>.md``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import KT_DATA, REPO, RESULTS, searchlab_cli
from bench.harness import Benchmark, Context

DEVICES = ("A100", "A4000", "MI250X", "W6600")
SEARCHERS = ("transfer", "transfer_topk", "transfer_warm", "transfer_prune", "transfer_gp", "auto", "random")
BUDGETS = (5, 10, 20, 50, 100)
ALPHA = 0.05
ZERO_SHOT = "transfer_topk"
VERSUS_ZERO_SHOT = (10, 20, 100)


@dataclass(frozen=True)
class Options:
    study_dir: str = str(REPO / "outputs" / "study" / "transfer_lodo")
    seeds: int = 20
    only: tuple[str, ...] = ()  # searcher labels to run (default: all)
    workers: int = 2  # the study's replay workers (one per core)
    fronts: str = str(RESULTS / "transfer_select.json")  # each held-out device's front, chosen on the other three
    report_only: bool = False


def run_study(ctx: Context, out: Path, o: Options, searchers: list[str], devices: list[str],
              extra: tuple[str, ...] = ()) -> None:
    args = ["study=transfer_lodo", f"seeds={o.seeds}", f"workers={o.workers}"]
    args += [f"~searchers.{s}" for s in SEARCHERS if s not in searchers]
    args += [f"~problems.{d}" for d in DEVICES if d not in devices]
    ctx.log(f"study into {out}: {', '.join(searchers)} on {', '.join(devices)}")
    searchlab_cli([*args, *extra, "--out", str(out)], module="searchlab.study")


def fold_fronts(path: Path) -> dict[str, int]:
    """Each held-out device's ``front``, chosen on the other three tables (the transfer_select benchmark)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    folds = (data.get("results") or data)["folds"]  # this schema, or the historical layout
    return {d: int(f["chosen_front"]) for d, f in folds.items()}


def run_all(ctx: Context, out: Path, o: Options, fronts: dict[str, int]) -> None:
    """The cold and baseline searchers in one study (``out/grid``); ``transfer`` in one study per chosen
    ``front`` over the devices whose fold chose it (``out/transfer_front<K>``)."""
    others = [s for s in SEARCHERS if s != "transfer" and (not o.only or s in o.only)]
    if others:
        run_study(ctx, out / "grid", o, others, list(DEVICES))
    if not o.only or "transfer" in o.only:
        for front in sorted(set(fronts.values())) or [0]:
            devices = [d for d in DEVICES if fronts.get(d, 0) == front]
            extra = (f'searchers.transfer=["searcher=transfer","searcher.front={front}"]',) if front else ()
            run_study(ctx, out / (f"transfer_front{front}" if front else "transfer"), o, ["transfer"], devices, extra)


def run_dirs(out: Path, device: str, searcher: str = "*") -> list[Path]:
    """Run directories of ``device`` (and ``searcher``) in ``out`` or in its per-study subdirectories."""
    return sorted([*out.glob(f"runs/{device}/{searcher}/seed_*"), *out.glob(f"*/runs/{device}/{searcher}/seed_*")])


def curves(out: Path, budget: int) -> dict[tuple[str, str], dict[int, np.ndarray]]:
    """(device, searcher) -> seed -> fraction-of-optimum curve (noise-free table values)."""
    from searchlab.core.store import read_run
    from searchlab.interchange.kt_cache import load_kernel_tuner_cache

    found: dict[tuple[str, str], dict[int, np.ndarray]] = {}
    for device in DEVICES:
        table = load_kernel_tuner_cache(KT_DATA / f"convolution_{device}.json.gz")
        value = {c: m.objective for c, m in table.rows.items() if m.objective is not None}
        optimum = min(value.values())
        for run_dir in run_dirs(out, device):
            if not (run_dir / "summary.json").is_file():
                continue
            info, results = read_run(run_dir)
            best, curve = math.inf, []
            for r in results[:budget]:
                best = min(best, value.get(r.config, math.inf))
                curve.append(optimum / best if math.isfinite(best) else 0.0)
            curve += [curve[-1] if curve else 0.0] * (budget - len(curve))
            found.setdefault((device, run_dir.parent.name), {})[int(info["seed"])] = np.array(curve)
    return found


def paired(found: dict[tuple[str, str], dict[int, np.ndarray]], searcher: str, other: str,
           budgets: tuple[int, ...]) -> list[dict[str, Any]]:
    """``searcher`` minus ``other`` on the same seeds: mean difference with its 95 % bootstrap
    interval, Wilcoxon signed-rank p, Holm over the devices per budget."""
    from searchlab.study.analysis.stats import bootstrap_band, holm, wilcoxon_pair

    rows: list[dict[str, Any]] = []
    for b in budgets:
        raw: list[dict[str, Any]] = []
        for device in DEVICES:
            a, c = found.get((device, searcher), {}), found.get((device, other), {})
            seeds = sorted(set(a) & set(c))
            if not seeds:
                continue
            x, y = np.array([a[s][b - 1] for s in seeds]), np.array([c[s][b - 1] for s in seeds])
            _, lo, hi = bootstrap_band((x - y)[:, None])
            raw.append({"searcher": searcher, "versus": other, "device": device, "budget": b, "pairs": len(seeds),
                        "mean": round(float(x.mean()), 4), "versus_mean": round(float(y.mean()), 4),
                        "mean_diff": round(float((x - y).mean()), 4), "diff_lo": round(float(lo[0]), 4),
                        "diff_hi": round(float(hi[0]), 4), "p": wilcoxon_pair(x, y)[1]})
        for row, padj in zip(raw, holm([r["p"] for r in raw])):
            row["p_holm"] = padj
            row["verdict"] = ("no difference" if not padj < ALPHA else
                              "better" if row["mean_diff"] > 0 else "WORSE")
            rows.append(row)
    return rows


def summarise(found: dict[tuple[str, str], dict[int, np.ndarray]]) -> dict[str, Any]:
    from searchlab.study.analysis.stats import bootstrap_band

    cells: dict[str, dict[str, Any]] = {}
    for (device, searcher), runs in sorted(found.items()):
        matrix = np.array([runs[s] for s in sorted(runs)])
        mean, lo, hi = bootstrap_band(matrix)
        cells[f"{device}/{searcher}"] = {"device": device, "searcher": searcher, "seeds": len(runs), **{
            str(b): {"mean": round(float(mean[b - 1]), 4), "lo": round(float(lo[b - 1]), 4),
                     "hi": round(float(hi[b - 1]), 4)} for b in BUDGETS if b <= matrix.shape[1]}}
    tests = [t for s in sorted({s for _, s in found} - {"auto"}) for t in paired(found, s, "auto", BUDGETS)]
    versus_zero_shot = paired(found, "transfer", ZERO_SHOT, VERSUS_ZERO_SHOT)
    goals = [{"device": t["device"], "budget": t["budget"], "goal": "at least the zero-shot ranking",
              "transfer": t["mean"], "zero_shot": t["versus_mean"], "diff": [t["mean_diff"], t["diff_lo"], t["diff_hi"]],
              "p_holm": t["p_holm"], "met": t["mean"] >= t["versus_mean"]} for t in versus_zero_shot]
    for device in DEVICES:
        worse = [t for t in tests if t["searcher"] == "transfer" and t["device"] == device and t["verdict"] == "WORSE"]
        goals.append({"device": device, "budget": "5-100", "goal": "never significantly worse than cold auto",
                      "met": any(t["searcher"] == "transfer" and t["device"] == device for t in tests) and not worse})
    hurts = [t for t in tests if t["verdict"] == "WORSE"]
    return {"cells": cells, "tests_vs_auto": tests, "versus_zero_shot": versus_zero_shot, "goals": goals,
            "transfer_hurts": hurts}


def decisions(out: Path) -> dict[str, Any]:
    """What each ``transfer`` run recorded about its priors (summary.json's ``priors``), per device."""
    found: dict[str, Any] = {}
    for device in DEVICES:
        runs = [json.loads((p / "summary.json").read_text()).get("priors") for p in run_dirs(out, device, "transfer")
                if (p / "summary.json").is_file()]
        runs = [r for r in runs if r]
        if not runs:
            continue
        names = [Path(t["source"]).name for t in runs[0]["tables"]]
        found[device] = {
            "runs": len(runs), "cold_auto": sum(bool(r["cold_auto"]) for r in runs),
            "fell_back_at": [r["fell_back_at"] for r in runs if r["cold_auto"]],
            "dropped": {n: sum(not r["tables"][i]["used"] for r in runs) for i, n in enumerate(names)},
            "mean_weight": {n: round(float(np.mean([r["tables"][i]["weight"] for r in runs])), 3)
                            for i, n in enumerate(names)}}
    return found


def markdown(report: Mapping[str, Any]) -> str:
    cells = report["cells"]
    fronts = report.get("fold_fronts") or {}
    lines = [f"`searcher.front` per held-out device, chosen on the other three tables: {fronts or 'the default'}", ""]
    lines += ["| device | searcher | seeds | " + " | ".join(f"after {b}" for b in BUDGETS) + " |",
             "|---|---|---|" + "---|" * len(BUDGETS)]
    for device in DEVICES:
        for searcher in SEARCHERS:
            cell = cells.get(f"{device}/{searcher}")
            if cell is None:
                continue
            vals = [cell.get(str(b)) for b in BUDGETS]
            text = [f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]" if isinstance(v, dict) else "" for v in vals]
            lines.append(f"| {device} | {searcher} | {cell['seeds']} | " + " | ".join(text) + " |")
    lines += ["", "`transfer` against the zero-shot ranking (`transfer_topk`), paired over seeds (difference: mean "
              "[95 % bootstrap CI]; Wilcoxon, Holm over devices per budget):", "",
              "| device | after | transfer | zero-shot | difference | p_holm | at least zero-shot |",
              "|---|---|---|---|---|---|---|"]
    for g in report["goals"]:
        if "zero_shot" in g:
            d = g["diff"]
            lines.append(f"| {g['device']} | {g['budget']} | {g['transfer']:.3f} | {g['zero_shot']:.3f} | "
                         f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}] | {g['p_holm']:.2g} | {'yes' if g['met'] else 'NO'} |")
    lines += [""] + [f"- {g['device']}: {g['goal']}: {'yes' if g['met'] else 'NO'}" for g in report["goals"]
                     if "zero_shot" not in g]
    lines += ["", "Significantly different from cold `auto` (Wilcoxon signed-rank, Holm over devices, p < 0.05):", ""]
    for t in report["tests_vs_auto"]:
        if t["verdict"] != "no difference":
            lines.append(f"- {t['searcher']} on {t['device']} after {t['budget']}: {t['verdict']} than auto "
                         f"(mean difference {t['mean_diff']:+.3f} [{t['diff_lo']:+.3f}, {t['diff_hi']:+.3f}], "
                         f"p_holm = {t['p_holm']:.2g}, {t['pairs']} pairs)")
    lines += ["", "Recorded by each `transfer` run (summary.json `priors`):", ""]
    for device, d in report.get("decisions", {}).items():
        lines.append(f"- {device}: cold auto took over in {d['cold_auto']} of {d['runs']} runs {d['fell_back_at'] or ''}; "
                     f"tables dropped {d['dropped']}; mean front weights {d['mean_weight']}")
    return "\n".join(lines) + "\n"


def run(ctx: Context, o: Options) -> dict[str, Any]:
    out = Path(o.study_dir).resolve()
    fronts = fold_fronts(Path(o.fronts))
    ctx.used_seeds(range(o.seeds))
    if not o.report_only:
        run_all(ctx, out, o, fronts)
    report_ = {**summarise(curves(out, max(BUDGETS))), "fold_fronts": fronts, "decisions": decisions(out)}
    return {"study": str(out), "metric": "fraction of optimum (noise-free table value of the best configuration "
            "evaluated so far); intervals: 95 % percentile bootstrap over seeds", **report_}


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    text = markdown(results)
    ctx.artefact(".md").write_text(text, encoding="utf-8")
    print(text)


BENCHMARK = Benchmark("transfer", "transfer across devices, leave one device out on the four convolution tables: "
                      "the study, fraction of optimum with intervals, paired tests against cold auto and the "
                      "zero-shot ranking", Options, run, report, cited_by=("docs/transfer.md",))
