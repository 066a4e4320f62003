"""ssvmbench from Python: one run with the command line's configs.

    >>> from ssvmbench import api
    >>> trace, attrs = api.run(["solver=bcfw", "data=ocr", "lambda=0.01", "solver.passes=5"],
    ...                        run_dir="results/runs/bcfw_ocr")

``trace`` is the run log's tidy table (one row per checkpoint and iterate) and ``attrs`` its
attributes, as :func:`ssvmbench.runlog.read_log` returns them; the log stays in
``run_dir/run.h5`` (a finished log of the same configuration is read, not recomputed).
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
