"""ssvmbench from Python: one run or a sweep with the command line's configs.

    >>> from ssvmbench import api
    >>> trace, attrs = api.run(["solver=bcfw", "data=ocr", "lambda=0.01", "solver.passes=5"],
    ...                        run_dir="results/runs/bcfw_ocr")

``trace`` is the run log's tidy table (one row per checkpoint and iterate) and ``attrs`` its
attributes, as :func:`ssvmbench.runlog.read_log` returns them; the log stays in
``run_dir/run.h5`` (a finished log of the same configuration is read, not recomputed).

    >>> table = api.sweep({"solver": ["bcfw", "ssg"], "seed": [0, 1], "data": "ocr",
    ...                    "+data.subset": 0.05, "solver.passes": 5})

runs what ``ssvmbench run -m solver=bcfw,ssg seed=0,1 data=ocr +data.subset=0.05
solver.passes=5`` runs (into ``results/sweeps/DATE/TIME``, one folder per combination) and
returns ``ssvmbench results``' table of it (:func:`ssvmbench.results.table`).
"""

import datetime
from pathlib import Path

from hydra import compose, initialize_config_dir

from ssvmbench.app import store_plugin_configs
from ssvmbench.paths import config_dir
from ssvmbench.runlog import read_log
from ssvmbench.runner import run as run_config


def config(overrides=(), search_path=()):
    """The resolved run configuration of ``overrides`` (``key=value`` strings, as after
    ``ssvmbench run``), plugin solvers included; ``search_path``: more config sources
    (``file://DIR``, as ``--config-dir DIR`` adds)."""
    store_plugin_configs()
    extra = [f"hydra.searchpath=[{','.join(search_path)}]"] if search_path else []
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        return compose(config_name="config", overrides=[*overrides, *extra])


def run(overrides=(), run_dir=None):
    """Train as ``ssvmbench run OVERRIDES`` does, logging to ``run_dir/run.h5`` (default
    ``results/runs/DATE/TIME_SOLVER_DATA``); returns ``(trace, attrs)`` of the log."""
    cfg = config(overrides)
    if run_dir is None:
        now = datetime.datetime.now()
        run_dir = Path("results", "runs", f"{now:%Y-%m-%d}",
                       f"{now:%H-%M-%S-%f}_{cfg.solver.name}_{cfg.data.name}")
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    return read_log(run_config(cfg, run_dir, list(overrides)))


def sweep(overrides=(), sweep_dir=None):
    """Run a sweep as ``ssvmbench run -m OVERRIDES hydra.sweep.dir=SWEEP_DIR`` does (default
    ``results/sweeps/DATE/TIME``): ``overrides`` as strings (``["solver=bcfw,ssg",
    "seed=0,1"]``) or ``{key: value or list of values}``; a ``hydra/launcher=...`` override
    chooses where the runs go (default: one local worker; ``hydra.launcher.n_jobs=2`` two;
    ``hydra/launcher=slurm`` a SLURM array). Finished runs in ``sweep_dir`` are kept, stopped
    ones continued. Returns the results table of the sweep (:func:`ssvmbench.results.table`:
    one row per run, failed ones included)."""
    from ssvmbench.batch import check_jobs, is_hydra_override, sweep_jobs
    from ssvmbench.launchers import launcher_settings, run_batch
    from ssvmbench.results import table

    words = [f"{key}={_values(value)}" for key, value in overrides.items()] \
        if isinstance(overrides, dict) else list(overrides)
    if sweep_dir is None:
        now = datetime.datetime.now()
        sweep_dir = Path("results", "sweeps", f"{now:%Y-%m-%d}", f"{now:%H-%M-%S-%f}")
    jobs = sweep_jobs(words, sweep_dir)
    settings = launcher_settings([word for word in words if is_hydra_override(word)], sweep_dir)
    check_jobs(jobs)
    run_batch(jobs, settings)
    return table(sweep_dir)


def _values(value):
    """A sweep's values as an override writes them: ``[0, 1]`` -> ``0,1``, ``None`` ->
    ``null``, ``True`` -> ``true``."""
    if isinstance(value, (list, tuple, range)):
        return ",".join(map(_values, value))
    return {None: "null", True: "true", False: "false"}.get(value, str(value)) \
        if isinstance(value, (bool, type(None))) else str(value)
