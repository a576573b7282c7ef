"""``kernel_tuner_cache``: a Kernel Tuner cache file replayed as a table problem.

How a cache becomes a table (knobs, measurements, failures, the configurations it lacks, ``missing`` and
``recorded_failures``) is the reader's, beside its writer in :mod:`searchlab.interchange.kt_cache`. Each
evaluation is charged the recorded compile + benchmark time, so ``budget.charged_time_s`` budgets replay fairly.
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

    @classmethod
    def replayed_table(cls, options: Mapping[str, Any]) -> Any:
        """The cache as the table this problem replays (its reader's options applied), the problem unbuilt."""
        path = options.get("path")
        if not path or path == "???":
            raise ConfigError("problem=kernel_tuner_cache needs problem.path=<Kernel Tuner cache .json[.gz]>")
        return load_kernel_tuner_cache(str(path), missing=options.get("missing", "constraint"),
                                       model=options.get("model") or EMPTY,
                                       recorded_failures=options.get("recorded_failures", "hidden"))

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
        table = self.replayed_table({"path": path, "missing": missing, "model": model,
                                     "recorded_failures": recorded_failures})
        super().__init__(table=table, path=path, **replay)
        self.recorded_failures = recorded_failures

    def fingerprint_params(self) -> Mapping[str, Any]:
        base = super().fingerprint_params()  # a failed entry is another outcome when it is known beforehand
        return {**base, "recorded_failures": "known"} if self.recorded_failures == "known" else base
