"""The command line end to end, through the installed console script."""

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pandas as pd
import pytest
from helpers.cli import EXE, ssvmbench, wait_for_rows

from ssvmbench.data.synthetic import random_chains
from ssvmbench.run.monitor import evaluation_threads
from ssvmbench.run.runlog import read_log


def test_help_lists_the_subcommands(tmp_path):
    out = ssvmbench("--help", cwd=tmp_path).stdout
    for command in ("run", "plot", "data", "bench", "reproduce", "report", "check-solver"):
        assert command in out
    for command in ("plot", "data", "bench", "reproduce", "report", "check-solver"):
        assert "usage: ssvmbench " + command in ssvmbench(command, "--help", cwd=tmp_path).stdout
    assert "ssvmbench" in ssvmbench("run", "--help", cwd=tmp_path).stdout


def test_compile_time_is_not_solver_time(data_root, tmp_path):
    """With a cold numba cache the kernels compile in the warm-up (logged as jit_s), so the
    first checkpoint's solver time is that of an ordinary pass (issue: 10-19 s before)."""
    run_dir = tmp_path / "cold"
    cache = {"NUMBA_CACHE_DIR": str(tmp_path / "empty_numba_cache")}
    out = ssvmbench("run", "solver=ssg", "data=ocr", "+data.subset=0.3", "solver.passes=4",
                    f"hydra.run.dir={run_dir}", cwd=tmp_path, env=cache).stderr
    trace, attrs = read_log(run_dir / "run.h5")
    per_pass = np.diff(np.r_[0.0, trace.drop_duplicates("effective_pass")["time_s"]])
    assert attrs["jit_s"] > 1.0 > per_pass.max()
    assert per_pass[0] <= 3 * np.median(per_pass[1:]) + 0.02
    # one line says why the first run waits; the next one, on the filled cache, does not
    assert re.search(r"^compiling kernels \(first run only, ~\d+ s\)$", out, re.M)
    out = ssvmbench("run", "solver=ssg", "data=ocr", "+data.subset=0.3", "solver.passes=4",
                    f"hydra.run.dir={tmp_path / 'warm'}", cwd=tmp_path, env=cache)
    assert "compiling kernels" not in out.stdout + out.stderr


def test_the_compiling_line_estimates_from_the_last_cold_start(tmp_path, monkeypatch, capsys):
    """The line comes at numba's first compile only, with ``~N s`` the solver's last
    compiling block (the typical figure before any); a block that compiled nothing says
    nothing and records nothing."""
    import numba

    from ssvmbench.compiled import coldstart
    monkeypatch.setattr(coldstart, "user_cache", lambda: tmp_path / "user")
    with coldstart.compile_notice("bcfw"):
        pass
    assert capsys.readouterr().err == "" and coldstart.estimate("bcfw") == coldstart.TYPICAL_S
    with coldstart.compile_notice("bcfw"):                # a kernel or two: not recorded
        numba.njit(lambda x: x + 1)(1)
        numba.njit(lambda x: x + 2)(1)
    typical = f"compiling kernels (first run only, ~{coldstart.TYPICAL_S} s)\n"
    assert capsys.readouterr().err == typical
    assert coldstart.estimate("bcfw") == coldstart.TYPICAL_S
    coldstart.record("bcfw", 41.4)
    with coldstart.compile_notice("bcfw"):                # a cold start: recorded
        for k in range(coldstart.COLD_EVENTS):
            numba.njit(lambda x, k=k: x + k)(1)
    assert capsys.readouterr().err == "compiling kernels (first run only, ~41 s)\n"
    assert coldstart.estimate("bcfw") < 41 and coldstart.estimate("ssg") == coldstart.TYPICAL_S


def test_the_compiling_line_estimates_the_idle_machine(tmp_path, monkeypatch, capsys):
    """A cold start on a loaded machine (its wall seconds stretched, here by a sleep, which
    takes no CPU) records what it takes on an idle one: its CPU seconds, not its wall
    seconds (the line once said ~175 s for a 20 s warm-up after a run beside other jobs)."""
    import numba

    from ssvmbench.compiled import coldstart
    monkeypatch.setattr(coldstart, "user_cache", lambda: tmp_path / "user")
    start = time.perf_counter()
    with coldstart.compile_notice("bcfw"):
        for k in range(coldstart.COLD_EVENTS):
            numba.njit(lambda x, k=k: x - k)(1)
        time.sleep(3.0)                                   # the load's share of the wall
    compiling = time.perf_counter() - start - 3.0
    assert capsys.readouterr().err.startswith("compiling kernels (first run only, ~")
    assert 0 < coldstart.estimate("bcfw") <= compiling + 0.1


