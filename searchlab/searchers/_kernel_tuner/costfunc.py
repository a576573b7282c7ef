"""Kernel Tuner's cost function, the same answers for less work per look-up.

Why: ``kt_basinhopping`` with ``method=Powell`` calls Kernel Tuner's ``CostFunc`` about 40,000 times
in a 220-evaluation replay (SciPy's line searches probe points that snap to configurations already
known), and each call spent most of its time in two places that give nothing back (profile on
convolution_A100, issue 23):

- ``logging.debug("normalize config: %s -> %s ...", str(x), str(config), ...)`` formats the numpy
  point with ``str`` before ``logging`` learns that debug output is off (40 % of the thread's time);
- ``unscale_and_snap_to_nearest`` builds one ``np.linspace`` per parameter per call and takes one
  ``argmin`` per parameter (35 %).

:class:`FastCostFunc` is ``CostFunc`` (Kernel Tuner 1.5.0, ``strategies/common.py``, Apache-2.0) with
those two changed and nothing else: the debug message gets the same arguments, formatted only when
debug output is on, and the grids of the parameters are built once per ``eps`` (the same
``np.linspace`` values, one row each, padded with ``inf``) and snapped to in one ``argmin`` over the
rows: the same distances, so the same nearest index, ties included (the first, as ``argmin``). Every other line of
``_run_configs`` is Kernel Tuner's, in its order: budget checks, runner call, results and
``unique_results``. :func:`strategy_module` gives the bridge a private copy of a strategy's module
whose ``CostFunc`` is this one (Kernel Tuner's own module stays untouched for its own runs), for the
strategies in :data:`FAST`; tests/searchers/test_kernel_tuner_bridge.py checks that the bridged runs
still propose what Kernel Tuner's own runs do, and tests/searchers/test_kernel_tuner_trajectories.py
that the proposals did not change.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from types import ModuleType
from typing import Any

import numpy as np
from kernel_tuner import util
from kernel_tuner.strategies.common import CostFunc

FAST = frozenset({"basinhopping"})  # strategies run with FastCostFunc (the others: Kernel Tuner's own)
_COPIES: dict[str, ModuleType] = {}


class FastCostFunc(CostFunc):  # type: ignore[misc]  # Kernel Tuner is untyped
    """``CostFunc`` with a lazy debug message and each parameter's snapping grid built once."""

    _grids: tuple[float, np.ndarray] | None = None

    def _snap_grids(self, eps: float) -> np.ndarray:
        """Row i: parameter i's grid as ``unscale_and_snap_to_nearest`` builds it, padded with inf
        (never nearest, so each row's first minimum is the one Kernel Tuner's argmin finds)."""
        if self._grids is None or self._grids[0] != eps:
            pad = 0.5 * eps
            values = list(self.searchspace.tune_params.values())
            grids = np.full((len(values), max(len(v) for v in values)), np.inf)
            for i, v in enumerate(values):
                grids[i, :len(v)] = np.linspace(pad, (eps * len(v)) - pad, len(v))
            self._grids = (eps, grids)
        return self._grids[1]

    def _normalize_and_validate_config(self, x: Any, check_restrictions: bool = True) -> tuple[Any, bool]:
        point = np.asarray(x, dtype=float)
        if not (self.snap and self.scaling) or not np.isfinite(point).all():  # inf - inf padding would be nan
            config, is_legal = super()._normalize_and_validate_config(x, check_restrictions)
            return config, bool(is_legal)
        grids = self._snap_grids(self.tuning_options.eps)
        nearest = np.abs(grids - point[:, None]).argmin(axis=1)
        config = [v[int(j)] for v, j in zip(self.searchspace.tune_params.values(), nearest)]
        is_legal = True
        if check_restrictions:
            is_legal = self.searchspace.is_param_config_valid(tuple(config))
        if not is_legal and self.constraint_aware:
            from kernel_tuner.strategies.common import unscale_and_snap_to_nearest_valid

            new_config = unscale_and_snap_to_nearest_valid(x, config, self.searchspace, self.tuning_options.eps)
            if new_config:
                config = new_config
                is_legal = True
        return config, is_legal

    def _run_configs(self, xs: Any, check_restrictions: bool = True) -> list[Any]:
        strategy_time = self.strategy_timer.get()
        self.runner.add_strategy_time(strategy_time)
        logging.debug("_cost_func called")
        self.tuning_options.budget.raise_exception_if_done()
        batch_indices: list[int] = []
        batch_configs: list[Any] = []
        final_results: list[Any] = []
        for index, x in enumerate(xs):
            config, is_legal = self._normalize_and_validate_config(x, check_restrictions=check_restrictions)
            # Kernel Tuner formats str(x) and str(config) eagerly; the same text, only when it is shown
            logging.debug("normalize config: %s -> %s (legal: %s)", x, config, is_legal)
            if not is_legal:
                result = dict(zip(self.searchspace.tune_params.keys(), config))
                result["__error__"] = util.InvalidConfig()
                final_results.append(result)
            else:
                batch_indices.append(index)
                batch_configs.append(config)
                final_results.append(None)
        batch_results = self.runner.run(batch_configs, self.tuning_options)
        for index, config, result in zip(batch_indices, batch_configs, batch_results):
            if result is None:
                continue
            final_results[index] = result
            key = ",".join([str(i) for i in config])
            self.unique_results.setdefault(key, result)
            self.results.append(result)
        self.tuning_options.budget.raise_exception_if_done()
        self.budget_spent_fraction = self.tuning_options.budget.get_fraction_consumed()
        if not all(final_results):
            raise util.StopCriterionReached("runner did not evaluate all given configurations")
        self.strategy_timer.reset()
        return final_results


def strategy_module(name: str) -> ModuleType:
    """``kernel_tuner.strategies.<name>``, or for :data:`FAST` a private copy using :class:`FastCostFunc`."""
    qualified = f"kernel_tuner.strategies.{name}"
    if name not in FAST:
        return importlib.import_module(qualified)
    copy = _COPIES.get(name)
    if copy is None:
        spec = importlib.util.find_spec(qualified)
        assert spec is not None and spec.loader is not None
        copy = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(copy)
        copy.CostFunc = FastCostFunc  # type: ignore[attr-defined]  # the name the strategy's tune() calls
        _COPIES[name] = copy
    return copy
