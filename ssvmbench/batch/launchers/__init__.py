"""Where a batch of runs (:mod:`ssvmbench.batch.jobs`) runs: :mod:`.local` (worker processes on
this machine) or :mod:`.slurm` (one SLURM array through submitit), chosen by the same
``hydra/launcher=…`` overrides as a sweep's (``hydra_plugins.ssvmbench_launchers`` makes them
the Hydra launchers of ``ssvmbench run -m``)."""

from omegaconf import OmegaConf

from ssvmbench.common import slurm_jobs
from ssvmbench.common.errors import UserError

SLURM_STARTUP_S = 2.5    # per SLURM task beyond its run's logged time: the submitit process,
#                          imports, data loading, kernels from the cache (2.4 s on average
#                          over the 176 tasks of the BCFW reproduction on the one-node test
#                          cluster); a real cluster's scheduling latency comes on top


def launcher_settings(hydra_overrides, sweep_dir):
    """``hydra.launcher`` as ``ssvmbench run -m HYDRA_OVERRIDES hydra.sweep.dir=SWEEP_DIR``
    would have it (configs/hydra/launcher/), resolved."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    from ssvmbench.common.paths import config_dir

    try:
        with initialize_config_dir(str(config_dir()), version_base=None):
            cfg = compose("config", overrides=[*hydra_overrides, f"hydra.sweep.dir={sweep_dir}"],
                          return_hydra_config=True)
    except HydraException as err:
        raise UserError(f"{' '.join(hydra_overrides)}: {err}") from None
    return OmegaConf.to_container(cfg.hydra.launcher, resolve=True)


def workers(settings, runs):
    """``(runs at a time, start-up seconds per run beside the batch's own)`` of a launcher;
    on SLURM at most ``array_parallelism`` tasks and as many as the partition's CPUs hold at
    ``cpus_per_task`` each (when ``sinfo`` says how many it has)."""
    from ssvmbench.batch.launchers.local import worker_count

    kind = settings["_target_"].rsplit(".", 1)[-1]
    if kind == "SlurmLauncher":
        cpus = slurm_jobs.partition_cpus(settings.get("partition"))
        fit = cpus // max(1, settings.get("cpus_per_task") or 1) if cpus else runs
        return max(1, min(runs, settings.get("array_parallelism") or runs, fit)), SLURM_STARTUP_S
    return (worker_count(settings["n_jobs"]) if kind == "LocalLauncher" else 1), 0.0


def run_batch(jobs, settings):
    """Run ``jobs`` with the launcher ``settings`` (:func:`launcher_settings`); returns the
    batch's exit status."""
    settings = dict(settings)
    kind = settings.pop("_target_").rsplit(".", 1)[-1]
    if kind == "SlurmLauncher":
        from ssvmbench.batch.launchers.slurm import run_slurm
        return run_slurm(jobs, settings)
    if kind not in ("LocalLauncher", "BasicLauncher"):
        raise UserError(f"hydra/launcher: a batch runs on local, joblib or slurm, not {kind}")
    from ssvmbench.batch.launchers.local import run_local, worker_count
    return run_local(jobs, worker_count(settings.get("n_jobs", 1)))
