"""ssvmbench from Python: one run or a sweep with the command line's configs.

    >>> from ssvmbench import api
    >>> trace, attrs = api.run(["solver=bcfw", "data=ocr", "lambda=0.01", "solver.passes=5"],
    ...                        run_dir="results/runs/bcfw_ocr")

``trace`` is the run log's tidy table (one row per checkpoint and iterate) and ``attrs`` its
attributes, as :func:`ssvmbench.run.runlog.read_log` returns them; the log stays in
``run_dir/run.h5`` (a finished log of the same configuration is read, not recomputed).

    >>> table = api.sweep({"solver": ["bcfw", "ssg"], "seed": [0, 1], "data": "ocr",
    ...                    "+data.subset": 0.05, "solver.passes": 5})

runs what ``ssvmbench run -m solver=bcfw,ssg seed=0,1 data=ocr +data.subset=0.05
solver.passes=5`` runs (into ``results/sweeps/DATE/TIME``, one folder per combination) and
returns ``ssvmbench results``' table of it (:func:`ssvmbench.batch.results.table`).
"""

import datetime
from pathlib import Path

from ssvmbench.common.errors import UserError
from ssvmbench.run.compose import config
from ssvmbench.run.runlog import read_log
from ssvmbench.run.runner import run as run_config


def run(overrides=(), run_dir=None):
    """Train as ``ssvmbench run OVERRIDES`` does, logging to ``run_dir/run.h5`` (default
    ``results/runs/DATE/TIME_SOLVER_DATA``); returns ``(trace, attrs)`` of the log.
    ``overrides``: strings (``["solver=bcfw", "lambda=0.01"]``) or ``{key: value}``."""
    words = override_words(overrides)
    cfg = config(words)
    if run_dir is None:
        now = datetime.datetime.now()
        run_dir = Path("results", "runs", f"{now:%Y-%m-%d}",
                       f"{now:%H-%M-%S-%f}_{cfg.solver.name}_{cfg.data.name}")
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    return read_log(run_config(cfg, run_dir, words))


def sweep(overrides=(), sweep_dir=None):
    """Run a sweep as ``ssvmbench run -m OVERRIDES hydra.sweep.dir=SWEEP_DIR`` does (default
    ``results/sweeps/DATE/TIME``): ``overrides`` as strings (``["solver=bcfw,ssg",
    "seed=0,1"]``) or ``{key: value or list of values}``; a ``hydra/launcher=...`` override
    chooses where the runs go (default: one local worker; ``hydra.launcher.n_jobs=2`` two;
    ``hydra/launcher=slurm`` a SLURM array). Finished runs in ``sweep_dir`` are kept, stopped
    ones continued. Returns the results table of the sweep (:func:`ssvmbench.batch.results.table`:
    one row per run, failed ones included). A value of the wrong type is one
    :class:`~ssvmbench.common.errors.UserError` naming the setting, as on the command line."""
    from ssvmbench.batch.jobs import check_jobs, is_hydra_override, sweep_jobs
    from ssvmbench.batch.launchers import launcher_settings, run_batch
    from ssvmbench.batch.results import table
    from ssvmbench.common.messages import start_planning

    start_planning()
    words = override_words(overrides)
    if sweep_dir is None:
        now = datetime.datetime.now()
        sweep_dir = Path("results", "sweeps", f"{now:%Y-%m-%d}", f"{now:%H-%M-%S-%f}")
    jobs = sweep_jobs(words, sweep_dir)
    settings = launcher_settings([word for word in words if is_hydra_override(word)], sweep_dir)
    check_jobs(jobs)
    run_batch(jobs, settings)
    return table(sweep_dir)


def override_words(overrides):
    """The command line's words of ``overrides``: a list of ``key=value`` strings as it is,
    or ``{key: value}`` written as Hydra reads values (a list or tuple of values at the top
    is a sweep, ``0,1``; nested ones ``[0,1]``, dicts ``{a:1}``; None, True ``null``,
    ``true``); anything else is one line naming the setting."""
    if isinstance(overrides, dict):
        return [f"{key}={_value(key, value, top=True)}" for key, value in overrides.items()]
    if isinstance(overrides, str) or not all(isinstance(word, str) for word in overrides):
        raise UserError(f"overrides={overrides!r}: give a list of 'key=value' strings or a "
                        "dict {key: value}")
    return list(overrides)


def _value(key, value, top=False):
    """``value`` of setting ``key`` as an override writes it (see :func:`override_words`)."""
    if isinstance(value, (list, tuple, range)):
        text = ",".join(_value(key, item) for item in value)
        return text if top else f"[{text}]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{name}:{_value(key, item)}" for name, item in value.items()) + "}"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (str, int, float)):
        return str(value)
    raise UserError(f"{key}={value!r}: a value of type {type(value).__name__} is not a "
                    "setting's; give a number, a string, True, False, None, a list of values "
                    "to sweep or a dict")
