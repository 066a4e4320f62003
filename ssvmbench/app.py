"""The Hydra app behind ``ssvmbench run`` (configs in ``configs/``)."""

import hashlib
import sys
from pathlib import Path

import hydra
from hydra.core.config_store import ConfigStore
from hydra.experimental.callback import Callback
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import OmegaConf

from ssvmbench import data as datasets
from ssvmbench.batch import reported
from ssvmbench.paths import config_dir
from ssvmbench.runner import run
from ssvmbench.solvers import SOLVERS, registered


def run_dirname(overrides):
    """A sweep job's directory name from its sorted overrides (``solver=bcfw,seed=3,...``):
    ``/`` (as in ``lambda=1/n``) becomes ``_``; names over 200 characters are cut and end
    with a hash of the whole, so that every combination keeps its own directory."""
    name = overrides.replace("/", "_") or "defaults"
    if len(name) > 200:
        name = name[:180] + "-" + hashlib.sha1(name.encode()).hexdigest()[:12]
    return name


OmegaConf.register_new_resolver("run_dirname", run_dirname, replace=True)


class KeepEarlierSweepRecord(Callback):
    """Hydra writes the sweep's config to ``SWEEP_DIR/multirun.yaml`` and would overwrite
    that of an earlier sweep into the same directory: keep the earlier one as
    ``multirun.yaml.<its mtime>`` (configs/config.yaml: ``hydra.callbacks``)."""

    def on_multirun_start(self, config, **kwargs):
        record = Path(config.hydra.sweep.dir) / "multirun.yaml"
        if record.exists():
            stamp = int(record.stat().st_mtime)
            aside = record.with_name(f"multirun.yaml.{stamp}")
            while aside.exists():
                stamp += 1
                aside = record.with_name(f"multirun.yaml.{stamp}")
            record.rename(aside)


def store_plugin_configs():
    """Give every plugin solver and dataset its ``solver=NAME`` / ``data=NAME`` config (the
    solver's ``default_config``, the loader's keyword arguments; the built-ins have theirs in
    configs/solver/ and configs/data/)."""
    store = ConfigStore.instance()
    for name, cls in registered().items():
        if name not in SOLVERS:
            store.store(group="solver", name=name, node=cls.default_config())
    for name in datasets.registered():
        store.store(group="data", name=name, node=datasets.default_config(name))


@hydra.main(version_base=None, config_path=str(config_dir()), config_name="config")
def main(cfg):
    """One run (``ssvmbench run``; a sweep's runs go through the batch launchers,
    hydra_plugins.ssvmbench_launchers) under the run's error contract."""
    hydra_cfg = HydraConfig.get()
    status = reported(lambda: run(cfg, hydra_cfg.runtime.output_dir,
                                  list(hydra_cfg.overrides.task),
                                  sweep=hydra_cfg.mode == RunMode.MULTIRUN))
    if status:
        sys.exit(status)
