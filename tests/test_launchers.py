"""Sweep launchers and sweep directory names: the launchers' configurations (the SLURM one
runs against a real cluster in tests/test_slurm.py)."""

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class

from ssvmbench.compose import run_dirname
from ssvmbench.paths import config_dir


def launcher_config(name):
    with initialize_config_dir(str(config_dir()), version_base=None):
        return compose("config", overrides=[f"hydra/launcher={name}"],
                       return_hydra_config=True).hydra.launcher


def test_slurm_launcher_config_is_valid():
    launcher = launcher_config("slurm")
    cls = get_class(launcher._target_)
    assert cls.__module__ == "hydra_plugins.ssvmbench_launchers.launchers"
    assert cls.__name__ == "SlurmLauncher"
    assert launcher.cpus_per_task == 1 and launcher.timeout_min > 0
    assert "NUMBA_NUM_THREADS=$(( SLURM_CPUS_PER_TASK > 1 ?" in launcher.setup[0]
    params = {k: v for k, v in launcher.items() if k != "_target_"}
    cls(**params)                             # accepted by the launcher itself


@pytest.mark.parametrize("name", ["local", "joblib"])
def test_the_local_pool_is_the_launcher_of_local_and_joblib(name):
    """``hydra/launcher=joblib`` (earlier command lines) selects ssvmbench's own pool."""
    launcher = launcher_config(name)
    assert launcher._target_ == "hydra_plugins.ssvmbench_launchers.launchers.LocalLauncher"
    assert get_class(launcher._target_)(n_jobs=2).n_jobs == 2


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
