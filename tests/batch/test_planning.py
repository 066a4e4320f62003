"""Planning a big sweep: the runs' configurations and folders as Hydra gives them, without
composing every run (:class:`ssvmbench.run.compose.Composer`, :func:`~ssvmbench.run.compose.
sweep_subdir`); a progress line when planning is slow; a stop while planning is one line."""

import os
import signal
import subprocess
import time

import pytest
from helpers.cli import EXE
from omegaconf import DictConfig, ListConfig, OmegaConf

from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import Planning, start_planning
from ssvmbench.run.compose import (Composer, config, find_run_dirname, legacy_run_dirname,
                                   sweep_subdir)

# override lists as users give them: groups, plain values, additions, deletions, lists,
# dicts, quoted strings, C/n specs, SAP's parameters, plugins' solvers and datasets, hydra's
# own settings; the first ones share their config groups, so a Composer reuses its bases
CASES = [
    ["solver=bcfw", "data=ocr", "seed=3"],
    ["solver=bcfw", "data=ocr", "seed=4", "lambda=1/n"],
    ["seed=5", "solver=bcfw", "data=ocr", "lambda=0.001", "l1=1e-4"],
    ["solver=bcfw", "data=ocr", "+data.subset=0.05", "solver.passes=2"],
    ["solver=ssg", "lambda=inv_n", "solver.iterates=[raw,avg,wavg]", "eval.log_start=0.01"],
    ["solver=ssg", "++seed=7", "++data.subset=0.1", "stop.gap=0.001"],
    ["~stop", "solver=fw"],
    ["~loss", "~eval.per_decade"],
    ["~seed=0"],
    ["C=0.1", "rho1=0.9", "solver=sap", "loss=hamming"],
    ["oracle=topk", "oracle.K=5", "oracle.mu=1", "solver=svrg"],
    ["oracle=exp", "oracle.mu=0.5", "solver=sgd", "solver.passes=3.5"],
    ["data=voc_synthetic", "data.n_train=6", "data.n_test=2", "data.size=32", "solver=sgd"],
    ["+note='a,b'", "+tags=[x,y]", "+extra={a:1,b:[2,3]}", "save_weights=false"],
    ["+extra.deep.er=1", "+extra.deep.est=two"],
    ["solver.iterates=[]", "seed=0", "restart=true", "reuse_stale=true"],
    ["lambda=${l1}", "l1=0.5"],
    ["solver=gap_bcfw", "data=ocr", "seed=1"],
    ["solver=gap_bcfw", "seed=2", "lambda=1/n"],
    ["data=ocr_letters", "solver=bcfw"],
    ["data=random_trees", "solver=ssg", "seed=9"],
    ["hydra/launcher=slurm", "hydra.launcher.partition=x", "seed=3"],
    ["hydra.launcher.n_jobs=2", "seed=4", "solver=ssg"],
    ["solver={name: bcfw, passes: 2}"],
    ["seed=[1,2]", "solver=ssg"],
    ["solver.passes={a:1}"],
    ["seed=1", "seed=2", "solver.passes=3", "solver.passes=4"],
    [],
]
# what Hydra refuses: the same one line either way
BAD = [
    ["solver.pases=5"],
    ["solver=bcfx", "seed=1"],
    ["+seed=1"],
    ["~nokey"],
    ["~lambda"],                          # null: "does not exist" for Hydra
    ["~lambda=0.5"],
    ["data.n_train=6"],
    ["solver@x=bcfw"],
    ["nogroup@x=1"],
    ["seed=0,1"],
    ["+solver=bcfw"],
]


def _same(a, b, where="cfg"):
    """Two configs are the same: keys, values (unresolved), node and reference types, and
    the struct, readonly and flags of every node."""
    assert type(a) is type(b), where
    if isinstance(a, (DictConfig, ListConfig)):
        assert a._metadata.flags == b._metadata.flags, where
        assert a._metadata.ref_type == b._metadata.ref_type, where
        assert a._metadata.object_type == b._metadata.object_type, where
        if isinstance(a, DictConfig):
            assert list(a.keys()) == list(b.keys()), where
            for key in a.keys():
                _same(a._get_node(key), b._get_node(key), f"{where}.{key}")
        else:
            assert len(a) == len(b), where
            for k in range(len(a)):
                _same(a._get_node(k), b._get_node(k), f"{where}[{k}]")
    else:
        assert a._value() == b._value() and type(a._value()) is type(b._value()), where
        assert a._metadata.ref_type == b._metadata.ref_type, where
        assert a._metadata.flags == b._metadata.flags, where


