"""A batch of runs on the local pool (``run -m``, ``reproduce``): one line per run and a
table, and stopping it in every way a user does — Ctrl-C, SIGTERM or SIGKILL to the
submitting process, twice — saves every run's state, leaves no worker behind, and the same
command continues. The SLURM hand-over (SIGUSR2 -> state saved -> submitit requeues) is
tested here without a cluster and in tests/batch/test_slurm.py with one."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.cli import EXE, ssvmbench, wait_for_logs, wait_for_rows

from ssvmbench.batch.jobs import Job, expected_wall_s, sweep_jobs
from ssvmbench.run.runlog import read_log

LONG = ("solver=bcfw,ssg", "data=ocr", "lambda=0.01,0.001", "solver.passes=60",
        "eval.every=0.5")


def _workers_of(pid):
    """The pids of the worker processes (``multiprocessing.spawn``) of process ``pid``."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid,ppid,args"], capture_output=True,
                         text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines()[1:]
            if "spawn_main" in line and line.split()[1] == str(pid)]


def _start(args, cwd, **kwargs):
    return subprocess.Popen([EXE, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs)


def test_sweep_jobs_are_the_runs_and_directories_of_run_m(tmp_path):
    """``reproduce`` builds its batch with :func:`sweep_jobs`; the runs and directories must
    be those of ``ssvmbench run -m`` with the same overrides, so each finds the other's."""
    words = ["solver=bcfw,sgd", "data=voc_synthetic", "data.n_train=6", "data.n_test=2",
             "data.size=32", "lambda=1/n,0.01", "solver.passes=1"]
    ssvmbench("run", "-m", *words, f"hydra.sweep.dir={tmp_path / 's'}", cwd=tmp_path)
    made = sorted(path.parent for path in (tmp_path / "s").rglob("run.h5"))
    jobs = sweep_jobs([*words, "hydra/launcher=joblib"], tmp_path / "s")
    assert sorted(job.run_dir for job in jobs) == made and len(made) == 4
    assert jobs[0].overrides[0] == "solver=bcfw" and "lambda=1/n" in jobs[0].overrides


def test_expected_wall_time_takes_the_longest_runs_first():
    jobs = [Job((), Path(str(k)), s) for k, s in enumerate([1, 1, 1, 3, 2, 2])]
    assert expected_wall_s(jobs, 2) == 5          # 3+2 | 2+1+1+1... LPT: 3,1,1 | 2,2
    assert expected_wall_s(jobs, 1, startup_s=1) == 16
    assert expected_wall_s(jobs, 10) == 3


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_stopping_a_local_sweep_stops_every_worker_and_the_same_command_continues(
        data_root, tmp_path, how):
    """Ctrl-C (SIGINT to the terminal's process group), SIGTERM to the submitting process
    only, or SIGKILL to it: each running run saves its state (status interrupted), no worker
    is left running, the command says so without a traceback (130 / 143), and the same
    command continues the runs from their states."""
    out = tmp_path / "sweep"
    args = ["run", "-m", *LONG, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
            f"hydra.sweep.dir={out}"]
    proc = _start(args, tmp_path)
    wait_for_logs(out, 2, rows=4)                  # both runs training
    workers = _workers_of(proc.pid)
    assert len(workers) == 2
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    deadline = time.time() + 60
    while time.time() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers), "a worker outlived the sweep"
    logs = sorted(out.rglob("run.h5"))
    assert len(logs) == 2 and all(read_log(log)[1]["status"] == "interrupted" for log in logs)
    assert all((log.parent / "state.pkl").exists() for log in logs)
    if how != "sigkill":
        assert proc.returncode == (130 if how == "ctrl-c" else 143)
        assert "Traceback" not in stderr and stderr.count("interrupted (stopped after ") == 2
        assert "not started  2" in stdout
    again = ssvmbench(*args, cwd=tmp_path).stdout
    assert again.count("finished (60 passes") == 4, again
    assert all("continuing the stopped run" in (log.parent / "app.log").read_text()
               for log in logs)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


