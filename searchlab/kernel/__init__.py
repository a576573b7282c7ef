"""Tune an OpenCL kernel from Python, as Kernel Tuner's ``tune_kernel`` is called (issue 54, item 4).

>>> result = searchlab.tune("vector_add", kernel_string, n, [c, a, b, numpy.int32(n)], {"block_size_x": [32, 64, 128]},
...                         answer=[a + b, None, None, None], default={"block_size_x": 64}, budget=20)
>>> result.recommended            # {'block_size_x': 128} only if measurably faster than the default, else the default

The arguments mean what they mean to ``kernel_tuner.tune_kernel`` (:mod:`searchlab.kernel._inputs`,
:mod:`searchlab.adapters.user.python_kernel`); ``default`` is what you run today. The call enters the command
line's door: the arguments are recorded in a run directory (``inputs/``: the kernel, each array as ``.npy``, a JSON
manifest), the run is composed by Hydra as ``problem=python_kernel problem.spec=RUN/inputs/kernel.json``, checked by
:func:`searchlab.run.prepare.prepare` (a refusal is one :class:`~searchlab.errors.ConfigError` line and leaves no
directory) and executed as a :class:`searchlab.run.lifecycle.Run`: progress lines, ``results.db``, the confirm phase
against ``default``, the verdict, ``summary.json``, the live view (docs/integrations.md) and Ctrl-C safety. A Ray
worker and a resume rebuild the problem from those files (records are data, never code).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.commands import hydra_value, override
from searchlab.errors import ConfigError
from searchlab.kernel._inputs import inputs
from searchlab.kernel._result import TuneResult

__all__ = ["TuneResult", "resume", "tune"]


def _hydra(value: Any) -> str:
    """A Python value as Hydra's override grammar reads it back."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_hydra(v) for v in value) + "]"
    return hydra_value(str(value))


def _budget(budget: int | Mapping[str, Any]) -> list[str]:
    if isinstance(budget, Mapping):
        return [f"budget.{k}={_hydra(v)}" for k, v in budget.items()]
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ConfigError(f"searchlab.tune: budget={budget!r} must be a number of evaluations or a dict of budget.* "
                          "options (e.g. {'evaluations': 50, 'wall_time_s': 600})")
    return [f"budget.evaluations={budget}"]


def _run_dir(run_dir: str | Path | None, kernel_name: str, searcher: str) -> Path:
    """The directory the command line would choose (``outputs/<date>/<time>_<kernel>_<searcher>``), or the caller's."""
    if run_dir is None:
        stamp = time.strftime("%Y-%m-%d/%H-%M-%S") + f".{int(time.time() * 1e6) % 1_000_000:06d}"
        run_dir = Path("outputs") / f"{stamp}_{kernel_name}_{searcher}"
    path = Path(run_dir).expanduser().resolve()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ConfigError(f"searchlab.tune: run_dir={str(path)!r} exists and is not empty; give a new directory "
                          f"(or continue that run with searchlab.resume({str(path)!r}))")
    return path


