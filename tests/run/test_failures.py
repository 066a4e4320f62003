"""Bad input, full disks, broken files and diverging runs end in one clear line or a clear
status, and nothing already written is lost (issue 19): each case here failed before."""

import errno
import json
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pandas as pd
import pytest
from helpers.cli import EXE, ssvmbench, wait_for_rows

from ssvmbench import api
from ssvmbench.common.errors import UserError, describe_os_error
from ssvmbench.data import features
from ssvmbench.run import runlog
from ssvmbench.run.rundir import RunDirectory
from ssvmbench.run.runlog import Interrupted, LostOwnership, RunLog, load_logs, read_log
from ssvmbench.run.settings import read
from ssvmbench.solvers import registered
from ssvmbench.solvers.sgd import SGD

OCR = ["data=ocr", "+data.subset=0.05", "lambda=0.01"]


@pytest.mark.parametrize("override, message", [
    ("+solver.pases=5", r"solver.pases: not an option of solver ssg; its options: \['iterates'"),
    ("+data.foo=5", r"data.foo: not an option of data=brown; its options: \["),
    ("+oracle.nu=5", "oracle.nu: not an oracle setting"),
    ("+experiment=bcfw_figure2_ocr", "run `ssvmbench reproduce NAME`"),
])
def test_what_hydra_would_add_silently_is_refused_by_name(override, message):
    """Hydra suggests ``+solver.pases=5`` for a misspelt key; the run used to ignore it (and
    ``+experiment=PRESET``) and train with the defaults (issue 20)."""
    with pytest.raises(UserError, match=message):
        read(api.config(["solver=ssg", "data=brown", override]))


@pytest.mark.parametrize("override, message", [
    ("seed=-1", r"seed=-1 must be a whole number in \[0, 2\*\*63\)"),
    ("seed=abc", r"seed=abc must be a whole number in \[0"),
    ("solver.passes=abc", "solver.passes=abc must be a finite number"),
    ("solver.passes=0", "solver.passes=0 must be > 0"),
    ("lambda=inf", "lambda=inf must be a finite positive number"),
    ("l1=nan", "l1=nan must be a finite non-negative number"),
    ("oracle.mu=-1", "oracle.mu=-1 must be >= 0"),
    ("stop.gap=abc", "stop.gap=abc must be a finite number"),
])
def test_bad_settings_are_refused_before_any_data_is_read(override, message):
    with pytest.raises(UserError, match=message):
        read(api.config(["solver=ssg", "data=brown", override]))


def test_a_bad_setting_on_big_data_fails_at_once(tmp_path):
    """data=brown lambda=abc used to fail after loading 1 GB; now nothing is loaded (the data
    root does not even exist)."""
    result = ssvmbench("run", "data=brown", "lambda=abc", f"data.root={tmp_path / 'none'}",
                       f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "ssvmbench run: error: lambda=abc is not a number; give e.g. lambda=0.01, "
        "lambda=1/n or lambda=inv_n")


class NaNAfterTwoPasses(SGD):
    name = "nan_after_two"

    def state(self):
        a, v, ell = super().state()
        return (np.nan if self.oracle_calls > 2 * self.task.n else a), v, ell


