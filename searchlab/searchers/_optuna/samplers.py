"""The Optuna samplers as searchers: TPE, CMA-ES, GP, QMC and random (the shared ask/tell
base, encoding, failure and duplicate handling are in :mod:`.base`)."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from searchlab.core.spaces import KnobSpace, Space
from searchlab.searchers._optuna.base import OptunaSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._support.neighbours import Grid
from searchlab.searchers._tunable import Annotated, Tunable

ACQF_SAMPLES = 1024  # Optuna 5.0's own values are 2048 and 10 (see OptunaGpSearcher)
LOCAL_SEARCHES = 6


class OptunaTpeSearcher(OptunaSearcher):
    """Optuna's TPESampler.

    Univariate TPE (``multivariate=false``) models each knob alone, and once its per-knob
    densities settle it draws configurations already measured again and again: with the base's
    ``max_retries=16`` every repeat asked the sampler again (a TPE fit each), and one
    220-evaluation replay on convolution_A100 cost about 2 minutes. So univariate TPE asks at
    most ``univariate_retries`` times (default 2) and then proposes a uniformly random unseen
    configuration from the searcher's seeded generator, as the base does after ``max_retries``
    (each repeat is still told its known loss, so the sampler learns it). This changes univariate
    TPE's trajectories only where it drew more than ``univariate_retries`` repeats in a row;
    multivariate TPE (the default) keeps ``max_retries``.
    """

    name = "optuna_tpe"
    sampler_label = "TPESampler"

    def __init__(self, space: Space, *, n_startup_trials: Annotated[int, Tunable(2, 40, log=True)] = 10,
                 n_ei_candidates: Annotated[int, Tunable(8, 128, log=True)] = 24,
                 multivariate: Annotated[bool, Tunable(choices=(True, False))] = True,
                 group: bool = False, constant_liar: bool = True, univariate_retries: int = 2,
                 **kwargs: Any) -> None:
        from searchlab.errors import ConfigError

        if isinstance(univariate_retries, bool) or not isinstance(univariate_retries, int) or univariate_retries < 1:
            raise ConfigError(f"searcher.univariate_retries={univariate_retries!r}: must be an integer >= 1")
        self.options = {"n_startup_trials": n_startup_trials, "n_ei_candidates": n_ei_candidates,
                        "multivariate": multivariate, "group": group, "constant_liar": constant_liar}
        super().__init__(space, **kwargs)
        if not multivariate:
            self.max_retries = min(self.max_retries, univariate_retries)

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.TPESampler(seed=seed, **self.options)


# group: decompose conditional (DAG) spaces into groups (experimental in Optuna)
# univariate_retries: with multivariate=false, sampler draws before a random unseen configuration (at most max_retries)
OptunaTpeConfig = searcher_config(OptunaTpeSearcher)


class OptunaCmaesSearcher(OptunaSearcher):
    name = "optuna_cmaes"
    sampler_label = "CmaEsSampler"
    models_conditionals = False
    uses_constraints = False  # CMA-ES ranks values only: failures get the worst loss seen

    def __init__(self, space: Space, *, n_startup_trials: Annotated[int, Tunable(1, 20, log=True)] = 1,
                 popsize: int | None = None,
                 with_margin: bool = True, use_separable_cma: bool = False, **kwargs: Any) -> None:
        self.options = {"n_startup_trials": n_startup_trials, "popsize": popsize, "with_margin": with_margin,
                        "use_separable_cma": use_separable_cma}
        super().__init__(space, **kwargs)

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False, **self.options)


# popsize: None: 4 + floor(3 ln d)
# with_margin: CMA-ES with margin (Hamano et al. 2022) for integer parameters
OptunaCmaesConfig = searcher_config(OptunaCmaesSearcher)


class OptunaGpSearcher(OptunaSearcher):
    """Optuna's GPSampler; the size of its acquisition optimiser is an option (issue 16).

    A proposal fits the objective GP and, once failures exist, the constraint GP (L-BFGS-B on
    the marginal likelihood), then maximises the acquisition: ``acqf_samples`` QMC points
    scored, and a discrete local search from the ``local_searches`` best. Optuna 5.0 uses
    2048 and 10 and exposes them only as the sampler's private attributes
    (``_n_preliminary_samples``, ``_n_local_search``), which we set when they exist. A profile
    at 200 evaluations on the 10-knob space of bench/proposal_time.py, one core: with Optuna's
    values 0.32 s of a 0.45 s proposal is that optimiser (two thirds of it the local searches,
    each step a Python-level torch call on a 256-point GP) and 0.13 s the two GP fits; before
    ``repair``, each known-infeasible or repeated draw cost a whole proposal again (median
    0.99 s). Our defaults, 1024 and 6, bring the proposal under issue 16's 0.5 s bound
    (bench/results/proposal_time.json, docs/threads.md); the quality they give on the Kernel
    Tuner tables is in docs/baselines.md.
    """

    name = "optuna_gp"
    sampler_label = "GPSampler"
    models_conditionals = False

    def __init__(self, space: Space, *, n_startup_trials: Annotated[int, Tunable(2, 40, log=True)] = 10,
                 deterministic_objective: bool = False,
                 acqf_samples: Annotated[int, Tunable(128, 4096, log=True)] = ACQF_SAMPLES,
                 local_searches: Annotated[int, Tunable(2, 16, log=True)] = LOCAL_SEARCHES, max_retries: int = 4,
                 repair: bool = True, **kwargs: Any) -> None:
        from searchlab.errors import ConfigError

        # max_retries: each retry is a GP fit (DESIGN.md: ~0.1 s at 100 trials, ~4 s at 1000), hence 4, not 16
        for option, value, low in (("acqf_samples", acqf_samples, 1), ("local_searches", local_searches, 2)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"searcher.{option}={value!r}: must be an integer >= {low}")
        self.options = {"n_startup_trials": n_startup_trials, "deterministic_objective": deterministic_objective}
        self.acqf = {"_n_preliminary_samples": acqf_samples, "_n_local_search": local_searches}
        super().__init__(space, max_retries=max_retries, **kwargs)
        if repair and isinstance(self.space, KnobSpace):
            self._grid = Grid(self.space)

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        if find_spec("torch") is None:
            return (f"searcher {cls.name!r}: Optuna's GPSampler needs the 'torch' package, which cannot be "
                    "imported here (install the gp extra: pip install -e '.[gp]', or make setup)")
        return super()._check_space(space)

    def _sampler(self, optuna: Any, seed: int) -> Any:
        sampler = optuna.samplers.GPSampler(seed=seed, warn_independent_sampling=False, **self.options)
        for attr, value in self.acqf.items():
            if hasattr(sampler, attr):  # private in Optuna 5.0: a later Optuna without them keeps its own
                setattr(sampler, attr, value)
        return sampler


# acqf_samples: QMC points scored by the acquisition optimiser (Optuna's default: 2048)
# local_searches: discrete local searches started from the best of them (Optuna's default: 10)
# repair: replace a repeated or known-infeasible draw by the nearest fresh valid configuration
#   (false: ask the GP again, up to max_retries times; each ask costs a whole proposal)
OptunaGpConfig = searcher_config(OptunaGpSearcher)


class OptunaQmcSearcher(OptunaSearcher):
    name = "optuna_qmc"
    sampler_label = "QMCSampler"
    models_conditionals = False

    def __init__(self, space: Space, *, qmc_type: Annotated[str, Tunable(choices=("sobol", "halton"))] = "sobol",
                 scramble: Annotated[bool, Tunable(choices=(True, False))] = True, **kwargs: Any) -> None:
        from searchlab.errors import ConfigError

        if qmc_type not in ("sobol", "halton"):
            raise ConfigError(f"searcher.qmc_type={qmc_type!r}: must be 'sobol' or 'halton'")
        self.options = {"qmc_type": qmc_type, "scramble": scramble}
        super().__init__(space, **kwargs)

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.QMCSampler(seed=seed, warn_independent_sampling=False, **self.options)


# qmc_type: sobol | halton
# scramble: without scrambling every seed gives the same sequence
OptunaQmcConfig = searcher_config(OptunaQmcSearcher)


class OptunaRandomSearcher(OptunaSearcher):
    name = "optuna_random"
    sampler_label = "RandomSampler"

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.RandomSampler(seed=seed)


OptunaRandomConfig = searcher_config(OptunaRandomSearcher)
