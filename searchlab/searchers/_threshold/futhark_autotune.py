"""Today's ``futhark autotune`` (Futhark's ``src/Futhark/CLI/Autotune.hs``), the
practitioners' baseline.

Thresholds are tuned deepest first (``tuningPaths``), each over the training datasets in
turn. Per dataset: a sampling run with the threshold at the top of its current interval
(at first thresholdMax) gives the dataset's run time and, from the ``Compared NAME <=
VALUE`` log, the E_par values it compared the threshold with; a binary search over those
strictly inside the interval runs the two middle candidates, recurses into the half of the
faster one and keeps the best (run time, value) pair; the interval narrows to (the
candidate below the best, the best) for the next dataset. The final value is the
interval's top (thresholdMin if no dataset gave information). Untuned thresholds keep
their defaults (the tool runs with ``--default-threshold`` thresholdMax; intra-group ones
keep their class default). Like the tool, it has no cache: every run is benchmarked
(``unique`` is false), and it takes each dataset's fastest run. Not modelled: the 1.2x
time-outs of slow runs. One benchmark run = one evaluation on all training datasets, of
which the dataset being tuned is read.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator
from typing import Any

from searchlab.core.records import Config, Result, Status, as_int
from searchlab.core.spaces import FUTHARK_DEFAULT_THRESHOLD, ThresholdDataset, ThresholdTree
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.common import THRESHOLD_MAX, THRESHOLD_MIN, parse_comparisons
from searchlab.searchers._threshold.generator import GeneratorSearcher, Need

Pair = tuple[float, int]  # (run time, threshold value), compared on the time only


class FutharkAutotuneSearcher(GeneratorSearcher):
    name = "futhark_autotune"
    unique = False

    def __init__(self, space: ThresholdTree, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)

    def _defaults(self) -> dict[str, int]:
        return {t.name: THRESHOLD_MAX if t.default == FUTHARK_DEFAULT_THRESHOLD else t.default
                for t in self.model.tree.thresholds}

    def _config(self, tuned: dict[str, int]) -> Config:
        return Config({**self._defaults(), **tuned})

    def _run(self, config: Config, d: ThresholdDataset) -> Generator[Need, None, Result]:
        yield Need((config,), fresh=True)
        return self.fresh_result(config)

    def _time(self, result: Result, d: ThresholdDataset) -> float | None:
        m = result.measurement
        if m.status is not Status.OK:
            return None
        samples = dict(m.extra.get("dataset_samples") or {}).get(d.name)
        if samples:
            return float(min(samples))
        return float(m.datasets[d.name]) if d.name in m.datasets else float(m.objective or math.inf)

    def _comparisons(self, result: Result, config: Config, d: ThresholdDataset) -> list[tuple[str, int]]:
        logged = parse_comparisons(result.measurement.log)
        if logged:
            return logged.get(d.name, [])
        out = []  # no log: the comparisons the paths make, as the log would show them
        for root in self.model.roots:
            for i in range(self.model.iterations[(d.name, root)]):
                node: str | None = root
                while node is not None:
                    e = self.model.value(d, node, i)
                    if e is None:
                        break
                    out.append((node, e))
                    outcome = as_int(config[node]) <= e
                    node = next((t.name for t in self.model.kids[node] if t.branch == outcome), None)
        return out

    def _algorithm(self) -> Iterator[Need]:
        tuned: dict[str, int] = {}
        for root in self.model.roots:
            for v in self.model.postorder(root):
                interval: tuple[int, int] | None = None
                for d in self.model.train:
                    interval = yield from self._tune_dataset(v, d, tuned, interval)
                tuned[v] = interval[1] if interval is not None else THRESHOLD_MIN
                self.trace.append({"threshold": v, "value": tuned[v], "interval": interval})
        self.final = self._config(tuned)
        yield Need((self.final,), fresh=True, meta={"final": True, "assignment": dict(tuned)})

    def _tune_dataset(self, v: str, d: ThresholdDataset, tuned: dict[str, int],
                      interval: tuple[int, int] | None) -> Generator[Need, None, tuple[int, int] | None]:
        t_max0 = interval[1] if interval is not None else THRESHOLD_MAX
        sample = self._config({**tuned, v: t_max0})
        result = yield from self._run(sample, d)
        t = self._time(result, d)
        if t is None:  # a failed sampling run is zero information
            return interval
        t_min, t_max = interval if interval is not None else (THRESHOLD_MIN, THRESHOLD_MAX)
        epars = sorted({e for name, e in self._comparisons(result, sample, d) if name == v and t_min < e < t_max})
        _, new_max = yield from self._binary_search(v, d, tuned, (t, t_max), epars)
        idx = epars.index(new_max) - 1 if new_max in epars else -1
        new_min = max(t_min, epars[idx]) if idx >= 0 else t_min
        return (new_min, new_max)

    def _runner(self, v: str, d: ThresholdDataset, tuned: dict[str, int],
                value: int) -> Generator[Need, None, float | None]:
        result = yield from self._run(self._config({**tuned, v: value}), d)
        return self._time(result, d)

    def _binary_search(self, v: str, d: ThresholdDataset, tuned: dict[str, int], best: Pair,
                       xs: list[int]) -> Generator[Need, None, Pair]:
        while True:
            half = len(xs) // 2
            if len(xs) - half < 2:  # base case: try every remaining candidate
                pairs = [best]
                for x in xs:
                    t = yield from self._runner(v, d, tuned, x)
                    if t is not None:
                        pairs.append((t, x))
                return min(pairs, key=lambda p: p[0])
            middle, middle2 = xs[half], xs[half + 1]
            t1 = yield from self._runner(v, d, tuned, middle)
            t2 = yield from self._runner(v, d, tuned, middle2)
            if t1 is not None and (t2 is None or t1 < t2):
                best, xs = min([(t1, middle), best], key=lambda p: p[0]), xs[:half]
            elif t2 is not None:
                best, xs = min([(t2, middle2), best], key=lambda p: p[0]), xs[half + 2:]
            else:
                return best


FutharkAutotuneConfig = searcher_config(FutharkAutotuneSearcher)
