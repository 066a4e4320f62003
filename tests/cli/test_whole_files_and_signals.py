"""Bad input, round four (issue 47): every file a command writes is written whole or not at
all, ``results`` says what is wrong, own arrays and the Python API refuse bad values in one
line, Ctrl-C at any moment is one line and 130, and continuing a run needs no more room
than the run."""

import os
import resource
import shutil
import signal
from pathlib import Path

import pytest
from helpers.logs import write_logs

from ssvmbench.cli import main

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "reproduction"


def _report(tmp_path):
    """``report`` of one committed preset (its figures and traces): the report's folder."""
    shutil.copytree(COMMITTED / "sap_figure1_ocr", tmp_path / "sap_figure1_ocr")
    return ["report", str(tmp_path)], tmp_path


def _plot(tmp_path):
    """``plot`` of test_plotting's tiny logs, with every optional output."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    out = tmp_path / "figures"
    return ["plot", str(tmp_path / "logs"), "-o", str(out), "--html", "--best-within", "2",
            "--y", "suboptimality", "test_metric"], out


def _results(tmp_path):
    """``results`` of the same logs, exported as CSV and Parquet over earlier exports."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    out = tmp_path / "tables"
    return ["results", str(tmp_path / "logs"), "--csv", str(out / "runs.csv"),
            "--parquet", str(out / "runs.parquet"), "--overwrite"], out


COMMANDS = {"report": _report, "plot": _plot, "results": _results}
# what each command writes into its output folder
OUTPUTS = {"report": ["report.md", "checks.csv", "report.html"],
           "plot": ["suboptimality.png", "suboptimality.pdf", "test_metric.png",
                    "test_metric.pdf", "provenance.csv", "summary.csv", "summary.md",
                    "best_within.md", "best_within.tex", "figures.html", "traces.parquet"],
           "results": ["runs.csv", "runs.parquet"]}
PREVIOUS = b"the previous version"


def _files(folder):
    """``{name: bytes}`` of the files directly in ``folder``."""
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


@pytest.fixture
def command_with_outputs(tmp_path):
    """``(args, out)`` of a command whose output folder holds a previous version
    (:data:`PREVIOUS`) of each file it writes."""
    def make(command):
        args, out = COMMANDS[command](tmp_path)
        out.mkdir(exist_ok=True)
        for name in OUTPUTS[command]:
            (out / name).write_bytes(PREVIOUS)
        return args, out
    return make


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_file_a_command_writes_is_renamed_into_place(command_with_outputs, monkeypatch,
                                                           command):
    """No file of report, plot or results is written in place: each one it writes (every
    file of its output folder) arrives by a rename of a complete temporary file."""
    args, out = command_with_outputs(command)
    replaced, real = [], os.replace

    def replace(src, dst, **kwargs):
        replaced.append(Path(dst).name)
        return real(src, dst, **kwargs)
    monkeypatch.setattr(os, "replace", replace)
    assert main(args) == 0
    after = _files(out)
    assert sorted(after) == sorted(OUTPUTS[command]) == sorted(replaced)
    assert all(data != PREVIOUS for data in after.values())


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_size_limit_leaves_the_previous_file_intact_in_one_line(command_with_outputs, capsys,
                                                                  command):
    """Issue 47: ``report`` under a file-size limit (as a full disk would) left the previous
    report.html truncated. Now the file it could not write is its previous version, the
    others whole new ones, no temporary file is left, and the command says so in one line
    (status 1)."""
    args, out = command_with_outputs(command)
    limit = 600                                  # bytes: less than a file of every command
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        status = main(args)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    error = capsys.readouterr().err.strip().splitlines()[-1]
    failed = error.partition("could not write ")[2].partition(" (")[0]
    assert status == 1 and error == (f"ssvmbench {command}: error: could not write {failed} "
                                     "(File too large); the previous version is intact")
    after = _files(out)
    assert Path(failed).parent == out and after.pop(Path(failed).name) == PREVIOUS
    assert sorted(after) == sorted(set(OUTPUTS[command]) - {Path(failed).name})
    assert all(data == PREVIOUS or len(data) <= limit for data in after.values())


