"""Sweeps on a real SLURM cluster (``hydra/launcher=slurm``): the one-node cluster that
``.ci/run`` starts from Debian's ``slurm-wlm`` and ``munge`` (scripts/slurm_cluster.sh, no
accounting, so ``sacct`` fails as on many small clusters). Outside CI these tests skip unless
such a cluster is up (``SLURM_CONF`` set). They run one after the other in one xdist worker:
the cluster has the machine's two cores."""

import json
import os
import shutil
import signal
import subprocess
import time

import pandas as pd
import pytest
from helpers.cli import EXE, ssvmbench, wait_for_logs

from ssvmbench.run.runlog import read_log

pytestmark = pytest.mark.xdist_group("slurm")

PARTITION = os.environ.get("SLURM_CLUSTER_PARTITION", "debug")
SLURM = ("hydra/launcher=slurm", f"hydra.launcher.partition={PARTITION}",
         "hydra.launcher.timeout_min=10")
TIMES = ["time_s", "eval_time_s"]


@pytest.fixture(scope="module")
def cluster():
    """The cluster's partition; skip (fail in CI) without one."""
    if not (os.environ.get("SLURM_CONF") and shutil.which("sbatch")):
        reason = ("needs a SLURM cluster: scripts/slurm_cluster.sh install && eval "
                  "\"$(scripts/slurm_cluster.sh start DIR)\" (as .ci/run does)")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return PARTITION


def _traces(root):
    """``{run directory name: trace without the times}`` of the logs under ``root``."""
    return {path.parent.name: read_log(path)[0].drop(columns=TIMES)
            for path in sorted(root.rglob("run.h5"))}


def _wait_for_jobs(timeout=120):
    """The ids of the jobs SLURM lists, once there are some."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        jobs = subprocess.run(["squeue", "-h", "-o", "%A"], capture_output=True,
                              text=True).stdout.split()
        if jobs:
            return jobs
        time.sleep(0.5)
    raise AssertionError("no job submitted")


def _no_jobs_left(timeout=60):
    """Whether SLURM lists no pending, running or completing job (cancelled tasks finish
    their clean-up within ``KillWait``)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True)
        if out.stdout.strip() == "":
            return True
        time.sleep(1)
    return False


def test_a_sweep_on_slurm_writes_the_logs_of_a_local_sweep(data_root, cluster, tmp_path):
    """One array job; the submitting command prints each run's line and the table; the
    logs equal a local sweep's in every column but the times."""
    grid = ["solver=bcfw,ssg", "data=ocr", "+data.subset=0.05", "solver.passes=3", "seed=0,1"]
    on_slurm = ssvmbench("run", "-m", *grid, *SLURM, f"hydra.sweep.dir={tmp_path / 'slurm'}",
                         cwd=tmp_path, timeout=600)
    assert on_slurm.stdout.count("finished (3 passes") == 4, on_slurm.stdout
    assert "submitted as SLURM job" in on_slurm.stdout and "finished     4" in on_slurm.stdout
    ssvmbench("run", "-m", *grid, f"hydra.sweep.dir={tmp_path / 'local'}", cwd=tmp_path)
    slurm, local = _traces(tmp_path / "slurm"), _traces(tmp_path / "local")
    assert sorted(slurm) == sorted(local) and len(slurm) == 4
    for name, trace in local.items():
        pd.testing.assert_frame_equal(slurm[name], trace)
    assert read_log(next((tmp_path / "slurm").rglob("run.h5")))[1]["eval_threads"] == 1


def _passes_lasting(seconds, tmp_path):
    """OCR BCFW passes (a multiple of 20) that take about ``seconds`` of solving now."""
    ssvmbench("run", "solver=bcfw", "data=ocr", "lambda=0.01", "solver.passes=40",
              f"hydra.run.dir={tmp_path / 'probe'}", cwd=tmp_path)
    trace = read_log(tmp_path / "probe" / "run.h5")[0]
    per_pass = trace["time_s"].max() / trace["effective_pass"].max()
    return max(200, 20 * round(seconds / per_pass / 20))


