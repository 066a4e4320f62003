"""The Hydra app behind ``ssvmbench run`` (configs in ``configs/``)."""

import sys

import hydra
from hydra.core.hydra_config import HydraConfig

from ssvmbench.errors import UserError
from ssvmbench.paths import config_dir
from ssvmbench.runner import run


@hydra.main(version_base=None, config_path=str(config_dir()), config_name="config")
def main(cfg):
    try:
        run(cfg, HydraConfig.get().runtime.output_dir)
    except UserError as err:
        print(f"ssvmbench run: error: {err}", file=sys.stderr)
        sys.exit(2)
