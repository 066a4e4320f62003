"""Sweep launchers and sweep directory names: the SLURM configuration is checked for
validity here (no cluster is reachable), the joblib one too."""

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class

from ssvmbench.app import run_dirname
from ssvmbench.paths import config_dir


def launcher_config(name):
    with initialize_config_dir(str(config_dir()), version_base=None):
        return compose("config", overrides=[f"hydra/launcher={name}"],
                       return_hydra_config=True).hydra.launcher


def test_slurm_launcher_config_is_valid():
    launcher = launcher_config("slurm")
    cls = get_class(launcher._target_)
    assert cls.__name__ == "SlurmLauncher"
    assert launcher.cpus_per_task == 1 and launcher.timeout_min > 0
    assert "NUMBA_NUM_THREADS=1" in launcher.setup[0]
    params = {k: v for k, v in launcher.items() if k != "_target_"}
    cls(**params)                             # accepted by the launcher itself


def test_joblib_launcher_config_is_valid():
    launcher = launcher_config("joblib")
    assert get_class(launcher._target_).__name__ == "JoblibLauncher"


@pytest.mark.parametrize("overrides,name", [
    ("data=ocr,lambda=1/n,seed=0,solver=bcfw", "data=ocr,lambda=1_n,seed=0,solver=bcfw"),
    ("", "defaults"),
])
def test_sweep_directory_names(overrides, name):
    assert run_dirname(overrides) == name


def test_long_sweep_directory_names_stay_distinct():
    a, b = "solver.iterates=[raw,avg,wavg,tavg]," * 10 + "seed=1", \
        "solver.iterates=[raw,avg,wavg,tavg]," * 10 + "seed=2"
    assert len(run_dirname(a)) <= 200 and run_dirname(a) != run_dirname(b)