def test_the_composers_config_is_hydras():
    """Every case, composed by a Composer that has composed the others before (twice, in
    two orders: no state leaks between runs), is the config Hydra composes for it."""
    composer = Composer()
    for case in CASES + CASES[::-1] + CASES[::2]:
        expected = config(case)
        got = composer.config(case)
        _same(got, expected, str(case))
        assert OmegaConf.to_yaml(got) == OmegaConf.to_yaml(expected), case
        with composer.composed(case) as lent:
            _same(lent, expected, str(case))
            assert (OmegaConf.to_container(lent, resolve=True)
                    == OmegaConf.to_container(expected, resolve=True)), case
    assert len(composer._bases) < len(CASES)          # plain values reused a composition
    assert composer._work                             # and set values on a working copy


def test_the_composer_composes_once_per_choice_of_groups(monkeypatch):
    import ssvmbench.run.compose as compose

    calls = []
    real = compose.config
    monkeypatch.setattr(compose, "config", lambda *a: calls.append(a) or real(*a))
    composer = Composer()
    for seed in range(50):
        composer.config(["solver=bcfw", "data=ocr", f"seed={seed}", "lambda=0.01"])
    assert len(calls) == 1


@pytest.mark.parametrize("case", BAD, ids=str)
def test_what_hydra_refuses_is_the_same_one_line(case):
    with pytest.raises(UserError) as hydra:
        config(case)
    with pytest.raises(UserError) as fast:
        Composer().config(case)
    assert str(fast.value) == str(hydra.value) and "\n" not in str(fast.value)
    composer = Composer()
    composer.config(["seed=1"])
    with pytest.raises(UserError) as lent:
        with composer.composed(case):
            pass
    assert str(lent.value) == str(hydra.value)
    with composer.composed(["seed=2"]) as cfg:       # the working copy is still right
        _same(cfg, config(["seed=2"]))


def test_a_config_dir_is_composed_from_too(tmp_path):
    (tmp_path / "solver").mkdir()
    (tmp_path / "solver" / "mine.yaml").write_text("defaults:\n  - bcfw\n  - _self_\n"
                                                   "passes: 3\n")
    source = (f"file://{tmp_path}",)
    composer = Composer(source)
    for case in (["solver=mine", "seed=1"], ["solver=mine", "seed=2", "+data.subset=0.5"]):
        _same(composer.config(case), config(case, source), str(case))
    assert composer.config(["solver=mine"]).solver.passes == 3


SUBDIR_CASES = [
    ["solver=bcfw", "data=ocr", "seed=0"],
    ["+data.subset=0.05", "lambda=1/n", "solver.iterates=[raw,avg,wavg,tavg]"],
    ["restart=true", "seed=1", "reuse_stale=true"],
    ["+note='a,b c'", "solver=ssg", "eval.every=0.5"],
    ["~stop", "solver={name: bcfw, passes: 2}"],
    ["solver.passes=2", "solver=bcfw", "seed=0", "data=ocr", "lambda=1/n",
     "+data.subset=0.05", "eval.log_start=0.05"],
    [],
]


