"""``ssvmbench status DIR``: where a batch stands, read from its files alone — the plan the
batch writes before any run starts (:mod:`ssvmbench.batch.plan`), each run folder's lock, log
attributes and messages, and SLURM's task states (here from a stand-in ``squeue``; the real
one in tests/batch/test_slurm.py)."""

import json
import os
import socket
import stat
import time
import types
from pathlib import Path

import numpy as np
from helpers.cli import ssvmbench

from ssvmbench.batch import status
from ssvmbench.batch.plan import PLAN_NAME, read_plan, write_plan
from ssvmbench.run import rundir, runlock, runlog
from ssvmbench.run.runlog import RunLog, write_skipped

CONFIG = ("data:\n  name: ocr\nsolver:\n  name: bcfw\n  sub:\n    passes: 99\n  passes: 10\n"
          "seed: 0\n")


def _log(run_dir, status_, passes_done=0, run_s=None, error=None):
    """A run log with one row per pass up to ``passes_done`` and ``status_``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    log = RunLog(run_dir / runlog.LOG_NAME, {"config": CONFIG, "solver": "bcfw"})
    if passes_done:
        log.append({"effective_pass": np.arange(1.0, passes_done + 1),
                    "primal": np.ones(passes_done)})
    if status_ == "running":                    # as a killed run leaves it
        log.file.attrs["run_s"] = run_s
        log.file.close()
        return
    log.close(status_, error)
    if run_s is not None:
        import h5py
        with h5py.File(run_dir / runlog.LOG_NAME, "r+") as f:
            f.attrs["run_s"] = run_s


def _lock(run_dir, pid, host=None, age_s=0):
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / runlock.LOCK_NAME
    path.write_text(json.dumps({"host": host or socket.gethostname(), "pid": pid,
                                "started": "2026-01-01T00:00:00", "slurm_job": "",
                                "config": "x"}))
    if age_s:
        os.utime(path, (time.time() - age_s, time.time() - age_s))


def _sweep(root):
    """A sweep with every kind of run; returns its planned run folders."""
    names = ["done-a", "done-b", "failed", "bad-input", "stopped", "killed", "live",
             "skipped", "not-started", "gone-owner"]
    write_plan([types.SimpleNamespace(run_dir=root / name, expected_s=0.0) for name in names])
    _log(root / "done-a", "finished", 10, run_s=20.0)
    _log(root / "done-b", "finished", 10, run_s=20.0)
    _log(root / "failed", "failed", 3, run_s=6.0, error="ValueError: the solver\nbroke")
    (root / "bad-input").mkdir()
    (root / "bad-input" / rundir.MESSAGES_NAME).write_text(
        "[2026-01-01 00:00:00,000][ssvmbench][INFO] - starting\n"
        "[2026-01-01 00:00:01,000][ssvmbench][ERROR] - ssvmbench run: error: data.subset=2 "
        "must be in (0, 1]\n")
    _log(root / "stopped", "interrupted", 2, run_s=4.0, error="SIGTERM")
    _log(root / "killed", "running", 5, run_s=10.0)
    _log(root / "live", "running", 4, run_s=8.0)
    _lock(root / "live", os.getpid())              # this test process owns it: live
    (root / "skipped").mkdir()
    write_skipped(root / "skipped" / runlog.LOG_NAME, {"config": CONFIG},
                  "bcfw needs a chain task")
    _log(root / "gone-owner", "running", 1, run_s=2.0)
    _lock(root / "gone-owner", 2**22 + 12345)       # no such process on this host
    return names


def test_the_names_agree_with_the_run_machinery():
    assert status.LOG_NAME == runlog.LOG_NAME and status.LOCK_NAME == runlock.LOCK_NAME
    assert status.MESSAGES_NAME == rundir.MESSAGES_NAME and status.STALE_S == runlock.STALE_S


def test_the_plan_holds_the_run_folders_in_launch_order(tmp_path):
    jobs = [types.SimpleNamespace(run_dir=tmp_path / "s" / name, expected_s=s)
            for name, s in (("b", 3.0), ("a", 1.0))]
    path = write_plan(jobs)
    assert path == tmp_path / "s" / PLAN_NAME
    plan = read_plan(path)
    assert [run["dir"] for run in plan["runs"]] == [str(tmp_path / "s" / "b"),
                                                    str(tmp_path / "s" / "a")]
    assert plan["runs"][0]["expected_s"] == 3.0 and plan["pid"] == os.getpid()
    assert write_plan([types.SimpleNamespace(run_dir=Path("/x/y/z/r"), expected_s=0),
                       types.SimpleNamespace(run_dir=Path("/w/q/r"), expected_s=0)]) is None


def test_a_sweep_of_every_kind_of_run_is_counted_with_reasons(tmp_path):
    root = tmp_path / "sweep"
    _sweep(root)
    found = status.status(root)
    runs = {run["dir"]: run for run in found["runs"]}
    assert found["counts"] == {"finished": 2, "diverged": 0, "running": 1, "pending": 1,
                               "requeued": 0, "held": 0, "failed": 2, "interrupted": 3,
                               "skipped": 1}
    assert runs["failed"]["reason"] == "ValueError: the solver broke"         # one line
    assert runs["bad-input"]["reason"] == ("ssvmbench run: error: data.subset=2 must be in "
                                           "(0, 1]")
    assert runs["stopped"]["reason"] == "SIGTERM"
    assert "killed" in runs["killed"]["reason"] and "gone" in runs["gone-owner"]["reason"]
    assert runs["skipped"]["reason"] == "bcfw needs a chain task"
    assert runs["live"]["state"] == "running" and f"pid {os.getpid()}" in runs["live"]["reason"]
    assert runs["live"]["passes"] == 10 and runs["live"]["done"] == 4
    assert runs["not-started"]["state"] == "pending"
    out = status.text(found)
    assert "  finished     2\n" in out and "  pending      1\n" in out
    assert "failed:\n  bad-input: ssvmbench run: error: data.subset=2" in out
    assert "diverged" not in out and "held" not in out         # only shown when some are
    assert f"its command runs (pid {os.getpid()})" in out


def test_a_run_stopped_before_its_log_began_is_interrupted(tmp_path):
    run_dir = tmp_path / "s" / "r"
    run_dir.mkdir(parents=True)
    (run_dir / rundir.MESSAGES_NAME).write_text(
        "[2026-01-01 00:00:01,000][ssvmbench][ERROR] - ssvmbench run: interrupted: SIGTERM; "
        "the same command continues the run\n")
    run, = status.status(tmp_path / "s")["runs"]
    assert run["state"] == "interrupted" and run["reason"].endswith("continues the run")


def test_a_running_run_before_its_first_checkpoint_says_what_it_does(tmp_path):
    run_dir = tmp_path / "s" / "r"
    _lock(run_dir, os.getpid())
    messages = run_dir / rundir.MESSAGES_NAME
    messages.write_text("[2026-01-01 00:00:00,000][ssvmbench][INFO] - ssvmbench run: "
                        "solver=bcfw data=ocr -> s/r/run.h5\n")
    run, = status.status(tmp_path / "s")["runs"]
    assert run["state"] == "running" and run["reason"].startswith("starting; pid ")
    with open(messages, "a") as out:
        out.write("[2026-01-01 00:00:01,000][ssvmbench][INFO] - compiling kernels (first "
                  "run only, ~20 s)\n")
    run, = status.status(tmp_path / "s")["runs"]
    assert run["reason"].startswith("compiling kernels (first run only, ~20 s); pid ")


def test_a_stale_lock_is_no_running_run(tmp_path):
    _log(tmp_path / "s" / "r", "running", 2, run_s=4.0)
    _lock(tmp_path / "s" / "r", os.getpid(), host="elsewhere", age_s=status.STALE_S + 60)
    run, = status.status(tmp_path / "s")["runs"]
    assert run["state"] == "interrupted" and "no heartbeat" in run["reason"]
    _lock(tmp_path / "s" / "r", os.getpid(), host="elsewhere")      # fresh: trusted
    run, = status.status(tmp_path / "s")["runs"]
    assert run["state"] == "running"


def test_the_time_left_is_passes_to_go_times_seconds_per_pass(tmp_path):
    """The live run: 6 passes to go at its own 2 s per pass (12 s); the pending one: the
    median finished run's 20 s; one worker (one run runs now): 12 + 20 s."""
    _sweep(tmp_path / "sweep")
    left = status.status(tmp_path / "sweep")["time_left"]
    assert left["runs"] == 2 and left["not_estimated"] == 0 and left["workers"] == 1
    assert left["run_s"] == 32.0 and left["wall_s"] == 32.0
    assert left["seconds_per_pass"] == 2.0
    # longest first on the free worker: 5 s running | 0; then 3, 2, 2
    assert status.wall_s([5.0], [2.0, 3.0, 2.0], 2) == 7.0
    assert status.wall_s([], [4.0, 4.0], 1) == 8.0
    median = {"done": None, "passes": 10, "run_s": None, "expected_s": 0}
    assert status.remaining_s(median, 1.5, 99) == 15.0          # at the median rate
    assert status.remaining_s({**median, "passes": None, "expected_s": 7}, None, 99) == 7
    assert status.remaining_s({**median, "passes": None}, None, None) is None