@pytest.mark.parametrize("command, name, sig", [
    ("report", "report.html", signal.SIGTERM), ("report", "checks.csv", signal.SIGINT),
    ("plot", "suboptimality.png", signal.SIGINT), ("plot", "summary.md", signal.SIGTERM),
    ("plot", "traces.parquet", signal.SIGINT), ("results", "runs.parquet", signal.SIGTERM)])
def test_a_signal_while_a_file_is_written_leaves_it_intact(command_with_outputs, monkeypatch,
                                                           capsys, command, name, sig):
    """Ctrl-C or SIGTERM arriving while a command writes a file (its temporary copy whole,
    not yet in place): the previous version stays, no temporary file is left, one line
    names the file, status 128 + the signal."""
    args, out = command_with_outputs(command)
    real = os.replace

    def replace(src, dst, **kwargs):
        if Path(dst).name == name:
            os.kill(os.getpid(), sig)
        return real(src, dst, **kwargs)
    monkeypatch.setattr(os, "replace", replace)
    assert main(args) == 128 + sig
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ssvmbench {command}: interrupted{' (SIGTERM)' if sig == signal.SIGTERM else ''} "
        f"while writing {out / name}; the previous version is intact")
    after = _files(out)
    assert sorted(after) == sorted(OUTPUTS[command]) and after[name] == PREVIOUS


TINY = {"data": "ocr", "+data.subset": 0.05, "solver.passes": 1}


@pytest.mark.parametrize("settings, message", [
    ({"lambda": {"a": 1}}, "lambda={'a': 1} must be a finite positive number"),
    ({"seed": 1.5}, "seed=1.5 must be a whole number"),
    ({"solver.passes": [[1, 2]]}, r"solver.passes=\[1, 2\] must be a finite number"),
    ({"seed": {1, 2}}, r"seed=\{1, 2\}: a value of type set is not a setting's"),
    ({"solver": ["bcfw", None]}, "solver=null: no such solver"),
    ({"solver": 1}, "solver=1: no such solver"),
    (["lambda=[1"], r"lambda=\[1: not a setting Hydra reads \(no viable alternative"),
    ("solver=bcfw", "give a list of 'key=value' strings or a dict"),
])
def test_the_api_refuses_a_wrong_typed_value_in_one_line(tmp_path, settings, message):
    """Issue 47: ``api.sweep({"lambda": {"a": 1}, ...})`` leaked Hydra's multi-line parse
    error (a dict written as Python prints it); ``solver=1`` or a None among the values
    Hydra's ValueError. Now each is one UserError naming the setting, as on the command
    line, and nothing is written."""
    from ssvmbench import api
    from ssvmbench.common.errors import UserError
    words = {**TINY, **settings} if isinstance(settings, dict) else settings
    with pytest.raises(UserError, match=message) as refused:
        api.sweep(words, sweep_dir=tmp_path / "sweep")
    assert "\n" not in str(refused.value) and not (tmp_path / "sweep").exists()


@pytest.mark.parametrize("words", [["lambda=[1"], ["-m", "seed=0,(1"], ["solver=1"]])
def test_an_override_hydra_cannot_read_is_one_line_on_the_command_line(tmp_path, capsys,
                                                                       words):
    """``ssvmbench run 'lambda=[1'`` (or a group given a number) ended in a traceback."""
    assert main(["run", *words, f"hydra.run.dir={tmp_path / 'run'}",
                 f"hydra.sweep.dir={tmp_path / 'sweep'}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssvmbench run: error: ") and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())


