"""The field's experiment files with only their paths changed, and the data both tools need to run them.

Used by bench/reproduce_field.py (``python -m bench reproduce_field``) and tests/reproduce. The reference
(``autotuning_experiment``) reads Kernel Tuner's cache beside each T4 file (the T4 name without ``_T4``); the
shared benchmark_hub holds only T4 files, so a hub copy is made under the output directory:

- ``cachefiles/convolution_milo/<gpu>_T4.json``: links to the shared T4 files, and beside them Kernel Tuner's own
  caches of the same measurements (``../shared/data/kernel_tuner/convolution_<gpu>.json.gz``, decompressed);
- ``hyperparametertuning/``: the algorithms' T1 files (linked) and the brute-forced T4 files (linked), with a cache
  converted from each (``searchlab.interchange.kt_cache.kt_cache_from_t4``, the converter ``searchlab reproduce``
  itself uses where a cache is missing, so both tools replay the same cache);
- ``mockfiles/``: the reference's mock T1 file and kernel (linked) and ``mock_gpu_T4.json``, a space made here: the
  reference's integration tests name a ``mock_gpu_T4.json`` that is not shared, and its brief says to point the
  pattern at a T4 file we have. Kernel Tuner refuses a cache whose parameters differ from the T1 file's, so no
  existing space fits the mock T1 file; this one is every configuration its restrictions admit, with times drawn
  from a fixed-seed model (below), 4 % compile failures, in T4 (milliseconds) and as a Kernel Tuner cache.

:func:`derived` writes an experiment file whose only changes are paths: ``parent_folder``, each application's
``folder``, the space file pattern and a custom strategy's path.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data beside the checkout; a worktree under <dir>/wt/<name> finds <dir>/shared the same way
SHARED = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
              ROOT.parent / "shared" / "data")
HUB = SHARED / "benchmark_hub"
METHODOLOGY = SHARED / "methodology"


def _link(target: Path, link: Path) -> None:
    if not link.exists() and not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)


def _write_json(path: Path, doc: Any) -> None:
    from bench.harness import write

    write(path, doc)  # the one JSON writer of bench/ (atomic)


def _cache_from_t4(t4: Path, t1: Path, out: Path, device: str) -> None:
    from searchlab.interchange.kt_cache import kt_cache_from_t4
    from searchlab.interchange.t1 import read_t1_file
    from searchlab.interchange.t4 import read_t4

    if out.exists():
        return
    spec = read_t1_file(t1)
    doc = json.loads(t4.read_text())
    objective = doc["results"][0]["objectives"][0]
    higher = objective.lower() in ("score", "gflop/s", "gflops", "gb/s")
    read_t4(t4, objective=objective, direction="maximize" if higher else "minimize", doc=doc)  # checked as ours is
    _write_json(out, kt_cache_from_t4(doc, spec.tune_params(), kernel=str(spec.kernel["KernelName"]),
                                      problem_size=spec.kernel.get("ProblemSize"), device=device,
                                      objective=objective, higher_is_better=higher))


def mock_t4(t1: Path, seed: int = 20261203) -> dict[str, Any]:
    """A T4 document of every configuration the mock T1 file's restrictions admit (see the module docstring).

    The model: time = 2 ms x (work imbalance of the block) x (tiling gain) x lognormal noise (sigma 0.15), with
    use_padding and read_only small effects, 3 runtimes per configuration; compile time 0.6-1.4 s, framework 40 ms."""
    import numpy as np

    from searchlab.core.expr import Expression
    from searchlab.interchange.t1 import read_t1_file

    spec = read_t1_file(t1)
    params = spec.tune_params()
    checks = [Expression(c) for c in spec.conditions]
    rng = np.random.default_rng(seed)
    results = []
    for values in itertools.product(*params.values()):
        conf = dict(zip(params, values))
        if not all(c(conf) for c in checks):
            continue
        threads = conf["block_size_x"] * conf["block_size_y"]
        tiles = conf["tile_size_x"] * conf["tile_size_y"]
        base = 2.0 * (1 + abs(math.log2(threads / 256)) * 0.35) * (1 + 1.5 / tiles) ** 0.6
        base *= (0.93 if conf["use_padding"] else 1.0) * (0.97 if conf["read_only"] else 1.0)
        runtimes = [float(base * rng.lognormal(0.0, 0.15)) for _ in range(3)]
        fails = rng.random() < 0.04
        times: dict[str, Any] = {"compilation": float(rng.uniform(600, 1400)), "framework": 40.0,
                                 "search_algorithm": 0, "validation": 0}
        if not fails:
            times["runtimes"] = runtimes
        results.append({"timestamp": "2026-12-03 00:00:00+00:00", "configuration": conf, "times": times,
                        "invalidity": "compile" if fails else "correct", "correctness": 0 if fails else 1,
                        "measurements": [{"name": "time", "value": "CompilationFailedConfig" if fails else
                                          float(np.mean(runtimes)), "unit": "" if fails else "ms"}],
                        "objectives": ["time"]})
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


def hub_copy(out: Path) -> Path:
    """The hub copy under ``out`` (module docstring); returns its root."""
    root = out / "hub"
    conv = root / "cachefiles" / "convolution_milo"
    for gpu in ("A100", "A4000", "MI250X", "W6600"):
        _link(HUB / "cachefiles" / "convolution_milo" / f"{gpu}_T4.json", conv / f"{gpu}_T4.json")
        cache = conv / f"{gpu}.json"
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(gzip.decompress((SHARED / "kernel_tuner" / f"convolution_{gpu}.json.gz").read_bytes()))
    _link(HUB / "kernels", root / "kernels")
    hyper = root / "hyperparametertuning"
    _link(HUB / "hyperparametertuning" / "algorithms", hyper / "algorithms")
    for t4 in sorted((HUB / "hyperparametertuning" / "cachefiles").glob("*_T4.json")):
        _link(t4, hyper / "cachefiles" / t4.name)
        app = t4.name.removeprefix("hyperparamtuning_paper_bruteforce_").removesuffix("_T4.json")
        _cache_from_t4(t4, HUB / "hyperparametertuning" / "algorithms" / f"metatuning_{app}.json",
                       hyper / "cachefiles" / t4.name.replace("_T4", ""), "A4000")
    mock = root / "mockfiles"
    for name in ("mocktest_kernel_convolution.json", "convolution.cu"):
        _link(METHODOLOGY / "mockfiles" / name, mock / name)
    if not (mock / "mock_gpu_T4.json").exists():
        _write_json(mock / "mock_gpu_T4.json", mock_t4(mock / "mocktest_kernel_convolution.json"))
    _cache_from_t4(mock / "mock_gpu_T4.json", mock / "mocktest_kernel_convolution.json", mock / "mock_gpu.json",
                   "mock_GPU")
    return root


def derived(source: Path, out: Path, hub: Path, *, name: str | None = None, repeats: int | None = None) -> Path:
    """``source`` with only its paths changed to point into ``hub`` (and, for a shorter run, ``repeats``)."""
    raw = json.loads(source.read_text())
    defaults = raw["experimental_groups_defaults"]
    stem = name or source.stem
    raw["parent_folder"] = str(out / f"reference_{stem}")
    pattern = defaults.get("pattern_for_full_search_space_filenames", {}).get("regex", "")
    for app in defaults.get("applications", []):
        folder = str(app.get("folder", ""))
        if "bogus" in folder:
            continue  # test_bad_kernel_path.json points at nothing on purpose: both tools must refuse it
        if "hyperparametertuning" in folder or "hyperparametertuning" in pattern:
            app["folder"] = str(hub / "hyperparametertuning" / "algorithms")
        elif "mockfiles" in folder:
            app["folder"] = str(hub / "mockfiles")
        else:
            app["folder"] = str(hub / "kernels")
    if pattern:
        file = pattern.rsplit("/", 1)[-1]
        if "hyperparametertuning" in pattern:
            where = hub / "hyperparametertuning" / "cachefiles" / file
        elif "mockfiles" in pattern:
            where = hub / "mockfiles" / "mock_gpu_T4.json"
        else:
            where = hub / "cachefiles" / "${applications}" / file
        defaults["pattern_for_full_search_space_filenames"]["regex"] = str(where)
    for strategy in raw.get("search_strategies", []):
        if "custom_search_method_path" in strategy and not Path(strategy["custom_search_method_path"]).is_absolute():
            strategy["custom_search_method_path"] = str(ROOT / strategy["custom_search_method_path"])
    if repeats:
        defaults["repeats"] = repeats
    path = out / f"{stem}.json"
    _write_json(path, raw)
    return path