def test_a_run_longer_than_its_time_limit_finishes_after_requeues(data_root, cluster,
                                                                  tmp_path):
    """timeout_min=2, the warning signal 60 s before: the run (about 90 s of solving at this
    machine's present speed, more with its start-up) is stopped by SIGUSR2, saves its state,
    is requeued by submitit and continues; the submitting command waits through the
    requeues, reports it finished (exit 0), and the trace equals an uninterrupted run's. The
    passes come from a pass time measured now, and requeues are plenty, so that a loaded
    machine (it once ran out of requeues at load 10) or a fast one changes nothing."""
    passes = _passes_lasting(90, tmp_path)
    args = ["solver=bcfw", "data=ocr", "lambda=0.01", f"solver.passes={passes}",
            "eval.every=20"]
    reference = subprocess.Popen([EXE, "run", *args, f"hydra.run.dir={tmp_path / 'whole'}"],
                                 cwd=tmp_path, stdout=subprocess.DEVNULL)
    limited = ssvmbench("run", "-m", *args, *SLURM[:2], "hydra.launcher.timeout_min=2",
                        "hydra.launcher.signal_delay_s=60", "hydra.launcher.max_num_timeout=30",
                        f"hydra.sweep.dir={tmp_path / 'slurm'}", cwd=tmp_path, timeout=1800)
    assert reference.wait(timeout=1200) == 0
    assert f"run 1 of 1 finished ({passes} passes" in limited.stdout, limited.stdout
    log = next((tmp_path / "slurm").rglob("run.h5"))
    trace, attrs = read_log(log)
    assert attrs["status"] == "finished" and attrs["resumed"] >= 1
    assert "SIGUSR2" in (log.parent / "app.log").read_text()
    whole = read_log(tmp_path / "whole" / "run.h5")[0]
    pd.testing.assert_frame_equal(trace.drop(columns=TIMES), whole.drop(columns=TIMES))


