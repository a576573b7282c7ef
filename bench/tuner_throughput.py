"""Replay look-ups per second: the searcher_settings inner path vs Kernel Tuner 1.5's simulation mode.

Issue 23, item 3 (measured here, not yet improved): one replay = one searcher on convolution_A100 for
220 evaluations. Ours is the inner replay of ``problem=searcher_settings``
(``searchlab.tuning._train.replay``: ``api.optimize``, serial executor, no store, the table
parsed once per process, so the parse is outside the timing, as it is outside each replay of a
tuning run). Kernel Tuner's is ``kernel_tuner.interface.tune_cache`` (simulation mode) on the same
cache, decompressed once before timing; Kernel Tuner reads and parses the cache file inside every
call, so its time includes that parse (which is how each of its replays runs); the ``less_json_load``
columns subtract a plain ``json.loads`` of the same file, timed beside each call (an estimate of
Kernel Tuner's search alone: its own reading does at least that).

A look-up is one distinct configuration measured (ours: evaluations; Kernel Tuner: distinct cached
configurations it visited, as bench/peers.py counts). Runs alternate ours / theirs seed by seed, so
both see the same machine load; the ratio is ours / theirs. Run it alone on the machine:

    OMP_NUM_THREADS=1 /work/bin/cpuslot --exclusive python bench/tuner_throughput.py
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT.parent / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz"
PAIRS = {"random": "random_sample", "genetic": "genetic_algorithm"}


def ours(name: str, seed: int, budget: int) -> int:
    from searchlab.api import optimize  # noqa: F401 - imported before timing, as a warm worker has it
    from searchlab.tuning._train import replay, train_table

    train_table(TABLE)
    curve = replay(name, {}, str(TABLE), seed, budget)
    return len(curve)  # extended to the budget; the searchers here use all of it on this table


def theirs(strategy: str, seed: int, budget: int, path: Path, names: list[str]) -> int:
    from kernel_tuner.interface import tune_cache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_cache(str(path), strategy=strategy, strategy_options={"max_fevals": budget}, quiet=True,
                                seed=seed)
    return len({tuple(r[n] for n in names) for r in results})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=220)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "tuner_throughput.json"))
    args = parser.parse_args()
    import kernel_tuner

    from searchlab.core import threads
    from searchlab.tuning._train import train_table

    threads.limit_pools(1)
    started = time.perf_counter()
    train_table(TABLE)
    parse_s = time.perf_counter() - started
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.json"
        with gzip.open(TABLE, "rt") as src:
            path.write_text(src.read())
        names = json.loads(path.read_text())["tune_params_keys"]
        ours("random", 0, 10), theirs("random_sample", 0, 10, path, names)  # warm imports on both sides
        for name, strategy in PAIRS.items():
            totals = {"ours_s": 0.0, "ours_lookups": 0, "kt_s": 0.0, "kt_lookups": 0, "json_load_s": 0.0}
            for seed in range(args.seeds):
                t = time.perf_counter()
                totals["ours_lookups"] += ours(name, seed, args.budget)
                totals["ours_s"] += time.perf_counter() - t
                t = time.perf_counter()
                totals["kt_lookups"] += theirs(strategy, seed, args.budget, path, names)
                totals["kt_s"] += time.perf_counter() - t
                t = time.perf_counter()
                json.loads(path.read_text())  # what any reader of the cache pays; Kernel Tuner pays it per call
                totals["json_load_s"] += time.perf_counter() - t
            ours_rate, kt_rate = totals["ours_lookups"] / totals["ours_s"], totals["kt_lookups"] / totals["kt_s"]
            kt_search = totals["kt_lookups"] / max(1e-9, totals["kt_s"] - totals["json_load_s"])
            rows[name] = {**totals, "kt_strategy": strategy, "ours_lookups_per_s": round(ours_rate, 1),
                          "kt_lookups_per_s": round(kt_rate, 1), "ratio_ours_over_kt": round(ours_rate / kt_rate, 3),
                          "kt_lookups_per_s_less_json_load": round(kt_search, 1),
                          "ratio_ours_over_kt_less_json_load": round(ours_rate / kt_search, 3)}
            print(name, json.dumps(rows[name]), flush=True)
    payload = {"table": TABLE.name, "budget": args.budget, "seeds": args.seeds, "our_table_parse_s": round(parse_s, 3),
               "kernel_tuner": kernel_tuner.__version__ if hasattr(kernel_tuner, "__version__") else "?",
               "host": platform.node(), "cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg(), "results": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