def tune(kernel_name: str, kernel_source: Any, problem_size: Any, arguments: Sequence[Any],
         tune_params: Mapping[str, Sequence[Any]], *, grid_div_x: Any = None, grid_div_y: Any = None,
         grid_div_z: Any = None, restrictions: Any = None, answer: Sequence[Any] | None = None, atol: float = 1e-6,
         block_size_names: Sequence[str] | None = None, default: Mapping[str, Any] | None = None,
         searcher: str = "auto", searcher_options: Mapping[str, Any] | None = None,
         budget: int | Mapping[str, Any] = 100, seed: int = 0, executor: str = "auto", workers: int | None = None,
         platform: int | None = None, device: int | None = None, live: str | bool = "auto",
         run_dir: str | Path | None = None, overrides: Sequence[str] = (), quiet: bool = False) -> TuneResult:
    """Tune ``kernel_name`` and return what its run directory records (:class:`TuneResult`).

    Kernel Tuner's arguments (same names, order and meanings): ``kernel_source`` (the source text, or a file),
    ``problem_size`` (1-3 sizes: integers or expressions of the parameters), ``arguments`` (numpy arrays and numpy
    scalars, in the kernel's order), ``tune_params`` (name -> values; each reaches the kernel as ``#define``),
    ``grid_div_x/y/z``, ``restrictions`` (expressions over the parameters), ``answer`` (per argument the correct
    output, None where nothing is checked), ``atol`` (``numpy.allclose``'s), ``block_size_names``, ``platform`` and
    ``device`` (an OpenCL device by index; unset: a GPU where the machine has one, else pocl's CPU device).

    searchlab's: ``default`` (what you run today: the confirm phase measures it beside the best configurations and
    only a measurably faster one is recommended), ``searcher`` and ``searcher_options`` (``searcher.X=``),
    ``budget`` (evaluations, or a dict of ``budget.*``), ``seed``, ``executor`` (``auto``: Ray, one worker per
    device; ``serial``: in this process), ``workers``, ``live`` (the optuna-dashboard view: auto, true, false or a
    storage), ``run_dir`` (default ``outputs/<date>/<time>_<kernel>_<searcher>``) and ``overrides`` (any other
    command-line override, e.g. ``"confirm.max_time_s=30"``). Bad input raises one
    :class:`~searchlab.errors.ConfigError` line and leaves nothing behind; Ctrl-C stops cleanly, prints how to
    resume, and raises ``KeyboardInterrupt``."""
    given = inputs(kernel_name, kernel_source, problem_size, arguments, tune_params,
                   grid=(grid_div_x, grid_div_y, grid_div_z), restrict=restrictions, answer=answer, atol=atol,
                   default=default, names=block_size_names)
    path = _run_dir(run_dir, kernel_name, searcher)
    made = not path.exists()
    try:
        from searchlab.adapters.user._manifest import write_manifest

        spec = write_manifest(path / "inputs", given.manifest, given.kernel_text, given.arrays, given.answers)
        words = ["problem=python_kernel", override("problem.spec", spec), f"searcher={searcher}", f"seed={seed}",
                 f"executor={executor}", f"name={kernel_name}", override("hydra.run.dir", path), *_budget(budget),
                 f"live={_hydra(live)}"]
        words += [f"problem.{k}={v}" for k, v in (("platform", platform), ("device", device)) if v is not None]
        words += [f"executor.workers={workers}"] if workers is not None else []
        words += [f"searcher.{k}={_hydra(v)}" for k, v in (searcher_options or {}).items()]
        prepared, job = _prepare([*words, *overrides], path)
    except BaseException:
        if made:
            shutil.rmtree(path, ignore_errors=True)  # nothing half-made (docs/python.md)
        raise
    return _execute(prepared, job, path, quiet)


def resume(run_dir: str | Path, *, overrides: Sequence[str] = (), quiet: bool = False) -> TuneResult:
    """Continue a run to its budget (``searchlab resume=RUN_DIR`` from Python); ``overrides`` may change how it runs
    (``budget.*``, ``executor.*``, ``confirm.*``, ``progress``, ``live``), never what it searches."""
    path = Path(run_dir).expanduser().resolve()
    prepared, job = _prepare([override("resume", path), *overrides], path)
    return _execute(prepared, job, path, quiet)


def _prepare(words: list[str], path: Path) -> tuple[Any, Any]:
    from searchlab.cli.compose import compose
    from searchlab.run.prepare import prepare

    job = compose(words)
    return prepare(job.cfg, path, names=job.names, overrides=job.overrides), job


def _execute(prepared: Any, job: Any, path: Path, quiet: bool) -> TuneResult:
    """The run, as the command line executes it; an interrupt prints both ways to resume and is re-raised."""
    from searchlab.cli.compose import save_hydra_files
    from searchlab.run.lifecycle import Run

    if not prepared.resuming:
        save_hydra_files(job, path)
    try:
        Run(prepared, hydra_dir=str(path), quiet=quiet).execute()
    except KeyboardInterrupt as exc:
        detail = getattr(exc, "detail", "") or "finished evaluations are recorded"
        print(f"searchlab: interrupted {detail}; from Python: searchlab.resume({str(path)!r})", file=sys.stderr,
              flush=True)
        raise
    return TuneResult.load(path)