def test_ctrl_c_cancels_scancel_is_reported_and_the_same_command_continues(
        data_root, cluster, tmp_path):
    """Ctrl-C on the submitting command cancels every task (each run saves its state), one
    line per run, exit 130; a task cancelled from another shell (``scancel``, no
    accounting here) is one line naming its log and the command ends instead of waiting
    forever; the same command then continues both runs to the end."""
    out = tmp_path / "sweep"
    args = ["run", "-m", "solver=bcfw,ssg", "data=ocr", "solver.passes=300", "eval.every=5",
            *SLURM, f"hydra.sweep.dir={out}"]
    proc = subprocess.Popen([EXE, *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for_logs(out, 2, rows=4)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert "SIGINT: cancelling every task" in stderr
    assert stderr.count("interrupted (cancelled after ") == 2, stderr
    logs = sorted(out.rglob("run.h5"))
    assert [read_log(log)[1]["status"] for log in logs] == ["interrupted"] * 2
    assert all((log.parent / "state.pkl").exists() for log in logs)
    assert _no_jobs_left()

    proc = subprocess.Popen([EXE, *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    jobs = _wait_for_jobs()
    time.sleep(15)                                 # running again, from their states
    subprocess.run(["scancel", *jobs], check=True)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "interrupted (cancelled" in stderr, (stdout, stderr)
    again = ssvmbench(*args, cwd=tmp_path, timeout=600)
    assert again.stdout.count("finished (300 passes") == 2, again.stdout
    assert all("continuing the stopped run" in (log.parent / "app.log").read_text()
               for log in logs)


def test_a_failed_run_is_one_line_and_the_others_go_on(data_root, cluster, tmp_path):
    out = tmp_path / "sweep"
    result = ssvmbench("run", "-m", "solver=bcfw", "data=ocr", "+data.subset=0.05",
                       "solver.passes=2", f"data.root={data_root},{tmp_path / 'nothing'}",
                       "data.download=false", *SLURM, f"hydra.sweep.dir={out}",
                       cwd=tmp_path, check=False, timeout=600)
    assert result.returncode == 1, result.stderr
    assert "finished (2 passes" in result.stdout
    failed = [line for line in result.stderr.splitlines() if " failed (" in line]
    assert len(failed) == 1 and "app.log" in failed[0] and "nothing" in failed[0]
    assert "failed       1" in result.stdout and "Traceback" not in result.stderr
    array = (result.stdout + result.stderr).split("submitted as SLURM job ")[1].split(";")[0]
    states = subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%T", "-j", array],
                            capture_output=True, text=True).stdout.split()
    assert sorted(states) == ["COMPLETED", "FAILED"]    # the failed run's task says so


def test_a_time_limit_shorter_than_the_warning_is_refused_before_submitting(cluster,
                                                                            tmp_path):
    result = ssvmbench("run", "-m", "solver=bcfw", "data=ocr", *SLURM[:2],
                       "hydra.launcher.timeout_min=1", f"hydra.sweep.dir={tmp_path}",
                       cwd=tmp_path, check=False)
    assert result.returncode == 2 and "signal_delay_s" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and _no_jobs_left()


def test_a_method_added_to_a_preset_runs_on_slurm_like_any_batch(data_root, cluster, tmp_path):
    """`reproduce --with` (issue 42): the papers' runs and the added method's go as one array;
    the method's elastic-net runs, which it cannot make, are left out in one line first."""
    out = tmp_path / "out"
    result = ssvmbench("reproduce", "sap_figure1_ocr", "--size", "smoke", "--out", str(out),
                       "--with", "solver=bcfw", "solver.sampling=permutation", "--as", "P",
                       "--overrides", *SLURM, cwd=tmp_path, timeout=900)
    assert result.stdout.count("skipped: P on sap_ocr (sap_figure1_ocr, 2 of 4 runs)") == 1
    assert "submitted as SLURM job" in result.stdout and "finished     10" in result.stdout
    assert len(list((out / "logs" / "added").rglob("run.h5"))) == 2      # rho1 = 0, 2 folds
    compared = pd.read_csv(out / "comparisons.csv")
    assert set(compared["method"]) == {"P", "P-wavg"} and "- P in " in (out / "report.md").read_text()


def test_a_detached_reproduce_finishes_on_the_cluster_without_its_shell(data_root, cluster,
                                                                        tmp_path):
    """`reproduce --detach` on SLURM: the command returns once the array and the job after
    it are submitted; that job draws the figures and the report when the last run ends."""
    out = tmp_path / "out"
    result = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
                       "--detach", "--overrides", *SLURM, cwd=tmp_path, timeout=300)
    assert "detached: SLURM job" in result.stdout and "ssvmbench status" in result.stdout
    deadline = time.time() + 900
    while time.time() < deadline and not (out / "report.md").exists():
        time.sleep(2)
    logs = list(out.glob("reproduce-*.log"))
    assert (out / "report.md").exists(), [log.read_text()[-2000:] for log in logs]
    assert len(logs) == 1 and "Traceback" not in logs[0].read_text()
    assert _no_jobs_left()


def test_a_detached_sweep_returns_at_once(data_root, cluster, tmp_path):
    result = ssvmbench("run", "-m", "solver=bcfw", "data=ocr", "+data.subset=0.05",
                       "solver.passes=1", "seed=0,1", *SLURM, "hydra.launcher.detach=true",
                       f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path, timeout=300)
    assert "detached; SLURM job" in result.stderr + result.stdout
    assert len(wait_for_logs(tmp_path / "sweep", 2, 1, timeout=600)) == 2
    assert _no_jobs_left(timeout=300)
    found = json.loads(ssvmbench("status", str(tmp_path / "sweep"), "--json",
                                 cwd=tmp_path).stdout)     # the detached batch's plan too
    assert found["counts"]["finished"] == 2 and found["batches"][0]["slurm"]["array"]


def test_status_reads_the_array_from_another_shell(data_root, cluster, tmp_path):
    """``ssvmbench status DIR`` while the array runs (one task at a time): the batch's array
    found in DIR/.submitit and known to squeue, one run running and the other pending or
    done; once the sweep is done, both finished."""
    sweep = tmp_path / "s"
    args = ["run", "-m", "data=ocr", "solver.passes=30", "seed=0,1", *SLURM,
            "hydra.launcher.array_parallelism=1", f"hydra.sweep.dir={sweep}"]
    proc = subprocess.Popen([EXE, *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    array = None
    try:
        deadline, found = time.time() + 300, {}
        while time.time() < deadline:
            result = ssvmbench("status", str(sweep), "--json", cwd=tmp_path, check=False)
            if result.returncode == 0:
                found = json.loads(result.stdout)
                array = (found["batches"][0].get("slurm") or {}).get("array")
                if array and (found["counts"]["running"] or found["counts"]["finished"]):
                    break
            time.sleep(0.5)
        assert found["batches"][0]["slurm"] == {"array": array, "parallelism": 1,
                                                "squeue": True}, found
        tasks = subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%i", "-j",
                                array], capture_output=True, text=True).stdout.split()
        assert f"{array}_0" in tasks or found["counts"]["finished"], tasks
        assert found["runs_total"] == 2 and found["counts"]["running"] <= 1
        assert found["counts"]["running"] + found["counts"]["pending"] \
            + found["counts"]["finished"] == 2, found["counts"]
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            if array:
                subprocess.run(["scancel", array], check=False)
    out = ssvmbench("status", str(sweep), cwd=tmp_path).stdout
    assert "  finished     2\n" in out and f"SLURM array {array}" in out, out