@pytest.mark.parametrize("sweep_dir", ["s", "results/${now:%Y-%m-%d}/${now:%H-%M-%S-%f}"])
def test_a_sweep_jobs_folder_is_the_one_hydra_resolves(tmp_path, monkeypatch, sweep_dir):
    """The folder :func:`sweep_subdir` names is ``hydra.sweep.subdir`` as Hydra's
    ``load_sweep_config`` resolves it per job, a folder an earlier version named too."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from ssvmbench.common.paths import config_dir

    monkeypatch.chdir(tmp_path)
    with initialize_config_dir(str(config_dir()), version_base=None):
        master = compose("config", overrides=[f"hydra.sweep.dir={sweep_dir}"],
                         return_hydra_config=True)
        folder = tmp_path / str(master.hydra.sweep.dir)
        folder.mkdir(parents=True)
        legacy = "+data.subset=0.05,data=ocr,eval.log_start=0.05,lambda=1/n,seed=0," \
                 "solver.passes=2,solver=bcfw"
        (folder / legacy_run_dirname(legacy)).mkdir()
        (folder / "multirun.yaml").write_text("")
        subdir = sweep_subdir(master)
        assert subdir is not None
        loader = GlobalHydra.instance().config_loader()
        for case in SUBDIR_CASES:
            job = loader.load_sweep_config(master, list(case))
            assert subdir(case) == str(job.hydra.sweep.subdir), case
            assert str(job.hydra.sweep.dir) == str(master.hydra.sweep.dir)
        assert subdir(SUBDIR_CASES[-2]) == legacy_run_dirname(legacy)
        assert find_run_dirname(legacy, folder) == legacy_run_dirname(legacy)


def test_a_sweep_folder_that_depends_on_the_job_is_composed_per_job():
    from hydra import compose, initialize_config_dir

    from ssvmbench.common.paths import config_dir

    with initialize_config_dir(str(config_dir()), version_base=None):
        for override in ("hydra.sweep.dir=out/${solver.name}", "hydra.sweep.subdir=${seed}"):
            master = compose("config", overrides=[override], return_hydra_config=True)
            assert sweep_subdir(master) is None


def test_a_progress_line_once_planning_takes_longer_than_its_threshold(capsys):
    start_planning()
    progress = Planning("checking", 5000, after_s=0.2)
    progress(10)
    assert capsys.readouterr().err == ""
    time.sleep(0.25)
    progress(1200)
    progress(1300)                                  # at most one line a second
    err = capsys.readouterr().err
    assert err.startswith("ssvmbench: planning 5000 runs: checking 1200 of 5000 (")
    assert err.count("\n") == 1


def test_the_threshold_comes_from_the_environment(capsys, monkeypatch):
    from ssvmbench.batch.jobs import check_jobs, sweep_jobs

    monkeypatch.setenv("SSVMBENCH_PROGRESS_AFTER_S", "0")
    start_planning()
    check_jobs(sweep_jobs(["solver=bcfw", "data=ocr", "seed=range(0,3)"], "s"))
    assert "ssvmbench: planning 3 runs: naming 0 of 3" in capsys.readouterr().err
    monkeypatch.setenv("SSVMBENCH_PROGRESS_AFTER_S", "2")
    start_planning()
    check_jobs(sweep_jobs(["solver=bcfw", "data=ocr", "seed=range(0,3)"], "s"))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_while_planning_is_one_line(tmp_path, sig, status):
    """Ctrl-C (SIGINT to the process group) or SIGTERM while a huge sweep is planned: one
    line, no traceback, status 128 + the signal, and no run folder."""
    env = {**os.environ, "SSVMBENCH_PROGRESS_AFTER_S": "0", "PYTHONWARNINGS": "ignore"}
    sweep = tmp_path / "s"
    process = subprocess.Popen([EXE, "run", "-m", "solver=bcfw", "data=ocr",
                                "seed=range(0,200000)", f"hydra.sweep.dir={sweep}"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = process.stderr.readline()
    assert first.startswith("ssvmbench: planning 200000 runs"), first
    time.sleep(0.5)
    if sig == signal.SIGINT:
        os.killpg(process.pid, sig)
    else:
        process.send_signal(sig)
    out, err = process.communicate(timeout=60)
    lines = [line for line in err.splitlines() if not line.startswith("ssvmbench: planning")]
    assert process.returncode == status, err[-2000:]
    assert lines == ["ssvmbench run: interrupted" + (" (SIGTERM)" * (status == 143))], err
    assert not sweep.exists() or not [p for p in sweep.iterdir() if p.is_dir()]


@pytest.mark.parametrize("word", ["seed=0", "seed=4711", "seed=-3", "solver.passes=7",
                                  "a_b.c_1=10", "seed=007", "seed=1_000", "seed=+5",
                                  "seed=5.0", "+seed=5", "seed=abc", "x-y=1"])
def test_a_key_int_word_is_read_as_hydra_reads_it(word):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from ssvmbench.run.compose import parsed_override

    expected = OverridesParser.create().parse_override(word)
    got = parsed_override(word)
    assert got == expected and type(got.value()) is type(expected.value())


def test_missing_keys_are_omegaconfs():
    from ssvmbench.run.settings import missing_keys

    for case in (["data=voc"], [], ["+a='???'", "+b={x: '???', y: [1, '???']}", "+c=${b}"]):
        cfg = config(case)
        assert missing_keys(cfg) == OmegaConf.missing_keys(cfg), case
    cfg = OmegaConf.create({"d": "${oc.env:NOPE_NOT_SET,null}", "e": {"f": "???"},
                            "g": "${e}", "h": ["???", {"i": "???"}]})
    assert missing_keys(cfg) == OmegaConf.missing_keys(cfg) == {"e.f", "h[0]", "h[1].i"}


def test_a_seed_sweep_reads_one_runs_settings(monkeypatch):
    """A seed's check needs nothing of the run's configuration: a 5,000-seed sweep read
    every run's settings in full (about 1 ms each, most of its planning); now one, and
    each seed on its own. A bad seed is still its one line."""
    from ssvmbench.batch import jobs as batch
    from ssvmbench.batch.jobs import check_jobs, sweep_jobs
    from ssvmbench.common.errors import UserError

    reads = []
    read = batch.read
    monkeypatch.setattr(batch, "read", lambda cfg: reads.append(cfg) or read(cfg))
    check_jobs(sweep_jobs(["solver=bcfw,ssg", "data=ocr", "seed=range(0,50)"], "s"))
    assert len(reads) == 2                     # the first run, and ssg's
    with pytest.raises(UserError, match="seed=-3 must be a whole number"):
        check_jobs(sweep_jobs(["solver=bcfw", "data=ocr", "seed=0,-3"], "s"))
    with pytest.raises(UserError, match="seed="):
        check_jobs(sweep_jobs(["solver=bcfw", "data=ocr", "seed=0,abc"], "s"))