def test_a_diverging_run_stops_as_diverged_and_is_kept(data_root, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.setitem(registered(), NaNAfterTwoPasses.name, NaNAfterTwoPasses)
    args = ["solver=nan_after_two", *OCR, "solver.passes=10"]
    trace, attrs = api.run(args, tmp_path / "run")
    assert attrs["status"] == "diverged" and "not finite after 3 passes" in attrs["error"]
    assert trace["effective_pass"].max() == 3
    assert "diverged: the primal objective of iterate raw" in capsys.readouterr().err
    api.run(args, tmp_path / "run")                    # kept: not redone
    assert "diverged already, skipped" in capsys.readouterr().out


def test_a_corrupt_log_in_the_run_directory_is_set_aside(data_root, tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.h5").write_text("not an HDF5 file")
    _, attrs = api.run(["solver=ssg", *OCR, "solver.passes=1"], run_dir)
    assert attrs["status"] == "finished"
    kept = list(run_dir.glob("run.h5.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_text() == "not an HDF5 file"
    assert "not a readable run log" in capsys.readouterr().out


def test_a_finished_log_has_columns_as_long_as_its_rows(data_root, tmp_path):
    """Plain h5py (and HDFView, pandas) read no padding rows; read_log still reads logs of
    the earlier, padded layout."""
    api.run(["solver=ssg", *OCR, "solver.passes=2"], tmp_path / "run")
    with h5py.File(tmp_path / "run" / "run.h5") as f:
        n = f.attrs["n_rows"]
        assert n > 0 and {len(d) for d in f["trace"].values()} == {n}
    padded = RunLog(tmp_path / "padded.h5", {})
    padded.append({"effective_pass": [1.0, 2.0], "iterate": ["raw", "raw"]})
    padded.file.close()                                     # as a run of the earlier layout
    with h5py.File(tmp_path / "padded.h5") as f:
        assert len(f["trace/effective_pass"]) == runlog.BLOCK
    trace, _ = read_log(tmp_path / "padded.h5")
    assert list(trace["effective_pass"]) == [1.0, 2.0] and list(trace["iterate"]) == ["raw"] * 2


def test_a_full_disk_stops_the_run_as_interrupted_and_it_continues(data_root, tmp_path,
                                                                  monkeypatch):
    """Once the disk has no room, the run stops before HDF5 writes: the log keeps every row
    written so far (n_rows counts them), says interrupted, and the same command continues
    from the last saved state when there is room again."""
    real = runlog.shutil.disk_usage
    calls = {"n": 0}

    def filling(path):
        calls["n"] += 1
        usage = real(path)
        return usage._replace(free=0) if calls["n"] > 6 else usage
    monkeypatch.setattr(runlog.shutil, "disk_usage", filling)
    args = ["solver=bcfw", *OCR, "solver.passes=8", "resume.every_s=0"]
    with pytest.raises(Interrupted, match="is full"):
        api.run(args, tmp_path / "run")
    trace, attrs = read_log(tmp_path / "run" / "run.h5")
    assert attrs["status"] == "interrupted" and "is full" in attrs["error"]
    with h5py.File(tmp_path / "run" / "run.h5") as f:
        assert f.attrs["n_rows"] == len(trace) > 0
        assert {len(d) for d in f["trace"].values()} == {len(trace)}
    assert not list((tmp_path / "run").glob("*.tmp"))
    monkeypatch.setattr(runlog.shutil, "disk_usage", real)
    trace, attrs = api.run(args, tmp_path / "run")
    assert attrs["status"] == "finished" and attrs["resumed"] == 1
    assert trace["effective_pass"].max() == 8


def test_an_earlier_sweeps_record_is_kept(data_root, tmp_path):
    sweep = tmp_path / "sweep"
    for seed in (0, 1):
        ssvmbench("run", "-m", "solver=ssg", *OCR, "solver.passes=1", f"seed={seed}",
                  f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    kept = list(sweep.glob("multirun.yaml.*"))
    assert len(kept) == 1 and "seed=0" in kept[0].read_text()
    assert "seed=1" in (sweep / "multirun.yaml").read_text()


def test_a_file_in_the_way_of_the_run_directory_is_one_line(tmp_path):
    (tmp_path / "taken").write_text("")
    result = ssvmbench("run", "solver=ssg", f"hydra.run.dir={tmp_path / 'taken' / 'run'}",
                       cwd=tmp_path, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"ssvmbench run: error: Not a directory: {tmp_path / 'taken' / 'run'} (a part of the "
        "path is a file, not a folder)"]


def test_plot_skips_a_log_without_the_columns_it_needs_naming_it(data_root, tmp_path):
    api.run(["solver=ssg", *OCR, "solver.passes=1"], tmp_path / "logs" / "good")
    with h5py.File(tmp_path / "logs" / "odd.h5", "w") as f:
        f.attrs.update(status="finished", n_rows=2, solver="x", data="ocr")
        f.create_group("trace").create_dataset("effective_pass", data=[1.0, 2.0])
    with pytest.warns(UserWarning, match=r"skipping run log .*odd.h5: no column iterate"):
        table = load_logs(tmp_path / "logs")
    assert set(table["solver"]) == {"ssg"}
    result = ssvmbench("plot", str(tmp_path / "logs"), "-o", str(tmp_path / "figs"),
                       cwd=tmp_path, env={"PYTHONWARNINGS": "default"})
    assert "ssvmbench: warning: skipping run log" in result.stderr
    assert "Traceback" not in result.stderr and (tmp_path / "figs" / "summary.csv").exists()


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated"])
def test_an_unreadable_feature_cache_is_rebuilt(tmp_path, monkeypatch, content, capsys):
    monkeypatch.setenv("SSVMBENCH_CACHE_DIR", str(tmp_path))
    built = features.cached(["probe"], lambda: {"ids": np.arange(3)})
    path, = (tmp_path / "features").glob("*.npz")
    path.write_bytes(content)
    again = features.cached(["probe"], lambda: {"ids": np.arange(3)})
    assert np.array_equal(again["ids"], built["ids"]) and "rebuilding it" in capsys.readouterr().err
    with np.load(path) as stored:
        assert np.array_equal(stored["ids"], built["ids"])


def test_a_file_without_read_permission_is_named_not_called_corrupt(data_root, monkeypatch):
    """(As root, chmod does not stop a read: the denial is simulated.) The loader lets the
    PermissionError through instead of advising to delete the file; the command line prints
    it in one line."""
    from ssvmbench.data import ocr

    def denied(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    monkeypatch.setattr(ocr, "_read_pickle", denied)
    with pytest.raises(PermissionError):
        ocr.load(root=data_root, download=False)
    assert describe_os_error(PermissionError(errno.EACCES, "Permission denied", "/d/x")) == (
        "Permission denied: /d/x (check its permissions)")


def test_a_killed_extractions_temporary_file_is_cleaned_up(tmp_path, monkeypatch):
    """A SIGTERM during extraction is deferred to the next check (StopSignals), so the cache
    write completes; a SIGKILL can leave a temporary file, removed by the next write."""
    monkeypatch.setenv("SSVMBENCH_CACHE_DIR", str(tmp_path))
    (tmp_path / "features").mkdir()
    orphan, fresh = tmp_path / "features" / "old.tmp", tmp_path / "features" / "new.tmp"
    for path in (orphan, fresh):
        path.write_bytes(b"partial")
    old = orphan.stat().st_mtime - features.ORPHAN_AGE_S - 1
    os.utime(orphan, (old, old))
    features.cached(["probe"], lambda: {"ids": np.arange(3)})
    assert not orphan.exists() and fresh.exists()      # a live process's file stays


def test_data_list_shows_the_alignment_files_and_how_to_get_them(data_root, tmp_path):
    """``data=alignment`` reads hansards/ (issue 20: `data list` omitted it); with no public
    download, a missing file says where to get it."""
    listed = ssvmbench("data", "list", "--root", str(data_root), cwd=tmp_path).stdout
    assert "alignment: English-French Hansards" in listed
    assert all(f"hansards/hansards.{x}: ok" in listed for x in "aef")
    missing = ssvmbench("data", "fetch", "alignment", "--root", str(tmp_path), cwd=tmp_path,
                        check=False)
    assert missing.returncode == 2 and "mihalcea/wpt" in missing.stderr
    assert "Traceback" not in missing.stderr


def _stopped_run(tmp_path, args):
    """A run of ``args`` into ``tmp_path/run`` stopped by SIGTERM after a few checkpoints."""
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([EXE, "run", *args, f"hydra.run.dir={run_dir}"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_rows(run_dir, 6)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 143
    return run_dir


LONG_RUN = ["solver=bcfw", "data=ocr", "+data.subset=0.2", "solver.passes=100",
            "eval.every=0.5"]


def test_a_truncated_state_is_set_aside_and_the_run_starts_afresh(data_root, tmp_path):
    """Issue 29: a damaged ``state.pkl`` blocked the resume with a traceback until deleted by
    hand."""
    run_dir = _stopped_run(tmp_path, LONG_RUN)
    state = run_dir / "state.pkl"
    state.write_bytes(state.read_bytes()[:100])
    again = ssvmbench("run", *LONG_RUN, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert "the saved state does not read" in again.stdout and "starts afresh" in again.stdout
    assert list(run_dir.glob("state.pkl.unreadable-*"))
    assert list(run_dir.glob("run.h5.interrupted-*"))
    assert read_log(run_dir / "run.h5")[1]["status"] == "finished"


def test_a_signal_while_the_results_are_written_is_reported(data_root, tmp_path, monkeypatch):
    """Issue 29: SIGTERM during the final write was swallowed (exit 0, nothing said)."""
    from ssvmbench.run import rundir
    from ssvmbench.run.stop_signals import Stopped

    written = rundir.save_weights

    def save_and_get_a_signal(path, solver):
        os.kill(os.getpid(), signal.SIGTERM)
        written(path, solver)
    monkeypatch.setattr(rundir, "save_weights", save_and_get_a_signal)
    with pytest.raises(Stopped) as stop:
        api.run(["solver=bcfw", "data=ocr", "+data.subset=0.05", "solver.passes=2"],
                tmp_path / "run")
    assert stop.value.status == 143
    assert read_log(tmp_path / "run" / "run.h5")[1]["status"] == "finished"
    assert (tmp_path / "run" / "weights.npz").exists()


def test_a_run_whose_directory_was_taken_over_stops_without_writing(data_root, tmp_path):
    """Issue 29: a run paused (SIGSTOP) until its lock looked stale was taken over by a second
    run; woken up, it went on writing into that run's directory. Now it checks the lock
    before every write and stops with one line."""
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([EXE, "run", *LONG_RUN, f"hydra.run.dir={run_dir}"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    wait_for_rows(run_dir, 4)
    proc.send_signal(signal.SIGSTOP)
    other = {"host": "elsewhere", "pid": 1, "started": "2026-01-01T00:00:00",
             "slurm_job": "", "config": "x"}
    (run_dir / "run.lock").write_text(json.dumps(other))       # what a takeover leaves
    (run_dir / "run.h5").rename(run_dir / "run.h5.running-aside")
    state = (run_dir / "state.pkl").stat().st_mtime_ns
    rows = read_log(run_dir / "run.h5.running-aside")[1]["n_rows"]
    proc.send_signal(signal.SIGCONT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert stderr.strip().splitlines()[-1].startswith("ssvmbench run: stopped: ")
    assert "was taken over by pid 1 on elsewhere" in stderr
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "app.log", "run.h5.running-aside", "run.lock", "state.pkl"]
    assert (run_dir / "state.pkl").stat().st_mtime_ns == state
    trace, aside = read_log(run_dir / "run.h5.running-aside")
    # an append the SIGSTOP caught half done (begun before the takeover) completes; no
    # other row is written
    assert rows <= aside["n_rows"] <= rows + trace["iterate"].nunique()
    assert aside["status"] == "running"
    assert json.loads((run_dir / "run.lock").read_text()) == other


def test_a_state_save_a_pause_caught_halfway_is_dropped_once_the_directory_is_taken(tmp_path):
    """The takeover above, with the pause landing inside a state save (the save follows a
    checkpoint's rows at once, so a pause on seeing the rows often does): the save checks
    that the directory is still the run's just before its new file replaces the old, so it
    leaves the old state and no temporary file; it raised LostOwnership only after
    replacing it before."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with RunDirectory(run_dir, "config") as here:
        here.save_state(A_SOLVER, {"solver_s": 1.0})
        old = here.state_path.read_bytes()
        other = {"host": "elsewhere", "pid": 1, "started": "2026-01-01T00:00:00",
                 "slurm_job": "", "config": "x"}
        (run_dir / "run.lock").write_text(json.dumps(other))       # what a takeover leaves
        with pytest.raises(LostOwnership):
            here.save_state(A_SOLVER, {"solver_s": 2.0})
        assert here.state_path.read_bytes() == old
        assert sorted(p.name for p in run_dir.iterdir()) == ["run.lock", "state.pkl"]


class _State:
    """A solver as ``save_state`` sees it."""

    @staticmethod
    def state_dict():
        return {"w": np.arange(3.0)}


A_SOLVER = _State()


def test_a_read_only_disk_is_one_line(data_root, tmp_path):
    """Issue 29: continuing an interrupted run on a disk now read-only was a traceback from
    Hydra's logging set-up."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"needs root to mount a tmpfs: {mounted.stderr.strip()}")
    try:
        (disk / "run").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        result = ssvmbench("run", "solver=bcfw", "data=ocr", f"hydra.run.dir={disk / 'run'}",
                           cwd=tmp_path, check=False)
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (f"ssvmbench run: error: Read-only file system: "
                                     f"{disk / 'run'} (the file system is read-only; choose "
                                     "another directory)")


def test_a_stop_during_the_first_compile_is_acknowledged_and_a_second_one_ends_it(
        data_root, tmp_path):
    """Issue 29: Ctrl-C while numba compiled the kernels (empty cache) acted only after the
    compile (46-235 s) and a second Ctrl-C was ignored. Now the first is acknowledged at once
    and the second ends the process at once."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")}
    proc = subprocess.Popen([EXE, "run", "solver=online_eg", "data=ocr",
                             f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (tmp_path / "run" / "app.log").exists():
        time.sleep(0.2)
    time.sleep(3)                                              # compiling by now
    proc.send_signal(signal.SIGINT)
    first = time.time()
    assert proc.stderr.readline().startswith("compiling kernels (first run only, ~")
    line = proc.stderr.readline()
    assert "SIGINT: stopping once the kernels are compiled (~" in line and "s so far)" in line
    assert time.time() - first < 10
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == -signal.SIGINT


def test_a_second_signal_ends_a_run_stuck_in_compiled_code(tmp_path):
    """Issue 29: a plugin's compiled step that never returns kept Python's signal handler
    from running, so no Ctrl-C stopped it; the handlers are one-shot at the C level, so the
    second one ends the process."""
    script = tmp_path / "stuck.py"
    script.write_text(
        "import numba\nfrom ssvmbench.run.stop_signals import StopSignals\n\n\n@numba.njit\n"
        "def forever(x):\n    while x >= 0:\n        x = (x * 7 + 1) % 1000003\n    return x\n\n\n"
        "forever(-1)\nwith StopSignals():\n    print('ready', flush=True)\n    forever(5)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    time.sleep(1)
    assert proc.poll() is None                   # the first waits for the step to end
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == -signal.SIGINT


def test_a_run_stopped_as_it_reaches_a_checkpoint_logs_that_checkpoint_when_continued(
        data_root, tmp_path, monkeypatch):
    """A stop signal that arrives in the slice that reaches a checkpoint (one in eight, e.g.
    SLURM's time-limit warning) saved the state there without the checkpoint's row, and the
    continued run skipped it: the row was lost for good."""
    from ssvmbench.run import runner
    from ssvmbench.solvers.base import Solver

    args = ["solver=bcfw", "data=ocr", "+data.subset=0.1", "solver.passes=4"]
    original, sent = Solver.run_until, []

    def stop_at_pass_two(self, calls):
        original(self, calls)
        if self.task.n > 100 and self.oracle_calls == 2 * self.task.n and not sent:
            sent.append(os.kill(os.getpid(), signal.SIGTERM))
    monkeypatch.setattr(Solver, "run_until", stop_at_pass_two)
    (tmp_path / "stopped").mkdir()
    with pytest.raises(Interrupted):
        runner.run(api.config(args), tmp_path / "stopped")
    assert sent
    monkeypatch.setattr(Solver, "run_until", original)
    resumed, _ = api.run(args, tmp_path / "stopped")
    whole, _ = api.run(args, tmp_path / "whole")
    columns = [c for c in whole if c not in ("time_s", "eval_time_s")]
    pd.testing.assert_frame_equal(resumed[columns], whole[columns])