CTRL_C_WHILE_NUMBA_IMPORTS = """
import os, signal, sys
sys.argv = [os.path.join(sys.prefix, "bin", "ssvmbench"), "results", "nowhere"]

class CtrlC:                          # Ctrl-C while the package imports numba
    def find_spec(self, name, path=None, target=None):
        if name == "numba":
            os.kill(os.getpid(), signal.SIGINT)

sys.meta_path.insert(0, CtrlC())
from ssvmbench.cli import main
sys.exit(main())
"""


def test_ctrl_c_while_the_command_imports_is_one_line_and_130():
    """Issue 47: Ctrl-C within the first second of any command (while the package and
    numba import) printed a KeyboardInterrupt traceback."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_NUMBA_IMPORTS],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        130, "ssvmbench: interrupted (SIGINT) while starting; nothing was written\n")


A_WORKER_IMPORTS = """
import multiprocessing, os, signal, sys
sys.argv = [os.path.join(sys.prefix, "bin", "ssvmbench"), "run", "-m"]   # its parent's
multiprocessing.current_process().name = "ssvmbench-worker-0"
signal.signal(signal.SIGINT, signal.SIG_IGN)                   # as the batch starts it
import ssvmbench
assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
"""


def test_a_batch_worker_keeps_the_signals_its_batch_gives_it():
    """Found while trying the above: a sweep's spawned worker has its parent's sys.argv,
    so it took the command line's starting handler and, stopped while importing, printed
    the command's line and replaced the SIGINT its batch ignores. Workers are left alone."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", A_WORKER_IMPORTS], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("delay", [0.15, 0.5])
