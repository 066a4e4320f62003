"""ssvmbench: reproduce and extend structural-SVM optimizer benchmarks."""

import os
import signal
import sys

UNSUPPORTED = ("ssvmbench runs on Linux and macOS (it needs POSIX signals and file locks); "
               "on Windows, run it inside WSL")


def _stopped_while_starting(signum, frame):
    """A stop signal while the command line starts (imports the package, numba, Hydra, ...):
    nothing is written yet, so one line and 128 + the signal, at once. ``cli.main`` takes
    over with its own handling once it runs."""
    os.write(2, f"ssvmbench: interrupted ({signal.Signals(signum).name}) while starting; "
                "nothing was written\n".encode())
    os._exit(128 + signum)


def _is_command_line():
    """Whether this process is the command line (the ``ssvmbench`` script, ``python -m
    ssvmbench``), not Python importing the package, nor a batch's worker (multiprocessing
    gives a spawned worker its parent's ``sys.argv``; the batch sets its signals)."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.current_process().name != "MainProcess":
        return False
    return os.path.basename(sys.argv[0]) == "ssvmbench" or sys.argv[:1] == ["-m"]


if os.name != "posix":                # one line, on the command line as from Python
    if _is_command_line():
        sys.exit(f"ssvmbench: error: {UNSUPPORTED}")
    raise ImportError(UNSUPPORTED)

# the command line answers Ctrl-C and SIGTERM in one line from its first import on, not with
# a KeyboardInterrupt traceback; any other import changes no handler
if _is_command_line():
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, _stopped_while_starting)

__version__ = "0.1.0"    # the one place of the version: pyproject.toml reads it (hatch)

# ssvmbench's compiled kernels are cached in the per-user folder of this version of the
# sources, under a lock across processes; a user's own kernels and numba settings are left
# alone (kernel_home, cache_lock). Old versions' folders are pruned by the commands that run.
from ssvmbench import cache_lock, kernel_home  # noqa: E402

kernel_home.install()
cache_lock.install()


def __getattr__(name):
    """``ssvmbench.ChainSSVM``, ``ssvmbench.load_xy`` and ``ssvmbench.load_logs`` (imported
    on first use, so the command line stays light)."""
    if name == "ChainSSVM":
        from ssvmbench.estimator import ChainSSVM
        return ChainSSVM
    if name == "load_xy":
        from ssvmbench.data.xy import load_xy
        return load_xy
    if name == "load_logs":
        from ssvmbench.results import load_logs
        return load_logs
    raise AttributeError(f"module 'ssvmbench' has no attribute {name!r}")
