"""ssvmbench: reproduce and extend structural-SVM optimizer benchmarks."""

import os
import signal
import sys


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


# the command line answers Ctrl-C and SIGTERM in one line from its first import on, not with
# a KeyboardInterrupt traceback; any other import changes no handler
if _is_command_line():
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, _stopped_while_starting)

import contextlib  # noqa: E402

from ssvmbench.paths import kernel_cache, prune_kernel_caches  # noqa: E402

__version__ = "0.1.0"    # the one place of the version: pyproject.toml reads it (hatch)

# numba's compiled kernels go to the per-user cache, in a folder per version of the sources
# (paths.kernel_cache), not beside the installed sources, so that reinstalling the same
# sources (the README's test command does) keeps them; other versions' folders unused for two
# weeks are deleted. NUMBA_CACHE_DIR, if set, wins; a cache folder that cannot be made leaves
# numba's default. numba reads its settings when it is imported: if a script imported it
# first, they are read again, or numba would keep serving kernels cached beside the sources,
# compiled with older versions of the kernels they call.
if "NUMBA_CACHE_DIR" not in os.environ:
    with contextlib.suppress(OSError):
        kernel_cache().mkdir(parents=True, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = str(kernel_cache())
        if "numba" in sys.modules:
            from numba.core import config
            config.reload_config()
        prune_kernel_caches()

from ssvmbench import cache_lock  # noqa: E402  (after NUMBA_CACHE_DIR: it imports numba)

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
