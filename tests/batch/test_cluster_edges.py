"""Cluster edges found by running batches as a user would, each refused or reported in one
line (ssvmbench.batch.launchers.slurm, ssvmbench.common.file_lock, ssvmbench.run.runlock,
reproduce)."""

import errno
import shutil

import pytest

from ssvmbench.batch.launchers import slurm
from ssvmbench.common.errors import UserError


@pytest.fixture
def sbatch_here(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/bin/{tool}")


@pytest.mark.parametrize("delay", [0, 30, 59])
def test_a_warning_slurm_may_never_send_is_refused(sbatch_here, delay):
    """timeout_min=1 signal_delay_s=0 was accepted, SLURM never sent the warning (it looks
    for due warnings every 30 s or so) and the run died at the limit saying `running`."""
    with pytest.raises(UserError, match=f"signal_delay_s={delay}: give at least 60 s"):
        slurm.check({"timeout_min": 10, "signal_delay_s": delay})


def test_a_warning_of_a_minute_or_more_is_accepted(sbatch_here):
    slurm.check({"timeout_min": 3, "signal_delay_s": 60})
    with pytest.raises(UserError, match="timeout_min=1 leaves"):
        slurm.check({"timeout_min": 1, "signal_delay_s": 60})


def _refusing_flock(monkeypatch, code):
    from ssvmbench.common import file_lock

    def refuse(fd, op):
        raise OSError(code, "flock refused")
    monkeypatch.setattr(file_lock.fcntl, "flock", refuse)
    return file_lock


@pytest.mark.parametrize("code", [errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS])
def test_a_file_system_refusing_flock_falls_back_to_a_lock_file(monkeypatch, tmp_path, code):
    """Lustre without flock raised an error nothing caught: every run would have failed at
    its first kernel load. Now the index is guarded by an O_EXCL lock file instead."""
    file_lock = _refusing_flock(monkeypatch, code)
    inside = []
    with file_lock.exclusive(str(tmp_path / "k.nbi.lock")):
        inside.append(sorted(p.name for p in tmp_path.iterdir()))
    assert inside == [["k.nbi.lock", "k.nbi.lock.excl"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.nbi.lock"]


def test_the_lock_file_serializes_and_a_dead_holders_is_taken_over(monkeypatch, tmp_path):
    import os
    import threading
    import time
    file_lock = _refusing_flock(monkeypatch, errno.ENOLCK)
    path = str(tmp_path / "k.nbi.lock")
    order = []

    def hold(name):
        with file_lock.exclusive(path):
            order.append(f"{name} in")
            time.sleep(0.2)
            order.append(f"{name} out")
    threads = [threading.Thread(target=hold, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert order == ["a in", "a out", "b in", "b out"]
    (tmp_path / "k.nbi.lock.excl").write_text("")          # left by a process that died
    old = time.time() - file_lock.STALE_S - 10
    os.utime(tmp_path / "k.nbi.lock.excl", (old, old))
    with file_lock.exclusive(path):
        order.append("taken over")
    assert order[-1] == "taken over"



def test_a_failed_runs_task_exits_with_its_status(monkeypatch, tmp_path):
    """A failed run's task ended `COMPLETED 0:0` in sacct: submitit exits 0 after a returned
    status. Now the task writes its result as submitit would and exits with the status."""
    import os
    import types
    exits = []
    monkeypatch.setattr(slurm, "execute", lambda job, eval_threads: 2)
    monkeypatch.setattr(os, "_exit", exits.append)
    result = tmp_path / "0_result.pkl"
    monkeypatch.setattr(slurm.submitit, "JobEnvironment",
                        lambda: types.SimpleNamespace(paths=types.SimpleNamespace(
                            result_pickle=result)))
    slurm.SlurmRun(job=None)()
    assert exits == [2]
    task = types.SimpleNamespace(paths=types.SimpleNamespace(result_pickle=result))
    assert slurm._status(task) == 2


@pytest.mark.parametrize("status", [0, 130, 143])
def test_finished_and_stopped_runs_end_their_tasks_as_before(monkeypatch, status):
    import os
    monkeypatch.setattr(slurm, "execute", lambda job, eval_threads: status)
    monkeypatch.setattr(os, "_exit", lambda code: pytest.fail("exited"))
    assert slurm.SlurmRun(job=None)() == status


def _lock_of(tmp_path, **owner):
    import json
    (tmp_path / "run.lock").write_text(json.dumps(
        {"host": "node-b", "pid": 4242, "started": "earlier", "slurm_job": "", "config": "c",
         **owner}))


@pytest.mark.parametrize("ended, down, taken", [(True, None, True), (False, None, False),
                                                (None, None, False), (False, True, True)])
def test_a_lock_whose_slurm_owner_ended_is_taken_over_at_once(monkeypatch, tmp_path, ended,
                                                             down, taken):
    """A run whose node crashed was reported busy for up to 10 minutes; now a lock held by
    a SLURM job SLURM says has ended, or on a node it says is down, is taken over at once;
    an owner alive on another host (or one SLURM cannot tell of) is respected."""
    from ssvmbench.common import slurm_jobs
    from ssvmbench.run import runlock
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(slurm_jobs, "job_ended", lambda job: ended)
    monkeypatch.setattr(slurm_jobs, "node_down", lambda host: down)
    _lock_of(tmp_path, slurm_job="777")
    if taken:
        with runlock.RunLock(tmp_path, "config") as lock:
            assert lock.owner["pid"] != 4242
    else:
        with pytest.raises(runlock.Busy, match="SLURM job 777"):
            with runlock.RunLock(tmp_path, "config"):
                pass


@pytest.mark.parametrize("skew_s", [-300, 300])
def test_clocks_five_minutes_apart_neither_keep_nor_break_a_lock(monkeypatch, tmp_path,
                                                               skew_s):
    """Staleness was this host's clock minus the file's time; now both are the file
    system's, so a node whose clock is 5 minutes off agrees with the others."""
    import os
    import time

    from ssvmbench.common import slurm_jobs
    from ssvmbench.run import runlock
    monkeypatch.setattr(slurm_jobs, "node_down", lambda host: None)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew_s)
    _lock_of(tmp_path)                                   # a live heartbeat, just now
    with pytest.raises(runlock.Busy):
        with runlock.RunLock(tmp_path, "config"):
            pass
    old = real() - runlock.STALE_S - 60                  # a dead one, by the file's clock
    os.utime(tmp_path / "run.lock", (old, old))
    with runlock.RunLock(tmp_path, "config") as lock:
        assert lock.owner["pid"] == os.getpid()


def test_the_owner_record_names_the_array_task(monkeypatch, tmp_path):
    import json

    from ssvmbench.run import runlock
    monkeypatch.setenv("SLURM_JOB_ID", "1235")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "1234")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "7")
    with runlock.RunLock(tmp_path, "config"):
        owner = json.loads((tmp_path / "run.lock").read_text())
    assert (owner["slurm_job"], owner["slurm_task"]) == ("1235", "1234_7")
    assert runlock.describe(owner).endswith("SLURM job 1235 (array task 1234_7)")


def _answers(monkeypatch, replies):
    """slurm_jobs' commands answered from ``replies``: {command name: (status, out, err)}."""
    import types

    from ssvmbench.common import slurm_jobs

    def ask(command):
        if command[0] not in replies:
            return None
        status, out, err = replies[command[0]]
        return types.SimpleNamespace(returncode=status, stdout=out, stderr=err)
    monkeypatch.setattr(slurm_jobs, "_ask", ask)
    return slurm_jobs


@pytest.mark.parametrize("replies, ended", [
    ({"squeue": (0, "777|RUNNING\n", "")}, False),
    ({"squeue": (0, "777|PENDING\n", "")}, False),
    ({"squeue": (0, "777|FAILED\n", "")}, True),
    ({"squeue": (1, "", "slurm_load_jobs error: Invalid job id specified")}, True),
    ({"squeue": (0, "", ""), "sacct": (0, "RUNNING\n", "")}, False),
    ({"squeue": (1, "", "Unable to contact slurm controller")}, None),
    ({}, None),
])
def test_what_slurm_says_of_a_job(monkeypatch, replies, ended):
    assert _answers(monkeypatch, replies).job_ended("777") is ended


@pytest.mark.parametrize("out, down", [("down*\n", True), ("idle\n", False),
                                       ("drained\n", False), ("", None)])
def test_what_slurm_says_of_a_node(monkeypatch, out, down):
    assert _answers(monkeypatch, {"sinfo": (0, out, "")}).node_down("node-b") is down


def test_a_held_task_is_seen_as_held(monkeypatch):
    """squeue shows a held task as plain PENDING (its reason says JobHeldUser / Admin): the
    documented 'held' line never appeared."""
    slurm_jobs = _answers(monkeypatch, {"squeue": (0, "9_0|PENDING|JobHeldUser\n"
                                                     "9_1|PENDING|Priority\n"
                                                     "9_2|RUNNING|None\n", "")})
    states = slurm_jobs.queue_states(["9_0"])
    assert states == {"9_0": "HELD", "9_1": "PENDING", "9_2": "RUNNING"}
    assert "HELD" in slurm_jobs.HELD


def _job(tmp_path):
    from ssvmbench.batch.jobs import Job
    return Job(("solver=bcfw",), tmp_path / "run")


def test_requeues_used_up_are_named(tmp_path):
    import signal

    from ssvmbench.batch.jobs import _stamps, outcome
    kind, text = outcome(_job(tmp_path), 128 + signal.SIGUSR2, _stamps(), "COMPLETED",
                         requeues=3)
    assert kind == "interrupted" and text.startswith("time limit: requeues used up (3)")


def test_runs_cancelled_before_they_began_are_one_line(tmp_path, capsys):
    """After a Ctrl-C, each of 170 never-started tasks had its own 'interrupted (cancelled)'
    line naming a run.h5 that did not exist."""
    from ssvmbench.batch.jobs import Job, Report
    jobs = [Job(("seed=%d" % k,), tmp_path / f"run{k}") for k in range(5)]
    report = Report(jobs, "as one SLURM array")
    for index in range(5):
        report.ended(index, None, "CANCELLED")
    status = report.summary(stopped_by=2)
    err = capsys.readouterr().err
    assert err.count("cancelled before they began") == 1 and "run.h5" not in err
    assert "5 runs cancelled before they began" in err and status == 130


@pytest.mark.parametrize("sinfo, cpus_per_task, parallel", [
    ("0/2/0/2", 1, 2), ("10/30/0/40", 2, 20), (None, 1, 64)])
def test_the_dry_run_counts_the_partitions_cpus(monkeypatch, sinfo, cpus_per_task, parallel):
    """`--dry-run` promised '~10 s on 23 workers' for a batch that took 5.8 min on a 2-CPU
    partition: it counted array_parallelism alone (sinfo's %C: allocated/idle/other/total)."""
    from ssvmbench.batch.launchers import workers
    _answers(monkeypatch, {"sinfo": (0, sinfo + "\n", "")} if sinfo else {})
    settings = {"_target_": "x.SlurmLauncher", "partition": "debug",
                "cpus_per_task": cpus_per_task, "array_parallelism": 64}
    assert workers(settings, 100)[0] == parallel


def test_a_second_reproduce_on_an_out_in_use_refuses_naming_the_first(data_root, tmp_path,
                                                                     capsys):
    """Two `reproduce` on one --out at once both exited 1, reporting finished runs as
    'failed (exit status 0)'. The second now refuses in one line naming the first."""
    import os
    import socket

    from ssvmbench import cli
    from ssvmbench.papers.reproduce import OUT_LOCK
    from ssvmbench.run.runlock import RunLock
    out = tmp_path / "out"
    out.mkdir()
    with RunLock(out, "reproduce", OUT_LOCK):
        status = cli.main(["reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out",
                           str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "in use by another ssvmbench reproduce" in err[0]
    assert f"pid {os.getpid()} on {socket.gethostname()}" in err[0]
    assert not list(out.glob("logs/*/*/run.h5"))


def test_concurrent_downloads_of_one_file_are_one_download(data_root, tmp_path, monkeypatch):
    """With download: true every node of an array downloaded the same dataset at once; now
    the first downloads under a lock and the others find its file."""
    import shutil
    import threading
    import time

    from ssvmbench.data import fetch
    calls = []

    def download(dataset, relpath, spec, root):
        calls.append(relpath)
        time.sleep(0.3)
        (root / "ocr").mkdir(exist_ok=True)
        shutil.copy(data_root / relpath, root / relpath)
    monkeypatch.setattr(fetch, "fetch_file", download)
    found = []
    threads = [threading.Thread(target=lambda: found.append(
        fetch.ensure_file("ocr", "ocr/letters.pickle", tmp_path))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["ocr/letters.pickle"] and found == [tmp_path / "ocr/letters.pickle"] * 3


def test_data_fetch_stages_a_presets_data_before_submission(data_root, tmp_path, capsys):
    """`ssvmbench data fetch PRESET|PAPER…` loads each data setting the runs use once (the
    files fetched and checked, features cached), so an array's tasks find them ready."""
    import shutil

    from ssvmbench import cli
    from ssvmbench.papers import staging
    settings = staging.data_settings(["bcfw_figure2_ocr"])       # smoke's subset is the same
    assert [{k: v for k, v in s.items() if k != "root"} for s in settings] == [
        {"name": "ocr", "fold": None, "download": True}]
    (tmp_path / "ocr").mkdir()
    shutil.copy(data_root / "ocr/letters.pickle", tmp_path / "ocr/letters.pickle")
    assert cli.main(["data", "fetch", "bcfw_figure2_ocr", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("staged data=ocr") and "6251 training" in out[0]
    assert cli.main(["data", "fetch", "bcfw_figure2_ocr", "nope"]) == 2
    assert "unknown dataset or preset 'nope'" in capsys.readouterr().err


def test_detached_submission_hands_submitit_only_its_settings(monkeypatch, sbatch_here):
    """`reproduce --detach` on SLURM handed submitit the launcher's _target_ and failed with
    its NameError (the watched path removed it, the detached one did not)."""
    import types
    given = []
    monkeypatch.setattr(slurm, "_submit", lambda jobs, params: given.append(params) or [
        types.SimpleNamespace(job_id="41_0")])
    params = {"_target_": "x.SlurmLauncher", "detach": True, "timeout_min": 10,
              "signal_delay_s": 120}
    assert slurm.submit([], params) == "41"
    assert given == [{"timeout_min": 10, "signal_delay_s": 120}]
