"""``-m``: a sweep through Hydra's own sweeper and launcher (issue 36, item 5; issue 37, item 10).

Before anything runs, every job of the sweep is composed and checked (:func:`check_sweep`): one
bad value (``seed=0,-1``), unknown name (``searcher=random,nope``) or incompatible pair gives one
line, exit status 2, and no job directory. Then the sweep goes to Hydra's configured sweeper
(``hydra/sweeper``) and launcher (``hydra/launcher``: the basic one runs jobs one after another,
``joblib`` in parallel processes, ``submitit_local``/``submitit_slurm`` as submitit jobs, ``ray``
...), with Hydra's callbacks, as ``python app.py -m`` would.

Compose-once: the launcher asks the sweep's config loader for each job's config; ours
(:class:`ComposedJobs`) hands back the configuration the check composed (a copy, with the
master's resolver cache, as Hydra's ``load_sweep_config`` does), so each job is composed once,
and the sweep itself once. Overrides a sweeper invents (e.g. an Optuna sweeper's) are composed
by Hydra's own loader and checked by the job itself.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from omegaconf import DictConfig

from searchlab.errors import ConfigError, SearchlabError

if TYPE_CHECKING:
    from hydra.core.config_loader import ConfigLoader

    from searchlab.cli.compose import Job


class SweepInterrupted(KeyboardInterrupt):
    """A job was interrupted (SIGINT/SIGTERM, its records and summary written): the sweep stops there, with the
    job's exit status, as the loop before Hydra's launchers did. A KeyboardInterrupt, so Hydra's ``run_job``
    (which records an Exception as the job's failure and goes on) lets it through."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class ComposedJobs:
    """Hydra's config loader, except that a job composed by the check is not composed again.

    Picklable: launchers (joblib, submitit) send it to the processes that run the jobs."""

    def __init__(self, loader: Any, jobs: dict[tuple[str, ...], DictConfig]) -> None:
        self.loader = loader
        self.jobs = jobs

    def load_sweep_config(self, master_config: DictConfig, sweep_overrides: list[str]) -> DictConfig:
        from omegaconf import OmegaConf

        composed = self.jobs.get(tuple(sweep_overrides))
        if composed is None:
            loaded: DictConfig = self.loader.load_sweep_config(master_config, sweep_overrides)
            return loaded
        config = copy.deepcopy(composed)
        OmegaConf.set_readonly(config.hydra, False)  # as Hydra's loader leaves it (HydraConfig set it read-only)
        OmegaConf.copy_cache(from_config=master_config, to_config=config)  # the sweep's ${now:} in every job
        return config

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "loader" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["loader"], name)


def check_sweep(overrides: list[str]) -> list[tuple[list[str], Job]]:
    """Every job composed and prepared (nothing started or written); the first refusal names its job."""
    from searchlab.cli.compose import compose, task_combinations
    from searchlab.run.prepare import prepare

    hydra, combinations = task_combinations(overrides)
    jobs = []
    for num, task in enumerate(combinations):
        try:
            job = compose(hydra + task, num)
            prepare(job.cfg, job.run_dir, names=job.names, overrides=job.overrides).close()
        except SearchlabError as exc:
            refused = ConfigError(f"sweep job {num} ({' '.join(task)}): {exc}")
            refused.exit_status = exc.exit_status
            raise refused from None
        jobs.append((task, job))
    return jobs


def launch(overrides: list[str], jobs: Sequence[tuple[list[str], Job]], task: Callable[[DictConfig], int]) -> int:
    """Run the checked jobs through Hydra's sweeper and launcher; the first non-zero job status.

    ``task`` is each job's function (``searchlab.cli.main.sweep_job``), passed in so that this module does
    not import the one that imports it."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.plugins import Plugins
    from hydra.core.utils import JobReturn
    from hydra.types import HydraContext, RunMode
    from omegaconf import OmegaConf

    from searchlab.cli.compose import hydra_app


    with hydra_app() as app:
        master = app.compose_config("config", overrides, run_mode=RunMode.MULTIRUN, with_log_configuration=True)
        HydraConfig.instance().set_config(master)
        print(f"searchlab: sweep directory: {Path(str(master.hydra.sweep.dir)).resolve()}", flush=True)
        callbacks = _callbacks(master)
        callbacks.on_multirun_start(config=master, config_name="config")
        composed = {tuple(args): job.full for args, job in jobs if job.full is not None}
        loader = cast("ConfigLoader", ComposedJobs(app.config_loader, composed))  # duck-typed: delegates the rest
        context = HydraContext(config_loader=loader, callbacks=callbacks)
        sweeper = Plugins.instance().instantiate_sweeper(config=master, hydra_context=context, task_function=task)
        arguments = OmegaConf.to_container(master.hydra.overrides.task, resolve=False)
        assert isinstance(arguments, list)
        from searchlab.cli.stop import coordinate

        sweep_dir = Path(str(master.hydra.sweep.dir)).resolve()
        try:
            with coordinate(SweepInterrupted):  # workers stop cleanly before the launcher aborts (issue 47, case 5)
                batches = sweeper.sweep(arguments=arguments)
        except SweepInterrupted as stop:
            _point_to_study(sweep_dir)
            return stop.status  # the job said so already
        callbacks.on_multirun_end(config=master, config_name="config")
    _point_to_study(sweep_dir)
    statuses = [r.return_value for batch in batches or [] for r in batch if isinstance(r, JobReturn)]
    return next((int(s) for s in statuses if isinstance(s, int) and s), 0)


def _point_to_study(sweep_dir: Path) -> None:
    """A sweep ends with the command that compares its runs (issue 46, item 4), spelt to work when pasted."""
    from searchlab.core.commands import command

    if any(sweep_dir.glob("*/results.db")):
        print(f"searchlab: compare the runs: {command('searchlab.study', sweep_dir)}", flush=True)


def _callbacks(master: DictConfig) -> Any:
    from hydra._internal.callbacks import Callbacks

    return Callbacks(master)

