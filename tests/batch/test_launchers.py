"""Sweep launchers and sweep directory names: the launchers' configurations (the SLURM one
runs against a real cluster in tests/batch/test_slurm.py)."""

import re

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class

from ssvmbench.common.paths import config_dir
from ssvmbench.run.compose import (HASH_WIDTH, NAME_WIDTH, find_run_dirname, legacy_run_dirname,
                                   run_dirname, split_overrides)


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


BCFW = ("+data.subset=0.05,data=ocr,eval.log_start=0.05,lambda=1/n,seed=0,"
        "solver.iterates=[raw,avg,wavg,tavg],solver.passes=2,solver=bcfw")


@pytest.mark.parametrize("overrides,name", [
    (BCFW, "solver-bcfw_data-ocr_lambda-1_n_seed-0_subset-0.05_log_start-0.05_"
           "iterates-raw-avg-wavg-tavg_passes-2_c7311d5ca4"),
    ("data=ocr,lambda=1/n,seed=0,solver=bcfw",
     "solver-bcfw_data-ocr_lambda-1_n_seed-0_a56339146b"),
    ("+data.subset=0.05,data.root=../shared/datasets,data=ocr,solver.passes=1,solver=ssg",
     "solver-ssg_data-ocr_root-datasets_subset-0.05_passes-1_1a6de1651c"),
    ("", "defaults"),
])
def test_sweep_directory_names(overrides, name):
    """Issue 44: the settings, short, solver, data, lambda, l1 and seed first, then a hash
    of the whole overrides; the same overrides give the same name in every session."""
    assert run_dirname(overrides) == name


def test_split_overrides_keeps_lists_dicts_and_quoted_commas():
    assert split_overrides(BCFW)[5] == "solver.iterates=[raw,avg,wavg,tavg]"
    assert split_overrides("x='a,b',y={a:1,b:[2,3]},~z") == ["x='a,b'", "y={a:1,b:[2,3]}", "~z"]
    assert split_overrides("") == []


NEAR = [  # override lists whose readable parts come close or coincide: the hash tells them apart
    "lambda=1/n", "lambda=1_n", "+lambda=1/n", "++lambda=1/n", "~lambda", "~lambda=1/n",
    "lambda=1/N", "lambda=1/n,seed=0", "lambda=1/n,seed=00", "seed=0,solver.passes=2",
    "data.passes=2,seed=0", "+solver.passes=2,seed=0", "data.root=/a/x/data,data=ocr",
    "data.root=/b/y/data,data=ocr", "data.root=/a/x/data/,data=ocr", "x=[a,b]", "x=[a b]",
    "x=a-b", "x='a,b'", "x={a:b}", "x=a:b", "x=", "x=''", "x", "X=1", "x=1", "a.x=1",
    "b.x=1", "solver=bcfw", "solver=BCFW", "defaults=1",
    *[f"data=ocr,{'solver.very_long_setting_name=' + 'v' * 30},seed={k}" for k in range(30)],
    *[",".join(f"k{j}=value_{j}" for j in range(12)) + f",z={k}" for k in range(30)],
]


def test_different_overrides_never_share_a_folder():
    """Two override lists that differ (by a prefix, a character the name leaves out, a
    path's folders, a case, a setting cut from a long name) get folders of their own, also
    on a file system that ignores case (macOS, Windows)."""
    names = [run_dirname(overrides) for overrides in NEAR]
    assert len(set(names)) == len(NEAR)
    assert len({name.lower() for name in names}) == len(NEAR)
    assert names == [run_dirname(overrides) for overrides in NEAR]        # deterministic
    long = [name for name in names if name.startswith("k0-")]
    assert len(long) == 30 and all(len(name) <= NAME_WIDTH + 1 + HASH_WIDTH for name in names)
    assert len({name.rsplit("_", 1)[0] for name in long}) == 1      # the hash alone differs


@pytest.mark.parametrize("overrides", [BCFW, *NEAR])
def test_sweep_directory_names_are_safe_in_shells_and_hydra(overrides):
    """Only the POSIX portable file name characters; no leading ``-`` or ``.``; a shell
    reads the name as one word without quoting, and so does Hydra in hydra.run.dir=..."""
    import shlex

    from ssvmbench.run.compose import parse_overrides

    name = run_dirname(overrides)
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name), name
    assert shlex.quote(name) == name and shlex.split(name) == [name]
    assert not parse_overrides([f"hydra.run.dir=s/{name}"])[0].is_sweep_override()


def test_a_folder_an_earlier_version_named_is_found_again(tmp_path):
    """A sweep folder written before issue 44 keeps its long names: the job of the same
    overrides finds its old folder (and only that one: a new-style folder wins)."""
    old = tmp_path / "+data.subset=0.05,data=ocr,eval.log_start=0.05,lambda=1_n,seed=0," \
                     "solver.iterates=[raw,avg,wavg,tavg],solver.passes=2,solver=bcfw"
    assert legacy_run_dirname(BCFW) == old.name
    assert find_run_dirname(BCFW, tmp_path) == run_dirname(BCFW)
    old.mkdir()
    assert find_run_dirname(BCFW, tmp_path) == old.name
    assert find_run_dirname(BCFW, str(tmp_path)) == old.name
    assert find_run_dirname(BCFW.replace("seed=0", "seed=1"), tmp_path) != old.name
    (tmp_path / run_dirname(BCFW)).mkdir()
    assert find_run_dirname(BCFW, tmp_path) == run_dirname(BCFW)
    long = "solver.iterates=[raw,avg,wavg,tavg]," * 10 + "seed=1"
    (tmp_path / legacy_run_dirname(long)).mkdir()
    assert len(legacy_run_dirname(long)) <= 200
    assert find_run_dirname(long, tmp_path) == legacy_run_dirname(long)