def test_nothing_running_gives_the_per_run_sum(tmp_path):
    root = tmp_path / "s"
    write_plan([types.SimpleNamespace(run_dir=root / n, expected_s=30.0) for n in "abc"])
    _log(root / "a", "finished", 10, run_s=20.0)
    found = status.status(root)
    assert found["time_left"]["wall_s"] is None and found["time_left"]["run_s"] == 60.0
    assert "of run time (per-run sum" in status.text(found)


def test_json_and_text_on_the_command_line(tmp_path):
    _sweep(tmp_path / "sweep")
    (tmp_path / "sweep" / "live" / runlock.LOCK_NAME).unlink()     # this process is not there
    out = ssvmbench("status", str(tmp_path / "sweep"), "--json", cwd=tmp_path).stdout
    found = json.loads(out)
    assert found["counts"]["interrupted"] == 4 and found["counts"]["pending"] == 1
    assert {run["dir"] for run in found["runs"]} >= {"done-a", "not-started"}
    text = ssvmbench("status", str(tmp_path / "sweep"), cwd=tmp_path).stdout
    assert "interrupted  4" in text and "time left:" in text


def test_bad_input_is_one_line_and_exit_status_2(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    for where, says in (("missing", "no such folder"), ("empty", "holds no run folders"),
                        ("file", "is a file")):
        result = ssvmbench("status", str(tmp_path / where), cwd=tmp_path, check=False)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("ssvmbench status: error: ") and says in result.stderr


def test_the_report_of_a_reproduction_is_named_once_written(tmp_path):
    out = tmp_path / "out"
    _log(out / "logs" / "sweep" / "r", "finished", 2, run_s=1.0)
    found = status.status(out)
    assert found["report"] == {"paths": [], "written": None}
    assert "report: not written yet" in status.text(found)
    (out / "report.md").write_text("# r")
    (out / "report.html").write_text("<p>")
    assert status.status(out)["report"]["paths"] == [str(out / "report.md"),
                                                     str(out / "report.html")]
    assert f"report: {out / 'report.md'}, {out / 'report.html'}" in status.text(
        status.status(out / "logs"))


def test_slurm_task_states_from_squeue(tmp_path, monkeypatch):
    """The batch's SLURM array is found in submitit's folder; task i is planned run i;
    running, pending, requeued (ran before, waits again) and held come from squeue."""
    root = tmp_path / "sweep"
    names = ["r0", "r1", "r2", "r3", "r4"]
    write_plan([types.SimpleNamespace(run_dir=root / n, expected_s=0.0) for n in names])
    script = root / ".submitit" / "4242" / "4242_submission.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/bash\n#SBATCH --array=0-4%2\n#SBATCH --job-name=submitit\n")
    _log(root / "r2", "interrupted", 3, run_s=6.0, error="SIGUSR2")
    _log(root / "r4", "finished", 10, run_s=20.0)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "squeue"
    fake.write_text("#!/bin/sh\nprintf '4242_0|RUNNING|None\\n4242_1|PENDING|"
                    "JobArrayTaskLimit\\n4242_2|PENDING|BeginTime\\n4242_3|REQUEUE_HOLD|"
                    "JobHeldAdmin\\n'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = ssvmbench("status", str(root), "--json", cwd=tmp_path)
    found = json.loads(result.stdout)
    runs = {run["dir"]: run for run in found["runs"]}
    assert [runs[n]["state"] for n in names] == ["running", "pending", "requeued", "held",
                                                 "finished"]
    assert found["batches"][0]["slurm"] == {"array": "4242", "parallelism": 2,
                                            "squeue": True}
    assert "scontrol release 4242_3" in runs["r3"]["reason"]
    assert runs["r2"]["reason"] == "stopped at pass 3 of 10; SLURM: BeginTime"
    assert runs["r1"]["reason"] == "SLURM: JobArrayTaskLimit"
    monkeypatch.setattr(status, "squeue_states", lambda array: None)    # no answer
    found = status.status(root)                            # the run folders say
    assert [run["state"] for run in found["runs"]] == ["pending", "pending", "interrupted",
                                                      "pending", "finished"]
    assert "squeue did not answer" in status.text(found)


def test_a_real_sweep_is_all_finished(tmp_path):
    words = ["data=voc_synthetic", "data.n_train=12", "data.n_test=4", "data.size=32",
             "solver.passes=1", "seed=0,1"]
    ssvmbench("run", "-m", *words, f"hydra.sweep.dir={tmp_path / 's'}", cwd=tmp_path)
    assert len(read_plan(tmp_path / "s" / PLAN_NAME)["runs"]) == 2
    out = ssvmbench("status", str(tmp_path / "s"), cwd=tmp_path).stdout
    assert f"{tmp_path / 's'}: 2 runs\n  finished     2\n  running      0\n" in out, out
    assert "time left: none" in out and "its command has ended" in out
