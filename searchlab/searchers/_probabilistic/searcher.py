"""Probabilistic auto-tuning with constraints: the tuning-knob search of paper 001.

Fig. 8: test one configuration at random; then, at every step, draw 100 random untested
configurations (``candidates``), predict every sensor at each with the probabilistic
regression of §5 (``_regression``), combine the predictions into derived features and the
optimisation formula (§6), and test the candidate maximising
``P(quality > q_t) x min_f P(constraint f holds)`` (§4). The sensor model (which sensors,
formulas and constraints, with proxy constraints whose cutoff is learned per §4.1) comes with
the problem's space (``space.sensor_model``, :mod:`searchlab.core.sensors`); a space without one
gets the objective alone plus the success/failure indicator (failures nobody explains).

Choices the paper leaves open, and ours:

- §7.1 target quality: the high-water mark, moved by ``target_gain x (evenness_target - E)
  x std(qualities)``, where ``E`` is the mean nearest-neighbour distance of the tested points
  over that of uniformly random sets of as many configurations ([8]/[12]-style evenness; the
  details are in [25], which we do not have). The paper says the target goes *up* when the
  distribution gets too even, but also that higher targets *even out* the distribution; a
  stable controller needs the second reading, so the target rises when the tested points
  are too clustered (E below the target evenness) and falls when they are too even.
- §7 "concurrent testing" (said to be easy, not described): configurations in flight are
  never proposed again, and each enters the regressions as a *believer* at its predicted
  mean (kriging believer, Ginsbourger et al. 2010) — the framework's own best guess, so the
  next pick is made as if that test had returned what the model expects; a batch ``ask(n)``
  picks one candidate at a time the same way. Proxy cutoffs and the target use only
  finished tests.
- §7 constraint scaling (named only): each constraint's predicted P(ok) is calibrated
  against its observed failure rate among the searcher's own tests
  (``_probabilistic_calibration.Calibration``; ``constraint_scaling``).
- §7 boundary conditions (named only): derivative projections never step outside the space
  (``_regression``; ``boundary``).
- §5.2: the projected derivative is the mean of the slopes to the neighbours, where the
  paper's formula read literally sums them (``_regression``).
- Quality transform (``quality``): ``raw`` (the paper: the optimisation formula as is),
  ``log`` or ``inverse`` (``_probabilistic_model``, ``_probabilistic_calibration.transform``).
- Distances are rank-scaled per knob, not scaled by each knob's impact (§7 "distance
  scaling"; ``_regression``).

If the sensor model's objective reads a sensor the problem's successful results do not
report, the searcher stops with a ConfigError at the first such result instead of searching
blind (that bug once made the search on Kernel Tuner tables random search).

``probabilistic_trivial`` is §8's ablation: no failure prediction; failed tests are given the
lowest quality seen so far (before any success they carry no value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from searchlab.core.records import Candidate, Config, Result, Status
from searchlab.core.sensors import Normal, SensorModel, sensor_model_of
from searchlab.core.spaces import KnobSpace
from searchlab.errors import ConfigError
from searchlab.searchers._base import ProposalLike, Searcher
from searchlab.searchers._probabilistic.model import QUALITIES, Calibration, Evidence, Options, mean_nn_distance
from searchlab.searchers._probabilistic.regression import Encoder
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable

ENUMERATE_BELOW = 200_000  # spaces this small are listed once; larger ones are sampled


class ProbabilisticSearcher(Searcher):
    name = "probabilistic"
    space_kinds = (KnobSpace,)
    trivial = False

    def __init__(self, space: KnobSpace, *, candidates: Annotated[int, Tunable(20, 400, log=True)] = 100,
                 neighbors: Annotated[str, Tunable(choices=("gabriel", "knn"))] = "gabriel",
                 k_factor: Annotated[float, Tunable(1.0, 4.0)] = 2.0,
                 gabriel_alpha: float = 1.0, epsilon: float = 1e-4, adjust_target: bool = True,
                 evenness_target: Annotated[float, Tunable(0.5, 0.95)] = 0.75,
                 target_gain: Annotated[float, Tunable(0.25, 4.0, log=True)] = 1.0,
                 combine: Annotated[str, Tunable(choices=("min", "product"))] = "min",
                 use_sensors: bool = True, quality: str = "raw", constraint_scaling: bool = True,
                 boundary: bool = True, **kwargs: Any) -> None:
        _check_options(candidates, neighbors, k_factor, gabriel_alpha, epsilon, evenness_target, combine)
        if quality not in QUALITIES:
            raise ConfigError(f"searcher.quality={quality!r}: must be one of {list(QUALITIES)}")
        super().__init__(space, **kwargs)
        assert isinstance(self.space, KnobSpace)
        self.knobs: KnobSpace = self.space
        self.candidates = candidates
        self.model = sensor_model_of(self.space) if use_sensors else SensorModel.default()
        self.options = Options(k_factor, neighbors, gabriel_alpha, epsilon, adjust_target, evenness_target,
                               target_gain, combine, self.trivial, quality, boundary)
        self.encoder = Encoder(self.knobs)
        self.scaling = constraint_scaling and not self.trivial
        self.calibration = Calibration()
        self._predicted: dict[Config, dict[str, float]] = {}  # log P(ok) per constraint when proposed
        self._told_rows: list[tuple[Config, np.ndarray, Result]] = []
        self._all: list[Config] | None = list(self.knobs.enumerate()) if self.knobs.size() <= ENUMERATE_BELOW else None
        self._exhausted = False
        self._reference: dict[int, float] = {}
        self._ref_rng = np.random.default_rng(None if self.seed is None else [self.seed, 7001])

    # -- Fig. 8 -----------------------------------------------------------------------------
    def _tell(self, candidate: Candidate, result: Result) -> None:
        m = result.measurement
        probe = Evidence(self.model, self.encoder, self.direction, self.options)
        problem = probe.quality_problem(candidate.proposal, m)
        if problem is not None:
            raise ConfigError(f"searcher={self.name}: {problem}")
        predicted = self._predicted.pop(candidate.proposal, None)
        if predicted is not None and m.status is not Status.INFEASIBLE:
            self.calibration.record(predicted, probe.verdicts(m))
        self._told_rows.append((candidate.proposal, self.encoder.encode([candidate.proposal])[0], result))

    def _evidence(self) -> Evidence:
        evidence = Evidence(self.model, self.encoder, self.direction, self.options)
        for config, x, result in self._told_rows:
            evidence.add(config, x, result.measurement)
        return evidence

    def quality_prediction(self, configs: Sequence[Config]) -> tuple[Normal | None, float | None]:
        """The model's predicted quality (high is good) at ``configs`` (in the searcher's view)
        and the current target (§7.1 adjustment left out): what Fig. 8 line 14 compares."""
        evidence = self._evidence()
        query = evidence.query(self.encoder.encode(list(configs)))
        return evidence.quality(configs, query), evidence.target(None)

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        evidence = self._evidence()
        for pending in sorted(self.pending.values(), key=lambda c: c.id):
            evidence.add_believer(pending.proposal, self.encoder.encode([pending.proposal])[0])
        chosen: list[Config] = []
        for _ in range(n):
            pool = self._candidates(set(chosen))
            if not pool:
                self._exhausted = True
                break
            if not evidence.rows:
                pick = pool[0]  # Fig. 8 line 3: the first test is random
            else:
                x = self.encoder.encode(pool)
                factors = self.calibration.factors() if self.scaling else None
                scores = evidence.log_scores(pool, x, self._reference_nn(len(evidence.rows)), factors)
                best = int(np.argmax(scores))
                pick = pool[best]
                self._predicted[pick] = {name: float(t[best]) for name, t in evidence.last_terms.items()}
            chosen.append(pick)
            evidence.add_believer(pick, self.encoder.encode([pick])[0])
        return chosen

    def _candidates(self, also_taken: set[Config]) -> list[Config]:
        """Up to ``candidates`` random untested members satisfying the known constraints."""

        def taken(c: Config) -> bool:
            return self.seen(c) or c in also_taken

        out: list[Config] = []
        if self._all is not None:  # a random subset of the untested members: walk a random order
            for i in self.rng.permutation(len(self._all)):
                config = self._all[i]
                if not taken(config):
                    out.append(config)
                    if len(out) == self.candidates:
                        break
            return out
        for _ in range(20 * self.candidates):
            config = self.knobs.sample(self.rng)
            if not taken(config) and config not in out:
                out.append(config)
                if len(out) == self.candidates:
                    break
        return out

    def _reference_nn(self, count: int) -> float | None:
        """Mean nearest-neighbour distance of ``count`` random members (§7.1 evenness)."""
        if not self.options.adjust_target or count < 3 or count > 400:
            return None
        if count not in self._reference:
            values = []
            for _ in range(8):
                if self._all is not None:
                    if len(self._all) < count:
                        return None
                    picks = [self._all[i] for i in self._ref_rng.choice(len(self._all), count, replace=False)]
                else:
                    picks = [self.knobs.sample(self._ref_rng) for _ in range(count)]
                values.append(mean_nn_distance(self.encoder.encode(picks)))
            self._reference[count] = float(np.mean(values))
        return self._reference[count] if self._reference[count] > 0 else None

    def _done(self) -> bool:
        return self._exhausted


# candidates: random untested candidates scored per test (§4, Fig. 8)
# neighbors: gabriel (§7.2, the complete method) | knn (k nearest, §5.1.2)
# k_factor: k = k_factor x number of knobs (§5.1.2: 2)
# gabriel_alpha: region of influence: 1 ball (Gabriel graph), < 1 thinner ellipsoid ([13])
# epsilon: derivative step in scaled knob units (§5.2)
# adjust_target: §7.1 target adjustment
# evenness_target: tested-point evenness aimed at (1 = as even as random sets)
# combine: min over constraints (§4) | product (independent constraints)
# use_sensors: false: ignore the space's sensor model (objective + failures only)
ProbabilisticConfig = searcher_config(ProbabilisticSearcher)


class ProbabilisticTrivialSearcher(ProbabilisticSearcher):
    """§8's ablation: the same search with failures given the lowest quality seen so far."""

    name = "probabilistic_trivial"
    trivial = True


ProbabilisticTrivialConfig = searcher_config(ProbabilisticTrivialSearcher)


def _check_options(candidates: int, neighbors: str, k_factor: float, alpha: float, eps: float,
                   evenness: float, combine: str) -> None:
    if candidates < 1:
        raise ConfigError(f"searcher.candidates={candidates}: must be >= 1")
    if neighbors not in ("knn", "gabriel"):
        raise ConfigError(f"searcher.neighbors={neighbors!r}: must be 'knn' or 'gabriel'")
    if k_factor <= 0:
        raise ConfigError(f"searcher.k_factor={k_factor}: must be > 0")
    if not 0 < alpha <= 1:
        raise ConfigError(f"searcher.gabriel_alpha={alpha}: must be in (0, 1]")
    if not eps > 0:
        raise ConfigError(f"searcher.epsilon={eps}: must be > 0")
    if not evenness > 0:
        raise ConfigError(f"searcher.evenness_target={evenness}: must be > 0")
    if combine not in ("min", "product"):
        raise ConfigError(f"searcher.combine={combine!r}: must be 'min' or 'product'")