def test_a_second_ctrl_c_stops_at_once(data_root, tmp_path):
    out = tmp_path / "sweep"
    proc = _start(["run", "-m", *LONG, "hydra.launcher.n_jobs=2",
                   f"hydra.sweep.dir={out}"], tmp_path)
    wait_for_rows(out, 2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "stopped at once" in stderr and "Traceback" not in stderr


def test_slurms_warning_signal_saves_the_state_then_hands_over_to_submitit(data_root, tmp_path):
    """Under SLURM, SIGUSR2 (``signal_delay_s`` before the time limit) reaches the run inside
    its compiled passes: the run stops at its next step with its state saved and its log
    ``interrupted``, and only then submitit's own handler (which requeues the task and
    exits) is called; before this, submitit's ``sys.exit`` inside the solver call failed the
    run and lost its state."""
    script = tmp_path / "task.py"
    script.write_text(textwrap.dedent(f"""
        import signal, sys
        from pathlib import Path
        from ssvmbench.batch.jobs import Job
        from ssvmbench.batch.launchers.slurm import SlurmRun

        def submitit_handler(signum, frame):        # stands for checkpoint_and_try_requeue
            Path({str(tmp_path / 'requeued')!r}).write_text(str(signum))
            sys.exit(-1)

        signal.signal(signal.SIGUSR2, submitit_handler)
        SlurmRun(Job(("solver=bcfw", "data=ocr", "solver.passes=400", "eval.every=0.5"),
                     Path({str(tmp_path / 'run')!r})))()
    """))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    log = wait_for_rows(tmp_path / "run", 2)
    proc.send_signal(signal.SIGUSR2)
    assert proc.wait(timeout=120) == 255               # sys.exit(-1), from the handler
    assert (tmp_path / "requeued").read_text() == str(int(signal.SIGUSR2))
    trace, attrs = read_log(log)
    assert attrs["status"] == "interrupted" and "SIGUSR2" in attrs["error"]
    assert (tmp_path / "run" / "state.pkl").exists()
    assert "SIGUSR2" in (tmp_path / "run" / "app.log").read_text()


def test_stopping_reproduce_stops_its_batch_and_the_same_command_finishes_it(
        data_root, tmp_path):
    """SIGTERM to ``ssvmbench reproduce``: its workers stop with their runs' states saved
    (no orphan keeps writing logs), no plot or report is written, exit 143; the same
    command then finishes the runs, plots and reports."""
    out = tmp_path / "rep"
    args = ["reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
            "--overrides", "hydra.launcher.n_jobs=2", "+data.subset=0.5", "solver.passes=60"]
    proc = _start(args, tmp_path)
    wait_for_logs(out / "logs", 2, rows=4)
    workers = _workers_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "Traceback" not in stderr, stderr
    time.sleep(1)
    assert workers and not any(_alive(pid) for pid in workers)
    assert not (out / "report.md").exists()
    statuses = [read_log(log)[1]["status"] for log in out.rglob("run.h5")]
    assert "interrupted" in statuses and "running" not in statuses
    again = ssvmbench(*args, cwd=tmp_path, timeout=900)
    assert (out / "report.md").exists() and "batch done" in again.stdout


def test_run_control_keys_name_no_folder_in_either_launcher():
    """runlog.RUN_CONTROL is left out of a sweep job's folder name by batch.sweep_jobs and
    by Hydra's own sweeps (configs/config.yaml): the two lists must agree."""
    import yaml

    from ssvmbench.common.paths import config_dir
    from ssvmbench.run.runlog import RUN_CONTROL

    config = yaml.safe_load((config_dir() / "config.yaml").read_text())
    excluded = config["hydra"]["job"]["config"]["override_dirname"]["exclude_keys"]
    assert excluded == list(RUN_CONTROL)
