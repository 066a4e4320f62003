"""The Hydra app behind ``ssvmbench run`` (configs in ``configs/``)."""

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode

from ssvmbench.common.paths import config_dir
from ssvmbench.run.job import reported
from ssvmbench.run.runner import run


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