def test_ctrl_c_early_in_a_real_command_is_one_line(tmp_path, delay):
    """The same on the real command line, at moments within its start (timing decides
    where it lands: importing, reading, or done already)."""
    import subprocess
    import sys
    import time
    process = subprocess.Popen([sys.executable, "-m", "ssvmbench", "results",
                                str(COMMITTED / "sap_figure1_ocr" / "traces.parquet")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    err = process.communicate(timeout=120)[1]
    assert "Traceback" not in err and len(err.splitlines()) <= 1
    assert process.returncode in (0, 130) and ("interrupted" in err) == (
        process.returncode == 130)


def test_a_signal_inside_a_compiled_callback_comes_again(monkeypatch):
    """check-solver stopped by Ctrl-C while numba compiled reported a failed check: the
    KeyboardInterrupt was raised inside llvmlite's ctypes callback, which printed and
    dropped it. There the command's handler now sends the signal again a moment later."""
    import sys
    import threading

    from ssvmbench import cli
    later = []
    monkeypatch.setattr(threading, "Timer", lambda delay, call, args: type(
        "Timer", (), {"start": lambda self: later.append((delay, call, args))})())
    inside = compile("cli._interrupt(signal.SIGINT, sys._getframe())",
                     "/site-packages/llvmlite/binding/executionengine.py", "exec")
    exec(inside, {"cli": cli, "signal": signal, "sys": sys})
    assert later == [(0.05, os.kill, (os.getpid(), signal.SIGINT))]
    with pytest.raises(KeyboardInterrupt):
        cli._interrupt(signal.SIGINT, sys._getframe())


def test_a_stop_during_a_cold_compile_says_how_long_the_compile_takes(monkeypatch):
    """Issue 47: the first Ctrl-C during a first compile is acknowledged at once but takes
    effect when the compile ends; the acknowledgement now says how long that is expected
    to take (the estimate the 'compiling kernels' line gave)."""
    from numba.core import event

    from ssvmbench.compiled import coldstart
    from ssvmbench.run import stop_signals
    monkeypatch.setattr(coldstart, "estimate", lambda solver_name: 23.0)
    assert stop_signals.acknowledgement().startswith("stopping at the next step")
    with coldstart.compile_notice("bcfw"):
        event.start_event("numba:compile")
        said = stop_signals.acknowledgement()
        event.end_event("numba:compile")
    assert said.startswith("stopping once the kernels are compiled (~23 s expected, 0 s so "
                           "far) with the state saved; the same command continues the run")
    assert coldstart.compiling() is None


def test_continuing_a_run_needs_no_more_room_than_the_run(data_root, tmp_path, monkeypatch):
    """Issue 47: after a full disk was freed, continuing a run needed 51 MiB where the run
    fits in 33: the new state was checked for its top-level arrays plus the whole margin on
    top of the previous state it replaces. Now the check counts every array of the state
    and credits the file it replaces (and the log's copy the one it replaces), so the
    continuation runs on a disk with the margin free and says how much is missing below."""
    from ssvmbench import api
    from ssvmbench.run import runlog
    from ssvmbench.run.runlog import Interrupted
    args = ["solver=bcfw", "data=ocr", "+data.subset=0.05", "solver.passes=4",
            "resume.every_s=0"]
    run_dir, real = tmp_path / "run", runlog.shutil.disk_usage
    calls = {"n": 0}

    def filling(path):                                 # full after a few checkpoints
        calls["n"] += 1
        return real(path)._replace(free=0) if calls["n"] > 6 else real(path)
    monkeypatch.setattr(runlog.shutil, "disk_usage", filling)
    with pytest.raises(Interrupted, match="is full"):
        api.run(args, run_dir)
    state = (run_dir / "state.pkl").read_bytes()
    used = sum(path.stat().st_size for path in run_dir.iterdir())

    def disk(capacity):                                # a disk holding only this run
        return lambda path: real(path)._replace(
            free=capacity - sum(p.stat().st_size for p in run_dir.iterdir() if p.is_file()))
    monkeypatch.setattr(runlog.shutil, "disk_usage", disk(used + runlog.FREE_MARGIN // 2))
    with pytest.raises(Interrupted, match=r"MiB free, 32.0 MiB needed: 16.0 MiB missing"):
        api.run(args, run_dir)
    assert (run_dir / "state.pkl").read_bytes() == state
    monkeypatch.setattr(runlog.shutil, "disk_usage", disk(used + runlog.FREE_MARGIN + 2**18))
    trace, attrs = api.run(args, run_dir)
    assert attrs["status"] == "finished" and attrs["resumed"] == 1
    assert trace["effective_pass"].max() == 4


def test_a_file_size_limit_stops_a_run_in_one_line_and_it_continues(data_root, tmp_path):
    """Found while trying issue 47's cases: a run under a file size limit (``ulimit -f``)
    crashed (SIGSEGV) after HDF5 tracebacks once its log reached the limit. Now each write
    first checks the limit: the run stops as interrupted in one line saying how much is
    missing, and the same command continues once the limit is raised."""
    import subprocess
    import sys

    from ssvmbench import api
    args = ["solver=bcfw", "data=ocr", "+data.subset=0.05", "solver.passes=2"]
    api.run(args, tmp_path / "warm")                  # its kernels cached: no compile below

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, resource.RLIM_INFINITY))
    done = subprocess.run([sys.executable, "-m", "ssvmbench", "run", *args,
                           f"hydra.run.dir={tmp_path / 'run'}"], preexec_fn=limited,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 130 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"ssvmbench run: interrupted: {tmp_path / 'run' / 'run.h5'} would pass the file size "
        "limit (ulimit -f) of 29 KiB (1.")
    _, attrs = api.run(args, tmp_path / "run")
    assert attrs["status"] == "finished"


def test_a_stop_while_the_command_line_exits_changes_nothing():
    """A Ctrl-C landing after the command finished, while the interpreter exits, killed the
    process by the signal (status -2, the test above at 0.5 s under load): Python sets
    its handlers back to the default there. The finished command now ignores it."""
    import subprocess
    import sys
    script = ("import atexit, os, signal, sys, time\n"
              "sys.argv = ['ssvmbench', '--version']\n"
              "from ssvmbench.cli import main\n"
              "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(0.3)))\n"
              "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("ssvmbench ")