def test_a_start_that_compiles_a_kernel_or_two_does_not_wait_for_the_helper(tmp_path,
                                                                          monkeypatch):
    """The helper starts at the first compile, but after a kernel or two (not a cold start)
    the warm-up stops it instead of waiting for it to start and load everything."""
    import numba

    from ssvmbench.compiled import coldstart
    monkeypatch.setattr(coldstart, "user_cache", lambda: tmp_path / "user")
    helpers = []

    def beside():
        helpers.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return helpers[-1]

    start = time.perf_counter()
    with coldstart.compile_notice("bcfw", beside) as compiling:
        numba.njit(lambda x: x + 3)(1)
        compiling.join()
    assert time.perf_counter() - start < 30 and helpers[0].returncode is not None


def test_a_cold_start_compiles_the_evaluation_beside_the_solver(data_root, tmp_path):
    """On an empty cache, with two threads, the warm-up's second process compiles the
    checkpoint's kernels (the tasks' ``evaluate``, BCFW's averaged iterate) while this one
    compiles the solver's;
    this one then loads them from the cache and records the longer process's CPU
    seconds. With one thread (one core, a sweep's share) nobody helps."""
    script = """if True:
        import sys, numba
        from numba.core import event
        from ssvmbench import api
        from ssvmbench.compiled import coldstart
        from ssvmbench.run import runner
        from ssvmbench.run.settings import read
        numba.set_num_threads(int(sys.argv[1]))
        settings = read(api.config(["solver=bcfw", "data=ocr", "lambda=0.01"]))
        split, train, _ = runner.load_tasks(settings)
        names = []
        class Names(event.Listener):
            def on_start(self, ev):
                names.append(ev.data["dispatcher"].py_func.__name__)
            def on_end(self, ev):
                pass
        with event.install_listener("numba:compile", Names()):
            runner.warm_up(settings, split, *settings.objective.at(train.n))
        print("evaluate" in names, "average_residual" in names, "bcfw_steps" in names,
              coldstart._read().get("bcfw", "none"))
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "XDG_CACHE_HOME": str(tmp_path / "user")}
    out = subprocess.run([sys.executable, "-c", script, "2"], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.stdout.split()[:3] == ["False", "False", "True"], out.stderr[-3000:]
    import numba

    from ssvmbench.compiled import coldstart
    assert 1 < float(out.stdout.split()[3])     # recorded (the default could equal it)
    from ssvmbench.tasks import make_task
    task = make_task(random_chains(3, 3, 4, seed=0))
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert coldstart.checkpoint_compiler(None, task, task, 0.1, 0.0) is None
    finally:
        numba.set_num_threads(threads)


def test_single_run_writes_exactly_one_log(data_root, tmp_path):
    run_dir = tmp_path / "DIR"
    out = ssvmbench("run", "solver=bcfw", "data=ocr", "lambda=0.01", "seed=3", "solver.passes=2",
                    f"hydra.run.dir={run_dir}", cwd=tmp_path).stdout
    lines = out.strip().splitlines()                  # what it uses, what it reached, what next
    assert lines[0].startswith("ssvmbench run: solver=bcfw data=ocr (data root ")
    assert lines[1].startswith("finished: bcfw on ocr, lambda = 0.01, 2 passes in ")
    assert [line.split()[0] for line in lines[2:4]] == ["raw", "wavg"]
    assert "primal" in lines[2] and "gap" in lines[2] and "test accuracy" in lines[2]
    assert lines[-1] == f"next: ssvmbench plot {run_dir} -o {run_dir / 'figures'}"
    assert lines[1] in (run_dir / "app.log").read_text()       # app.log keeps what it said
    logs = list(run_dir.glob("*.h5"))
    assert len(logs) == 1 and list(run_dir.rglob("*.h5")) == logs
    trace, attrs = read_log(logs[0])
    assert attrs["status"] == "finished" and attrs["seed"] == 3 and attrs["n"] == 6251
    assert attrs["lambda"] == 0.01 and attrs["solver"] == "bcfw" and attrs["d"] == 4082
    assert sorted(trace["effective_pass"].unique()) == [1.0, 2.0]
    assert set(trace["iterate"]) == {"raw", "wavg"}
    assert (trace["gap"] >= 0).all() and (trace["time_s"] > 0).all()
    for name in ("effective_pass", "primal", "dual", "gap", "test_error", "time_s", "nnz"):
        assert name in trace
    assert "solver:" in attrs["config"]

    assert attrs["overrides"] and "seed=3" in attrs["overrides"]

    before = logs[0].read_bytes()
    again = ssvmbench("run", "solver=ssg", f"hydra.run.dir={run_dir}", cwd=tmp_path, check=False)
    assert again.returncode == 2 and "another configuration" in again.stderr
    same = ssvmbench("run", "solver=bcfw", "data=ocr", "lambda=0.01", "seed=3",
                     "solver.passes=2", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert "finished already, skipped" in same.stdout
    assert logs[0].read_bytes() == before
    assert sorted(p.name for p in run_dir.iterdir()) == ["app.log", "run.h5", "weights.npz"]


def test_cutting_plane_stops_at_svmstruct_epsilon(data_root, tmp_path):
    """solver=cutting_plane on OCR stops by its own rule (before solver.passes) and logs its
    best iterate next to the raw one."""
    run_dir = tmp_path / "cp"
    ssvmbench("run", "solver=cutting_plane", "lambda=1", "solver.passes=100",
              "solver.epsilon=0.1", "eval.every=10", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["status"] == "finished" and attrs["iterates"] == "raw,best"
    last = trace[trace["effective_pass"] == trace["effective_pass"].max()]
    assert last["effective_pass"].iloc[0] < 100
    raw = last[last["iterate"] == "raw"].iloc[0]
    assert 0 <= raw["gap"] <= 0.1
    best = trace[trace["iterate"] == "best"]["primal"].to_numpy()
    assert (best[1:] <= best[:-1] + 1e-12).all()


def test_box_localization_run_on_synthetic_scenes(tmp_path):
    """data=voc_synthetic end to end: the log says SYNTHETIC and scores with the VOC AP."""
    run_dir = tmp_path / "boxes"
    ssvmbench("run", "solver=sc_svrg", "data=voc_synthetic", "data.n_train=20",
              "data.n_test=10", "lambda=10/n", "oracle=topk", "oracle.K=3", "oracle.mu=0.1",
              "solver.passes=6", "solver.lr=0.01", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["status"] == "finished" and attrs["test_metric"] == "ap"
    assert attrs["data_variant"].startswith("SYNTHETIC") and attrs["loss"] == "one_minus_iou"
    assert attrs["n"] == 20 and attrs["d"] == 63 and attrs["oracle"] == "topk"
    assert trace["test_metric"].between(0, 1).all() and trace["primal"].iloc[-1] < 1.0
    bad = ssvmbench("run", "data=voc", f"data.root={tmp_path}", f"hydra.run.dir={tmp_path}/x",
                    cwd=tmp_path, check=False)
    assert bad.returncode == 2
    assert "cat_labels.pkl not found" in bad.stderr and not (tmp_path / "x" / "run.h5").exists()


def test_lambda_one_over_n_and_fractional_log_checkpoints(data_root, tmp_path):
    run_dir = tmp_path / "inv"
    ssvmbench("run", "solver=ssg", "lambda=1/n", "solver.passes=1", "eval.log_start=0.1",
              "eval.per_decade=2", "solver.iterates=[raw]", f"hydra.run.dir={run_dir}",
              cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["lambda"] == pytest.approx(1 / 6251) and attrs["lambda_spec"] == "1/n"
    assert trace["effective_pass"].round(2).tolist() == [0.1, 0.32, 1.0]
    assert trace["dual"].isna().all()


def test_reuse_stale_and_restart_act_on_the_same_runs(data_root, tmp_path):
    """``reuse_stale=true`` keeps a finished sweep's logs made by other code; it was refused
    as "another configuration" (it was part of the recorded config and of the job's folder
    name), so a sweep could only be redone in full after any edit of the package."""
    from ssvmbench.batch.jobs import sweep_jobs

    sweep = tmp_path / "sweep"
    grid = ("-m", "solver=ssg", "data=ocr", "+data.subset=0.1", "seed=0,1", "solver.passes=1",
            f"hydra.sweep.dir={sweep}")
    ssvmbench("run", *grid, cwd=tmp_path)
    logs = sorted(sweep.rglob("run.h5"))
    for log in logs:                      # as if made by an earlier version of the sources
        with h5py.File(log, "a") as f:
            f.attrs["code"] = f.attrs["code"].replace("sources: ", "sources: older-")
    kept = {log: log.stat().st_mtime_ns for log in logs}
    for control in ("reuse_stale=true", "restart=true reuse_stale=true"):
        out = ssvmbench("run", *grid, *control.split(), cwd=tmp_path).stdout
        assert out.count("done before (finished already)") == 2, out
        assert {log: log.stat().st_mtime_ns for log in logs} == kept
        assert sorted(sweep.rglob("run.h5")) == logs
    words = ["solver=ssg", "seed=0,1", "reuse_stale=true", "restart=true"]
    assert ([job.run_dir for job in sweep_jobs(words, "S")]
            == [job.run_dir for job in sweep_jobs(words[:2], "S")])
    ssvmbench("run", *grid, cwd=tmp_path)                 # without it: redone, kept aside
    assert len(list(sweep.rglob("run.h5.stale-*"))) == 2


def test_a_sweep_folder_of_an_earlier_version_is_resumed_not_started_again(data_root,
                                                                         tmp_path):
    """Issue 44: runs in a sweep folder written before run folders had short names (the
    overrides themselves) are found again by the same sweep, by ``run -m`` and by the batch
    of ``reproduce`` and ``api.sweep``: the finished one is skipped, the killed one redone in
    its old folder, and no new-style folder is made beside them."""
    from ssvmbench.batch.jobs import sweep_jobs
    from ssvmbench.run.compose import legacy_run_dirname, run_dirname

    sweep = tmp_path / "sweep"
    words = ("solver=ssg", "data=ocr", "+data.subset=0.05", "lambda=1/n", "seed=0,1",
             "solver.passes=1")
    grid = ("-m", *words, f"hydra.sweep.dir={sweep}")
    ssvmbench("run", *grid, cwd=tmp_path)
    old = {}
    for seed in (0, 1):
        overrides = f"+data.subset=0.05,data=ocr,lambda=1/n,seed={seed},solver.passes=1,solver=ssg"
        old[seed] = sweep / legacy_run_dirname(overrides)
        (sweep / run_dirname(overrides)).rename(old[seed])
    assert old[0].name == "+data.subset=0.05,data=ocr,lambda=1_n,seed=0,solver.passes=1,solver=ssg"
    assert sorted(job.run_dir for job in sweep_jobs(words, sweep)) == sorted(old.values())
    with h5py.File(old[1] / "run.h5", "a") as f:          # killed while it ran
        f.attrs["status"] = "running"
    kept = old[0].joinpath("run.h5").stat().st_mtime_ns
    out = ssvmbench("run", *grid, cwd=tmp_path).stdout
    assert out.count("done before (finished already)") == 1 and "finished     1" in out, out
    assert old[0].joinpath("run.h5").stat().st_mtime_ns == kept
    assert read_log(old[1] / "run.h5")[1]["status"] == "finished"
    assert len(list(old[1].glob("run.h5.running-*"))) == 1
    assert sorted(path for path in sweep.iterdir() if path.is_dir()) == sorted(old.values())


def test_sweep_then_plot(data_root, tmp_path):
    """A sweep, then the same sweep again after one run was killed and one log deleted: the
    re-run redoes those two only (the killed run's log is kept aside), then the plots."""
    sweep = tmp_path / "sweep"
    grid = ("-m", "solver=bcfw,ssg", "data=ocr", "lambda=0.01,1/n", "seed=0,1",
            "solver.passes=1", f"hydra.sweep.dir={sweep}")
    ssvmbench("run", *grid, cwd=tmp_path)
    logs = sorted(sweep.rglob("*.h5"))
    assert len(logs) == 8 and len({log.parent for log in logs}) == 8
    assert sweep / "solver-ssg_data-ocr_lambda-1_n_seed-1_passes-1_e2196ffab8" / "run.h5" in logs
    killed, deleted = logs[0], logs[1]
    with h5py.File(killed, "a") as f:
        f.attrs["status"] = "running"
    deleted.unlink()
    kept = {log: log.stat().st_mtime_ns for log in logs[2:]}
    out = ssvmbench("run", *grid, cwd=tmp_path).stdout
    assert out.count("done before (finished already)") == 6 and "finished     2" in out
    assert {log: log.stat().st_mtime_ns for log in logs[2:]} == kept
    assert read_log(killed)[1]["status"] == read_log(deleted)[1]["status"] == "finished"
    aside = list(killed.parent.glob("run.h5.running-*"))
    assert len(aside) == 1 and sorted(sweep.rglob("*.h5")) == logs
    out = tmp_path / "figures"
    ssvmbench("plot", str(sweep), "-o", str(out), cwd=tmp_path)
    for name in ("suboptimality.png", "suboptimality.pdf", "test_error.png", "summary.csv",
                 "summary.md"):
        assert (out / name).stat().st_size > 0


@pytest.mark.parametrize("args,message", [
    (["solver=nope"], "bcfw"),
    (["data=nope"], "ocr"),
    (["lambda=0"], "lambda=0"),
    (["lambda=-1"], "positive"),
    (["lambda=abc"], "lambda=abc"),
    (["solver.passes=-1"], "solver.passes=-1"),
    (["solver.iterates=[raw,best]"], "solver.iterates"),
    (["oracle=topk"], "takes oracle=max, not oracle=topk"),
    (["loss=squared"], "loss=squared"),
    (["solver=sgd", "oracle=topk", "oracle.K=0"], "oracle.K=0"),
    (["solver=sgd", "oracle=exp", "oracle.mu=0"], "oracle.mu=0"),
    (["solver=svrg", "oracle=topk", "oracle.K=100000", "oracle.mu=1"], "oracle.K=100000"),
    (["solver=svrg", "oracle=topk", "+oracle.ties=nope"], "oracle.ties=nope: choose one of"),
    (["eval.every=1e-9"], "eval.every=1e-09 must be at least"),
    (["seed=1180591620717411303424"], "seed=1180591620717411303424"),
])
def test_bad_input_is_refused_before_any_log(args, message, tmp_path):
    run_dir = tmp_path / "bad"
    result = ssvmbench("run", *args, f"hydra.run.dir={run_dir}", cwd=tmp_path, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert not list(tmp_path.rglob("*.h5"))


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, "interrupted"),
                                        (signal.SIGINT, "interrupted"),
                                        (signal.SIGKILL, "running")])
