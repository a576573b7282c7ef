"""``kernel_tuner_cache``: a Kernel Tuner cache file replayed as a table problem.

Kernel Tuner writes every configuration it measured to a JSON cache (``tune_params``: the
parameters and their values, ``cache``: one entry per configuration, keyed by the values
joined with commas). Here its parameters become ordinal knobs, and each entry a measurement:

- a number in the objective field (``time``, ms): OK, with the recorded ``times`` as
  samples (every one kept: ``problem.sample_noise=true`` replays one of them per evaluation,
  searchlab.adapters.table) and every numeric field as a sensor (``GFLOP/s`` becomes ``GFLOP_s``), the
  objective field included, so a sensor model's objective formula (default: ``time``)
  reads the measured objective (paper 001 §4: the quality is predicted from sensors);
- ``"CompilationFailedConfig"``: FAILED(compile); ``"RuntimeFailedConfig"`` (the kernel
  failed to launch or run, typically too many resources requested for the launch):
  FAILED(launch); ``"InvalidConfig"``: FAILED(invalid);
- configurations of the product that the file does not hold were excluded by the tuner's
  restrictions, which Kernel Tuner checks before compiling: with ``missing=constraint`` (the
  default) they violate a known constraint (never sent, never sampled; INFEASIBLE if a
  searcher proposes one), with ``missing=invalid`` they are FAILED(invalid) when tested.
- configurations the file records as failed: with ``recorded_failures=hidden`` (the default)
  a searcher discovers them by testing them, as it would live (a hidden constraint, paper 001
  §2); with ``recorded_failures=known`` they are known-infeasible like the absent ones (never
  sent, never sampled, never counted), which is how Kernel Tuner 1.5's simulation mode replays
  a cache (``util.infer_restrictions_from_cache`` admits only entries without an error), so a
  comparison with its strategies can count both sides alike (docs/baselines.md, issue 22).

Each evaluation is charged the recorded compile + benchmark time (ms in the file, seconds
here: ``Measurement.charged_s``), so ``budget.charged_time_s`` budgets replay fairly.

The reader itself lives beside the writer, in :mod:`searchlab.interchange.kt_cache`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from searchlab.adapters.table import TableProblem
from searchlab.core.schema import EMPTY
from searchlab.errors import ConfigError
from searchlab.interchange.kt_cache import MISSING, MODEL, RECORDED_FAILURES, load_kernel_tuner_cache

__all__ = ["MISSING", "MODEL", "RECORDED_FAILURES", "KernelTunerCache", "load_kernel_tuner_cache"]


class KernelTunerCache(TableProblem):
    """Replay a Kernel Tuner cache: a look-up charged the recorded compile + benchmark time."""

    name = "kernel_tuner_cache"

    def __init__(self, path: str = "???", missing: str = "constraint", model: Mapping[str, Any] = EMPTY,
                 recorded_failures: str = "hidden", **replay: Any) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            path: a Kernel Tuner cache file, e.g. ../shared/data/kernel_tuner/convolution_A100.json.gz
            missing: constraint: absent configurations are known-infeasible | invalid: FAILED(invalid)
            model: sensor model (default: objective + failures)
            recorded_failures: hidden: failed entries fail when tested | known: known-infeasible (KT simulation)
            replay: sample_noise (draw one of the entry's recorded times), noise_seed (TableProblem)
        """
        if not path or path == "???":
            raise ConfigError("problem=kernel_tuner_cache needs problem.path=<Kernel Tuner cache .json[.gz]>")
        table = load_kernel_tuner_cache(path, missing=missing, model=model, recorded_failures=recorded_failures)
        super().__init__(table=table, path=path, **replay)
        self.recorded_failures = recorded_failures

    def fingerprint_params(self) -> Mapping[str, Any]:
        base = super().fingerprint_params()  # a failed entry is another outcome when it is known beforehand
        return {**base, "recorded_failures": "known"} if self.recorded_failures == "known" else base
