"""Hydra launchers for ``ssvmbench run -m``: the sweep's runs become one batch
(:mod:`ssvmbench.batch.jobs`) on a local pool (``hydra/launcher=local``, the default, or
``joblib``, the same pool under the name earlier command lines use) or on SLURM
(``hydra/launcher=slurm``). The sweep command prints one line per run as it ends and a table,
and exits with the batch's status (non-zero if a run failed or the sweep was stopped)."""

import sys
from dataclasses import dataclass
from pathlib import Path

from hydra.core.config_store import ConfigStore
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.launcher import Launcher
from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import BaseSubmititLauncher

from ssvmbench.batch.jobs import Job
from ssvmbench.common import hydra_internals
from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import Planning
from ssvmbench.run.compose import Composer, sweep_subdir


def _sources(config):
    """The sweep's config sources beyond the package's (``file://DIR`` of ``--config-dir``)."""
    return tuple(f"{source.schema}://{source.path}"
                 for source in config.hydra.runtime.config_sources
                 if source.provider not in ("hydra", "main", "schema"))


class BatchSweeper(hydra_internals.basic_sweeper()):
    """Hydra's basic sweeper (the same jobs in the same order), whose check that every job
    composes before any is launched composes as a batch does (:class:`~ssvmbench.run.compose.
    Composer`: Hydra once per distinct choice of config groups) instead of composing each
    job in full: a sweep of thousands of runs starts in seconds, not minutes
    (configs/hydra/sweeper/batch.yaml)."""

    def validate_batch_is_legal(self, batch):
        composer = Composer(sweep=(self.hydra_context.config_loader, self.config))
        progress = Planning("composing", len(batch))
        for k, overrides in enumerate(batch):
            if k % 64 == 0:
                progress(k)
            with composer.composed(overrides):
                pass


class _BatchLauncher:
    """What both launchers share: the sweep's jobs as a batch, and the end of the sweep."""

    def setup(self, *, hydra_context, task_function, config):
        self.hydra_context, self.config = hydra_context, config

    def jobs(self, job_overrides):
        """The sweep's runs, each in the directory Hydra gives it (``hydra.sweep.dir`` /
        ``hydra.sweep.subdir``: named without composing each job where the sweep's folders
        are configs/config.yaml's, :func:`~ssvmbench.run.compose.sweep_subdir`), with the
        sweep's config sources (``--config-dir``)."""
        sources = _sources(self.config)
        subdir = sweep_subdir(self.config)
        progress = Planning("naming", len(job_overrides))
        jobs = []
        for k, overrides in enumerate(job_overrides):
            if k % 256 == 0:
                progress(k)
            if subdir is not None:
                run_dir = Path(self.config.hydra.sweep.dir) / subdir(list(overrides))
            else:
                sweep = self.hydra_context.config_loader.load_sweep_config(self.config,
                                                                           list(overrides))
                run_dir = Path(sweep.hydra.sweep.dir) / str(sweep.hydra.sweep.subdir)
            jobs.append(Job(tuple(overrides), run_dir, search_path=sources))
        return jobs

    def launch(self, job_overrides, initial_job_idx):
        try:
            status = self.run(self.jobs(job_overrides))
        except UserError as err:
            print(f"ssvmbench run: error: {err}", file=sys.stderr)
            sys.exit(2)
        if status:
            sys.exit(status)
        return [JobReturn(overrides=list(overrides), status=JobStatus.COMPLETED,
                          _return_value=None) for overrides in job_overrides]


class LocalLauncher(_BatchLauncher, Launcher):
    """``n_jobs`` worker processes on this machine (joblib's meaning: -1 one per core)."""

    def __init__(self, n_jobs=1):
        self.n_jobs = n_jobs

    def run(self, jobs):
        from ssvmbench.batch.launchers.local import run_local, worker_count

        return run_local(jobs, worker_count(self.n_jobs))


class SlurmLauncher(_BatchLauncher, BaseSubmititLauncher):
    """One SLURM array through submitit, with hydra-submitit-launcher's settings
    (configs/hydra/launcher/slurm.yaml)."""

    _EXECUTOR = "slurm"

    def run(self, jobs):
        from ssvmbench.batch.launchers.slurm import run_slurm

        return run_slurm(jobs, self.params)


@dataclass
class SlurmConf(SlurmQueueConf):
    """hydra-submitit-launcher's SLURM settings, and ``detach``: submit and return
    (``ssvmbench status DIR`` follows the runs)."""

    _target_: str = "hydra_plugins.ssvmbench_launchers.launchers.SlurmLauncher"
    detach: bool = False


ConfigStore.instance().store(group="hydra/launcher", name="ssvmbench_slurm", node=SlurmConf,
                             provider="ssvmbench")
