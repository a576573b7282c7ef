"""``searchlab reproduce`` against the reference ``autotuning_experiment`` on the same experiment file.

    cpuslot --exclusive .venv/bin/python bench/reproduce.py [--ref-repeats 25] [--out outputs/bench_reproduce]
    .venv/bin/python bench/reproduce.py --only-bootstrap     # the comparison again, from the stored runs

The file is bench/experiments/convolution_milo.json (4 convolution_milo spaces, `auto` through
``custom_search_method_path`` plus 7 Kernel Tuner 1.5 strategies, 25 repeats). Kernel Tuner's simulation mode
reads its own cache format beside the T4 file, which ../shared/data/benchmark_hub does not hold, so both tools
run on one derived copy of the file whose pattern points at a hub copy in --out: the same T4 files (links) plus
Kernel Tuner's caches of the same measurements (../shared/data/kernel_tuner/convolution_*.json.gz).

1. ``searchlab reproduce`` runs the full file (all strategies, 25 repeats).
2. The reference runs the same file (``--ref-repeats`` 25, the default) or a proportional subset of its repeats
   (`auto` only if ``SearchlabOptAlg`` exists in searchlab/integrations/kernel_tuner.py), then once more from its
   cache (its fixed cost: statistics, scoring). Its full time is extrapolated as
   fixed + (subset - fixed) x 25 / ref_repeats.
3. Agreement: (a) the same runs: ``get_strategy_scores`` of our runs (exported in its cache layout) against our
   time-axis score, NumPy seeded alike; (b) different runs: our P against the reference's on both axes, each
   bootstrapped over its own repeats (bench/reproduce_bootstrap.py), the difference's 95 % interval and a
   Holm-corrected p-value (the package's "error" is the spread of P along the cutoff range, not an interval).
4. ``auto`` against every Kernel Tuner strategy, both axes: the package's P bootstrapped over repeats (the
   verdict), and per-repeat P averaged over the spaces with Holm-corrected Wilcoxon tests (a second statistic:
   the package's curve is the median over repeats, so the mean of per-repeat P is not P). Held out per device: the
   `auto` row uses, on each space, the setting chosen on the other three (bench/kt_harness.py ``LOTO``: prior 2.0,
   alignment off; on MI250X alignment on), i.e. strategy ``auto`` on A100/A4000/W6600 and ``auto_mi250x`` on
   MI250X.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
FILE = ROOT / "bench" / "experiments" / "convolution_milo.json"
HELD_OUT = {"A100": "auto", "A4000": "auto", "W6600": "auto", "MI250X": "auto_mi250x"}


def hub(out: Path) -> Path:
    cache = out / "hub" / "cachefiles" / "convolution_milo"
    cache.mkdir(parents=True, exist_ok=True)
    kernels = out / "hub" / "kernels"
    if not kernels.exists():
        kernels.symlink_to(SHARED / "benchmark_hub" / "kernels")
    for gpu in HELD_OUT:
        t4 = cache / f"{gpu}_T4.json"
        if not t4.exists():
            t4.symlink_to(SHARED / "benchmark_hub" / "cachefiles" / "convolution_milo" / f"{gpu}_T4.json")
        kt = cache / f"{gpu}.json"
        if not kt.exists():
            kt.write_bytes(gzip.decompress((SHARED / "kernel_tuner" / f"convolution_{gpu}.json.gz").read_bytes()))
    return out / "hub"


def derived(out: Path, repeats: int | None, parent: Path, drop_auto: bool) -> Path:
    raw = json.loads(FILE.read_text())
    base = hub(out)
    d = raw["experimental_groups_defaults"]
    d["applications"][0]["folder"] = str(base / "kernels")
    d["pattern_for_full_search_space_filenames"]["regex"] = str(base / "cachefiles/${applications}/${gpus}_T4.json")
    raw["parent_folder"] = str(parent)
    if repeats:
        d["repeats"] = repeats
    for s in raw["search_strategies"]:
        if "custom_search_method_path" in s:
            s["custom_search_method_path"] = str(ROOT / s["custom_search_method_path"])
    if drop_auto:
        raw["search_strategies"] = [s for s in raw["search_strategies"] if "custom_search_method_path" not in s]
    path = out / (f"experiment_ref{repeats}.json" if repeats else "experiment.json")
    path.write_text(json.dumps(raw, indent=1))
    return path


def timed(cmd: list[str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("w") as fh:
        subprocess.run(cmd, check=True, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - started


def package_scores(path: Path) -> tuple[dict[str, Any], float]:
    code = ("import json,sys,warnings,numpy as np;warnings.simplefilter('ignore');"
            "from autotuning_methodology.report_experiments import get_strategy_scores;np.random.seed(0);"
            "r=get_strategy_scores(sys.argv[1]);print('JSON'+json.dumps({k:{a:float(b) for a,b in v.items()} "
            "for k,v in r.items()}))")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True, text=True,
                          cwd=ROOT)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("JSON"))
    return json.loads(line[4:]), time.perf_counter() - started


def reference_curves(path: Path) -> tuple[Any, Any, dict[str, Any], Any]:
    """Our scoring (the package's functions) of the reference's own runs, read from its cache files; also the
    experiment, the spaces' statistics and the runs as the package's arrays (for the bootstrap)."""
    from autotuning_methodology.caching import ResultsDescription

    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.plan import statistics
    from searchlab.reproduce.scoring import _Description, score

    exp = load_experiment(path)
    stats = {s.key: statistics(exp, s) for s in exp.spaces}
    descs: dict[str, dict[str, dict[str, Any]]] = {}
    parent = Path(exp.raw["parent_folder"])
    for g in exp.groups:
        rd = ResultsDescription(parent / "run" / g.name, g.space.application, g.space.gpu, g.name, g.display_name,
                                g.stochastic, list(exp.time_keys), [g.space.objective], g.space.minimization)
        r = rd.get_results()
        ours = _Description(g.space.gpu, g.space.application, g.name, g.display_name, list(exp.time_keys),
                            g.space.objective, g.space.minimization)
        ours.arrays = dict(zip(rd.numpy_arrays_keys, [r.fevals_results, r.objective_time_results,
                                                     r.objective_performance_results,
                                                     r.objective_performance_best_results, r.objective_performance_stds,
                                                     r.objective_time_results_per_key,
                                                     r.objective_performance_results_per_key]))
        descs.setdefault(g.space.gpu, {}).setdefault(g.space.application, {})[g.name] = ours
    return score(exp, stats, descs), exp, stats, descs


def boot(x: np.ndarray, rng: np.random.Generator, n: int = 4000) -> list[float]:
    x = x[np.isfinite(x)]
    means = rng.choice(x, size=(n, len(x)), replace=True).mean(axis=1)
    return [float(np.mean(x)), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def held_out_rows(scores: Any, kt: list[str]) -> dict[str, Any]:
    from scipy.stats import wilcoxon

    from searchlab.reproduce.tables import holm

    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for axis in ("fevals", "time"):
        per = scores.per_repeat[axis]

        def row(name: str, per: dict[str, Any] = per) -> np.ndarray:
            cells = [per[k][HELD_OUT[k.split("+")[0]] if name == "auto" else name] for k in per]
            return np.nanmean(np.array(cells), axis=0)

        auto = row("auto")
        rows = {}
        for s in kt:
            diff = auto - row(s)
            ok = np.isfinite(diff)
            rows[s] = {"P": boot(row(s), rng), "auto_minus": boot(diff, rng),
                       "p": float(wilcoxon(diff[ok]).pvalue) if ok.sum() > 1 and np.any(diff[ok] != 0) else 1.0}
        for s, adj in zip(kt, holm([rows[s]["p"] for s in kt])):
            rows[s]["p_holm"] = adj
            lo = rows[s]["auto_minus"][1]
            rows[s]["verdict"] = ("auto ahead" if lo > 0 and adj < 0.05 else
                                  "auto behind" if rows[s]["auto_minus"][2] < 0 and adj < 0.05 else "no difference")
        out[axis] = {"auto_held_out": boot(auto, rng), "vs": rows}
    return out


def measure(args: argparse.Namespace, out: Path, result: dict[str, Any]) -> Path:
    """Both tools on the file: ours in full, the reference on ``--ref-repeats`` of the 25; returns our file."""
    from reproduce_bootstrap import aggregation, bootstrap_P
    from reproduce_bootstrap import agreement as bootstrap_agreement

    ours_file = derived(out, args.repeats, out / "unused_parent", drop_auto=False)
    if args.repeats:
        ours_file = ours_file.rename(out / "experiment.json")
    ours_dir = out / "ours"  # an existing one for the same file is resumed (its wall time is then this call's)
    wall = timed([sys.executable, "-m", "searchlab", "reproduce", str(ours_file), "--out", str(ours_dir)],
                 out / "ours.log")
    ours = json.loads((ours_dir / "scores.json").read_text())
    result["ours"] = {"wall_s": round(wall, 1), "scores": ours,
                      "repeats": args.repeats or 25, "strategies": json.loads(FILE.read_text())["search_strategies"].__len__()}
    same, rescoring = package_scores(ours_dir / "methodology" / "experiment.json")
    ours_exp, ours_stats, ours_descs = _stored(ours_file, ours_dir)
    result["same_runs_time_axis"] = {
        "how": "get_strategy_scores on our runs in its cache layout, np.random.seed(0) before it and before ours; "
               "it rounds to 3 decimals",
        "max_abs_diff": max(abs(same[k]["score"] - ours["time"][k]["score"]) for k in same),
        "theirs": same, "rescoring_wall_s": round(rescoring, 1)}

    module = (ROOT / "searchlab" / "integrations" / "kernel_tuner.py").read_text()
    drop_auto = "class SearchlabOptAlg" not in module
    if not args.skip_reference:
        ref_parent = out / "reference"
        if args.reference_wall_s is None:
            if ref_parent.exists():
                shutil.rmtree(ref_parent)
            ref_parent.mkdir()
            ref_file = derived(out, args.ref_repeats, ref_parent, drop_auto)
            exe = str(Path(sys.executable).with_name("autotuning_experiment"))
            t_sub = timed([exe, str(ref_file)], out / "reference.log")
        else:  # its runs are complete in ref_parent (e.g. resumed after a crash): the wall time is given
            ref_file, t_sub = out / f"experiment_ref{args.ref_repeats}.json", args.reference_wall_s
        theirs, t_fixed = package_scores(ref_file)
        groups = len(json.loads(ref_file.read_text())["search_strategies"]) * 4
        full_groups = len(json.loads(FILE.read_text())["search_strategies"]) * 4
        per_repeat = (t_sub - t_fixed) / (groups * args.ref_repeats)
        extrapolated = t_fixed + per_repeat * full_groups * (args.repeats or 25)
        ref_scores, ref_exp, ref_stats, ref_descs = reference_curves(ref_file)
        agreement = {}
        for axis in ("fevals", "time"):
            for name, (p, e) in ref_scores.aggregate[axis].items():
                mine = ours[axis][name]
                agreement.setdefault(axis, {})[name] = {
                    "ours": mine["score"], "reference": p, "reference_error": e, "diff": mine["score"] - p,
                    "within_error": abs(mine["score"] - p) <= max(e, mine["error"])}
        result["reference"] = {
            "subset": f"all 4 spaces x {groups // 4} strategies x {args.ref_repeats} of 25 repeats"
                      + (" (auto left out: SearchlabOptAlg is not in searchlab/integrations/kernel_tuner.py)"
                         if drop_auto else ""),
            "subset_wall_s": round(t_sub, 1), "fixed_wall_s (second call, from its cache)": round(t_fixed, 1),
            "per_repeat_s": round(per_repeat, 3), "how_timed": args.reference_note or "one call, timed here",
            "extrapolated_full_file_wall_s": round(extrapolated, 1),
            "extrapolation": "fixed + per-repeat x (strategies x 4 spaces x 25); auto's per-repeat cost taken equal "
                             "to the Kernel Tuner strategies' (it is higher, so this favours the reference)"
                             if drop_auto else "fixed + per-repeat x groups x 25",
            "get_strategy_scores": theirs, "agreement_different_runs": agreement,
            "agreement_bootstrap": {
                "how": "different runs of the same file: each side's P (the package's functions, median curve over "
                       "repeats, mean over spaces) bootstrapped over its own repeats (bench/reproduce_bootstrap.py); "
                       "they agree unless the difference's 95 % interval excludes 0 with Holm-adjusted p < 0.05",
                **bootstrap_agreement(bootstrap_P(ours_exp, aggregation(ours_exp, ours_stats, ours_descs), _draws(args)),
                            bootstrap_P(ref_exp, aggregation(ref_exp, ref_stats, ref_descs), _draws(args)))}}
        kt_wall_ours = sum(json.loads(gzip.decompress(p.read_bytes()))["wall_s"]
                           for p in (ours_dir / "repeats").rglob("*.json.gz") if "/auto" not in str(p))
        result["speedup"] = {"full_file": round(extrapolated / wall, 2),
                             "note": "reference extrapolated to the full file vs ours measured on it",
                             "our_kernel_tuner_strategies_repeat_cpu_s": round(kt_wall_ours, 1)}

    return ours_file


def _stored(ours_file: Path, ours_dir: Path) -> tuple[Any, dict[str, Any], Any]:
    """The experiment, its spaces' statistics and our stored repeats as the package's arrays."""
    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.plan import statistics
    from searchlab.reproduce.scoring import descriptions
    from searchlab.reproduce.store import RepeatStore

    exp = load_experiment(ours_file)
    store = RepeatStore(ours_dir)
    reps = {g.key: [store.load(g.key, i)["results"] for i in range(g.repeats)] for g in exp.groups}
    return exp, {s.key: statistics(exp, s) for s in exp.spaces}, descriptions(list(exp.groups), reps,
                                                                              list(exp.time_keys))


def _draws(args: argparse.Namespace) -> dict[str, int]:
    return {"fevals": args.draws, "time": max(args.draws // 4, 20)}


def compare_auto(args: argparse.Namespace, ours_file: Path, ours_dir: Path, result: dict[str, Any]) -> None:
    """The held-out ``auto`` against every Kernel Tuner strategy, on both axes (module docstring, item 4)."""
    from reproduce_bootstrap import aggregation, bootstrap_P, held_out_bootstrap

    from searchlab.reproduce.scoring import score

    exp, stats, descs = _stored(ours_file, ours_dir)
    scores = score(exp, stats, descs)
    kt = [s for s in exp.strategies if not s.startswith("auto")]
    held = "per device, auto's data-chosen options are those chosen on the other three tables " \
           "(bench/kt_harness.py LOTO); auto's shipped defaults (prior 1.0, alignment on) were chosen on " \
           "all four tables, so no cell of them counts and they are not in this file"
    result["auto_vs_kernel_tuner"] = {"held_out": held, "per_repeat_mean_P": held_out_rows(scores, kt)}
    started = time.perf_counter()
    result["auto_vs_kernel_tuner"]["package_P_bootstrap"] = {
        "how": "bench/reproduce_bootstrap.py: each space's repeats resampled with replacement, P recomputed by the "
               "package's functions (median curve over repeats), mean over spaces; [median, 2.5 %, 97.5 %]",
        **held_out_bootstrap(bootstrap_P(exp, aggregation(exp, stats, descs), _draws(args)), HELD_OUT, kt)}
    result["auto_vs_kernel_tuner"]["package_P_bootstrap"]["wall_s"] = round(time.perf_counter() - started, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ref-repeats", type=int, default=25, help="the reference on this many of the 25 repeats "
                        "(fewer: its full time is extrapolated)")
    parser.add_argument("--out", default=str(ROOT / "outputs" / "bench_reproduce"))
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--repeats", type=int, default=None, help="override the file's 25 (a smoke run only)")
    parser.add_argument("--draws", type=int, default=200, help="bootstrap draws of P on the evaluations axis "
                        "(a quarter of them, at least 20, on the slower time axis)")
    parser.add_argument("--reference-wall-s", type=float, default=None,
                        help="the reference's runs are already complete in OUT/reference (a call that crashed, then "
                             "resumed from its cache): use them, with this total wall time")
    parser.add_argument("--reference-note", default="", help="how --reference-wall-s was measured")
    parser.add_argument("--only-bootstrap", action="store_true", help="score the stored runs again, run nothing")
    args = parser.parse_args()
    out = Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    result: dict[str, Any] = {"file": str(FILE.relative_to(ROOT)), "cores": os.cpu_count()}

    target = ROOT / "bench" / "results" / ("reproduce.json" if not args.repeats else "reproduce_smoke.json")
    if args.only_bootstrap:  # the runs are stored: score them again (a changed comparison), run nothing
        result = json.loads(target.read_text())
        ours_file = out / "experiment.json"
    else:
        ours_file = measure(args, out, result)
    compare_auto(args, ours_file, out / "ours", result)
    target.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