def test_killed_run_leaves_a_readable_log(data_root, tmp_path, sig, status):
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen([EXE, "run", "solver=ssg", "solver.passes=100000",
                             "eval.every=0.05", f"hydra.run.dir={run_dir}"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = run_dir / "run.h5"
    deadline = time.time() + 300
    while time.time() < deadline:
        with contextlib.suppress(OSError, KeyError, RuntimeError):  # not created, not flushed
            # yet, or read in the middle of a write
            if len(read_log(log)[0]) >= 4:
                break
        time.sleep(0.5)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    trace, attrs = read_log(log)
    assert attrs["status"] == status
    assert len(trace) >= 4
    with h5py.File(log, "r") as f:
        assert f["trace/primal"].shape[0] >= attrs["n_rows"]


def test_bench_reports_speed_and_memory(data_root, tmp_path):
    out = ssvmbench("bench", "solver=ssg", "data=ocr", "--passes", "5", cwd=tmp_path).stdout
    for fragment in ("seconds per pass", "oracle calls per second", "peak memory", "d=4082"):
        assert fragment in out
    refused = ssvmbench("bench", "solver=ssg", "--passes", "3", cwd=tmp_path, check=False)
    assert refused.returncode == 2 and "at least 5" in refused.stderr


def test_smoothed_solver_run_and_oracle_costs(data_root, tmp_path):
    run_dir = tmp_path / "casimir"
    ssvmbench("run", "solver=sc_svrg", "oracle=topk", "oracle.K=3", "oracle.mu=0.5",
              "solver.lr=0.001", "solver.passes=3", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert (attrs["oracle"], attrs["oracle_K"], attrs["oracle_mu"], attrs["oracle_ties"]) == \
        ("topk", 3, 0.5, "scan")
    assert attrs["method"] == "sc_svrg-topk-K3-mu0.5" and attrs["status"] == "finished"
    assert trace["effective_pass"].tolist() == pytest.approx([1, 2, 3], rel=1e-3)
    assert trace["primal"].iloc[-1] < trace["primal"].iloc[0]
    out = ssvmbench("bench", "--oracles", "oracle=topk", "oracle.K=5", "--passes", "5",
                    cwd=tmp_path).stdout
    for fragment in ("max:", "topk-K5-mu1:", "exp-mu1:", "x max"):
        assert fragment in out
    out = ssvmbench("bench", "--oracles", "oracle=topk", "+oracle.ties=casimir", "--passes",
                    "5", cwd=tmp_path).stdout        # the top-K timed is the one chosen
    assert "topk-K5-mu1-ties=casimir:" in out


def test_conll2000_run_logs_chunk_f1(conll2000_root, tmp_path):
    run_dir = tmp_path / "chunking"
    ssvmbench("run", "solver=bcfw", "data=conll2000", "lambda=1/n", "solver.passes=1",
              f"hydra.run.dir={run_dir}", cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["test_metric"] == "chunk_f1" and attrs["d"] > 1_600_000
    assert 0.85 < trace["test_metric"].max() <= 1.0
    assert (trace["test_metric"] == trace["test_chunk_f1"]).all()
    # every metric of a tagged split, each its own column; tokens are more often right
    # than whole chunks
    assert (trace["test_accuracy"] > trace["test_chunk_f1"]).all()
    assert trace["test_tag_f1"].between(0.8, 1.0).all()


def test_a_sweep_skips_an_incompatible_combination_with_its_reason(tmp_path):
    """BCFW takes the max oracle only: in a sweep its top-K job leaves a skipped log (no rows,
    the reason) and every other job runs; a re-run treats it as done; alone it is an error."""
    out = tmp_path / "sweep"
    args = ("run", "-m", "solver=bcfw,sgd", "oracle=max,topk", "oracle.K=2", "oracle.mu=0.5",
            "data=voc_synthetic", "data.n_train=12", "data.n_test=4", "data.size=32",
            "solver.passes=2", f"hydra.sweep.dir={out}")
    first = ssvmbench(*args, cwd=tmp_path).stdout
    assert "skipped (solver bcfw takes oracle=max, not oracle=topk" in first
    logs = {path.parent.name: read_log(path) for path in out.rglob("run.h5")}
    statuses = sorted(attrs["status"] for _, attrs in logs.values())
    assert statuses == ["finished", "finished", "finished", "skipped"]
    skipped = next(attrs for _, attrs in logs.values() if attrs["status"] == "skipped")
    assert "oracle=topk" in skipped["error"] and skipped["n_rows"] == 0
    again = ssvmbench(*args, cwd=tmp_path).stdout
    assert again.count("done before (finished already)") == 3
    assert "done before (skipped already)" in again
    alone = ssvmbench("run", "solver=bcfw", "oracle=topk", "oracle.K=2", "oracle.mu=0.5",
                      "data=voc_synthetic", f"hydra.run.dir={tmp_path / 'one'}",
                      cwd=tmp_path, check=False)
    assert alone.returncode == 2 and "takes oracle=max" in alone.stderr
    assert not (tmp_path / "one" / "run.h5").exists()


def test_a_stop_ends_the_whole_sweep_in_one_line(data_root, tmp_path):
    """SIGTERM to a sweep's submitting process during its first run: that run saves its state
    and its log says interrupted, no other run starts, the sweep says so in one line (no
    traceback), then the run's line and the table, and exits with 128 + 15."""
    out = tmp_path / "sweep"
    proc = subprocess.Popen([EXE, "run", "-m", "solver=bcfw,ssg", "data=ocr",
                             "lambda=0.01,0.001", "solver.passes=1000", "eval.every=0.5",
                             f"hydra.sweep.dir={out}"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out, 2)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    lines = [line for line in stderr.splitlines()          # (an empty kernel cache adds
             if not line.startswith("compiling kernels")]   # the compiling line)
    assert len(lines) == 2 and "SIGTERM: stopping every run" in lines[0], stderr
    assert lines[1].startswith("run 1 of 4 interrupted (stopped after ")
    logs = list(out.rglob("run.h5"))
    assert len(logs) == 1 and read_log(logs[0])[1]["status"] == "interrupted"
    assert (logs[0].parent / "state.pkl").exists()


def _stop_after_rows(args, log, rows, sig, cwd, resumed=0):
    """Start ``ssvmbench run ARGS``, send ``sig`` once its log has ``rows`` rows (and has
    been continued ``resumed`` times)."""
    proc = subprocess.Popen([EXE, "run", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline:
        with contextlib.suppress(OSError, KeyError, RuntimeError):
            trace, attrs = read_log(log)
            if len(trace) >= rows and attrs.get("resumed", 0) >= resumed:
                break
        time.sleep(0.2)
    proc.send_signal(sig)
    proc.wait(timeout=120)


@pytest.mark.parametrize("sig, extra, times", [(signal.SIGTERM, [], 1),
                                               (signal.SIGKILL, [], 3),
                                               (signal.SIGKILL, ["resume.every_s=0"], 1)])
def test_a_stopped_run_continues_where_it_stopped(data_root, tmp_path, sig, extra, times):
    """Stopped (SIGTERM: the state is saved on the way out) or killed three times along the
    way (SIGKILL: by default the state is saved at every checkpoint where that is cheap, so
    a run killed in its first seconds does not start over), the same command continues the
    run; its finished trace equals an uninterrupted run's in every column but the times."""
    args = ["solver=bcfw", "data=ocr", "+data.subset=0.3", "lambda=0.001", "solver.passes=8",
            "eval.every=0.5", "solver.iterates=[raw,wavg]", *extra]
    stopped = tmp_path / "stopped"
    for k in range(times):
        _stop_after_rows([*args, f"hydra.run.dir={stopped}"], stopped / "run.h5", 6 * (k + 1),
                         sig, tmp_path, resumed=k)
        trace, attrs = read_log(stopped / "run.h5")
        assert attrs["status"] == ("interrupted" if sig == signal.SIGTERM else "running"), (
            k, attrs.get("error"), attrs.get("resumed"))
        assert (stopped / "state.pkl").exists() and trace["effective_pass"].max() < 8
    again = ssvmbench("run", *args, f"hydra.run.dir={stopped}", cwd=tmp_path).stdout
    assert float(again.split("continuing the stopped run from pass ")[1].split()[0]) > 0
    ssvmbench("run", *args, f"hydra.run.dir={tmp_path / 'whole'}", cwd=tmp_path)
    resumed, attrs = read_log(stopped / "run.h5")
    whole, _ = read_log(tmp_path / "whole" / "run.h5")
    assert attrs["status"] == "finished" and attrs["resumed"] == times
    assert not (stopped / "state.pkl").exists()
    columns = [c for c in whole if c not in ("time_s", "eval_time_s")]
    pd.testing.assert_frame_equal(resumed[columns], whole[columns])


def test_a_live_run_directory_is_not_shared(data_root, tmp_path):
    """While a run writes DIR, another configuration into DIR is refused naming its owner and
    the same configuration is skipped — also with HDF5 file locking off (NFS, Lustre); once
    the owner is killed its lock no longer holds."""
    run_dir = tmp_path / "live"
    args = ["solver=ssg", "data=ocr", "solver.passes=100000", "eval.every=0.5",
            f"hydra.run.dir={run_dir}"]
    owner = subprocess.Popen([EXE, "run", *args], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not (run_dir / "run.h5").exists():
            time.sleep(0.2)
        no_locking = {"HDF5_USE_FILE_LOCKING": "FALSE"}
        other = ssvmbench("run", "solver=bcfw", "data=ocr", f"hydra.run.dir={run_dir}",
                          cwd=tmp_path, check=False, env=no_locking)
        assert other.returncode == 2 and f"pid {owner.pid}" in other.stderr
        same = ssvmbench("run", *args, cwd=tmp_path, env=no_locking)
        assert f"being written by another process (pid {owner.pid}" in same.stdout
        assert read_log(run_dir / "run.h5")[1]["status"] == "running"
        assert not list(run_dir.glob("run.h5.*"))         # nothing renamed away
    finally:
        owner.kill()
        owner.wait()
    assert (run_dir / "run.lock").exists()                # left by the killed owner
    taken = ssvmbench("run", "solver=ssg", "data=ocr", "solver.passes=1",
                      f"hydra.run.dir={run_dir}", cwd=tmp_path, check=False)
    assert "being written" not in taken.stdout + taken.stderr


def test_evaluation_threads_are_the_runs_share_of_the_cores_and_logged(data_root, tmp_path):
    """Checkpoint evaluation runs on the cores a run is given: all of them for one run, a
    share for each of a joblib sweep's parallel runs; the solver's steps run on one thread.
    Both counts are in the log."""
    ssvmbench("run", "-m", "seed=0,1", "data=ocr", "+data.subset=0.03", "solver.passes=1",
              "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
              f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path)
    ssvmbench("run", "data=ocr", "+data.subset=0.03", "solver.passes=1",
              f"hydra.run.dir={tmp_path / 'one'}", cwd=tmp_path)
    logs = sorted((tmp_path / "sweep").rglob("run.h5"))
    assert len(logs) == 2
    for log in logs:
        attrs = read_log(log)[1]
        assert (attrs["solver_threads"], attrs["eval_threads"]) == (1, evaluation_threads(2))
    assert read_log(tmp_path / "one" / "run.h5")[1]["eval_threads"] == evaluation_threads()


def test_bench_times_passes_and_a_checkpoints_evaluation(data_root, tmp_path):
    """Options and overrides may come in any order (`--passes 5 solver=...`)."""
    out = ssvmbench("bench", "--passes", "5", "solver=ssg", "data=ocr", "+data.subset=0.03",
                    cwd=tmp_path).stdout
    assert "seconds per pass:" in out and "peak memory" in out
    assert re.search(r"^dense score floor: +[0-9.]+ s .*the pass is [0-9.]+x it\)$", out, re.M)
    threads = evaluation_threads()
    assert f"s on {threads} thread" in out.split("checkpoint evaluation:")[1]


def test_the_dense_floor_needs_csr_rows_that_fit(monkeypatch):
    """A task without CSR rows, or whose dense X is too large, has no floor."""
    from ssvmbench.data.scenes import load_scenes
    from ssvmbench.plugin_kit import bench
    from ssvmbench.tasks import make_task
    chains = make_task(random_chains(20, 3, 6, seed=0))
    assert bench.dense_floor(chains, np.zeros(chains.d), repeats=1) > 0
    boxes = make_task(load_scenes(n_train=3, n_test=1, size=32).train)
    assert bench.dense_floor(boxes, np.zeros(boxes.d), repeats=1) is None
    monkeypatch.setattr(bench, "FLOOR_MAX_ENTRIES", 10)
    assert bench.dense_floor(chains, np.zeros(chains.d), repeats=1) is None


def test_bench_compiles_every_kernel_before_the_timed_passes(data_root, monkeypatch):
    """SVRG's first pass is a full gradient, so its steps compiled inside the first timed
    pass (a pass of seconds among passes of 0.2 s); the bench warms up as a run does."""
    from ssvmbench.plugin_kit import bench
    from ssvmbench.solvers import svrg
    warmed = []

    def warm_up(*args):
        seconds = real(*args)
        warmed.append(len(svrg.svrg_steps.signatures))
        return seconds

    real = bench.warm_up
    monkeypatch.setattr(bench, "warm_up", warm_up)
    bench.main(argparse.Namespace(
        overrides=["solver=svrg", "data=ocr", "+data.subset=0.03", "oracle=topk",
                   "oracle.K=2", "oracle.mu=1", f"data.root={data_root}"],
        passes=5, oracles=False))
    assert len(warmed) == 1 and warmed[0] >= 1


def test_a_quoted_run_directory_makes_no_junk_folder(tmp_path):
    """Issue 29: ``'hydra.run.dir="…"'`` (Hydra's quoting) created a folder named with the
    quotes in the current directory before Hydra read the value; a run refused before it
    starts makes no folder at all (issue 33)."""
    result = ssvmbench("run", 'hydra.run.dir="quoted dir"', "solver.passes=-1", cwd=tmp_path,
                       check=False)
    assert result.returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_broken_yaml_is_one_line_naming_its_line_and_column(tmp_path):
    """Issue 29: a preset file or a --config-dir file that does not parse gave the YAML
    parser's traceback."""
    (tmp_path / "conf" / "solver").mkdir(parents=True)
    (tmp_path / "conf" / "solver" / "mine.yaml").write_text("name: bcfw\npasses: [1,\n")
    (tmp_path / "figure.yaml").write_text("paper: x\nitem: [\n")
    for args in (["run", "--config-dir", "conf", "solver=mine"],
                 ["reproduce", "figure.yaml", "--dry-run"]):
        result = ssvmbench(*args, cwd=tmp_path, check=False)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "line 3, column 1: not valid YAML" in result.stderr
