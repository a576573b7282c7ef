#!/bin/bash
# Where a joblib sweep of tiny runs spends its time (issue 46, item 6; numbers in docs/integrations.md).
# Usage, from the repository root: cpuslot --exclusive bench/joblib_sweep.sh [OUT_DIR]
# Prints, per repeat: the README's 4-run sweep with joblib (n_jobs=2) and with the basic launcher (total wall
# time, each run's summary.json wall_time_s); then a fresh loky worker's start and import costs.
set -eu
ROOT=$(pwd)
PY="$ROOT/.venv/bin/python"
OUT=${1:-$(mktemp -d)}
export PYTHONPATH="$ROOT"
cd "$OUT"
for rep in 1 2 3; do
  for launcher in joblib basic; do
    rm -rf "sw_$launcher"
    extra=()
    [ "$launcher" = joblib ] && extra=(hydra/launcher=joblib hydra.launcher.n_jobs=2)
    t0=$(date +%s.%N)
    "$PY" -m searchlab -m seed=0,1,2,3 problem=synthetic_dag executor=serial "${extra[@]}" "hydra.sweep.dir=sw_$launcher" \
        progress=off > "out_$launcher.txt" 2>&1
    t1=$(date +%s.%N)
    "$PY" - "$launcher" "$rep" "$t0" "$t1" <<'PYEOF'
import glob, json, sys
launcher, rep, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
runs = [json.load(open(p))["wall_time_s"] for p in sorted(glob.glob(f"sw_{launcher}/*/summary.json"))]
print(f"rep={rep} launcher={launcher} sweep_s={t1 - t0:.2f} run_wall_s={[round(r, 2) for r in runs]}")
PYEOF
  done
done
"$PY" - <<'PYEOF'
import time

from joblib import Parallel, delayed
from joblib.externals.loky import get_reusable_executor


def nothing(i):
    return i


def imports(i):
    t = time.perf_counter()
    import searchlab.cli.main  # noqa: F401
    import searchlab.run.lifecycle  # noqa: F401
    a = time.perf_counter() - t
    t = time.perf_counter()
    from hydra.core.plugins import Plugins
    Plugins.instance()  # the plugin scan a Hydra job's set-up does
    b = time.perf_counter() - t
    t = time.perf_counter()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (best_so_far.png)
    return a, b, time.perf_counter() - t


for rep in range(3):
    get_reusable_executor().shutdown(wait=True)
    t = time.perf_counter()
    Parallel(n_jobs=2, backend="loky")(delayed(nothing)(i) for i in range(4))
    start = time.perf_counter() - t
    get_reusable_executor().shutdown(wait=True)
    t = time.perf_counter()
    out = Parallel(n_jobs=2, backend="loky")(delayed(imports)(i) for i in range(2))
    total = time.perf_counter() - t
    print(f"rep={rep} loky start + 4 empty tasks {start:.2f} s; 2 fresh workers importing {total:.2f} s; per worker: "
          + "; ".join(f"searchlab {a:.2f} s, plugin scan {b:.2f} s, matplotlib {c:.2f} s" for a, b, c in out))
PYEOF
