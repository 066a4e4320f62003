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

# The public surface: every module a plugin, a script or a notebook may import, and where it
# lives. These paths are kept whatever moves inside the package (docs/development.md, "The
# floor plan"); a public path whose module sits in a layer folder is answered by
# ssvmbench.common.moved, so ``from ssvmbench.errors import UserError`` gets the module of
# ssvmbench/common/errors.py itself. tests/test_public_surface.py imports every name the
# documentation uses from them.
PUBLIC = {
    "ssvmbench.api": "ssvmbench.api",                           # run, sweep, config
    "ssvmbench.errors": "ssvmbench.common.errors",              # UserError, ...
    "ssvmbench.estimator": "ssvmbench.estimators.estimator",    # ChainSSVM, SSVMEstimator
    "ssvmbench.sklearn_support": "ssvmbench.estimators.sklearn_support",
    "ssvmbench.results": "ssvmbench.batch.results",             # load_logs, table
    "ssvmbench.runlog": "ssvmbench.run.runlog",                 # read_log
    "ssvmbench.metrics": "ssvmbench.tasks.metrics",             # Metric (plugins' metrics)
    "ssvmbench.testing": "ssvmbench.plugin_kit.testing",        # check_task, task_checks
    "ssvmbench.inner": "ssvmbench.common.inner",                # inner (kernels' helpers)
    "ssvmbench.solvers": "ssvmbench.solvers",                   # the solver registry
    "ssvmbench.solvers.base": "ssvmbench.solvers.base",         # Solver, Problem
    "ssvmbench.solvers.bcfw": "ssvmbench.solvers.bcfw",         # BCFW, for a solver extending it
    "ssvmbench.tasks": "ssvmbench.tasks",                       # the task registry
    "ssvmbench.tasks.base": "ssvmbench.tasks.base",             # Task, Scratch, kernels_named
    "ssvmbench.tasks.oracles": "ssvmbench.tasks.oracle",        # Oracle
    "ssvmbench.tasks.kernels": "ssvmbench.tasks.kernels",       # the kernels' signatures
    "ssvmbench.tasks.parts": "ssvmbench.tasks.parts",           # in_parts, means
    "ssvmbench.tasks.chain": "ssvmbench.tasks.chain",           # gather_add, scatter_add
    "ssvmbench.tasks.smoothing": "ssvmbench.tasks.smoothing",
    "ssvmbench.data": "ssvmbench.data",                         # load_split, the registry
    "ssvmbench.data.sequences": "ssvmbench.data.sequences",     # SplitData, ChainDataset
    "ssvmbench.data.xy": "ssvmbench.data.xy",                   # load_xy
    "ssvmbench.data.ocr": "ssvmbench.data.ocr",                 # the OCR letters, as read
}
__all__ = ["ChainSSVM", "load_xy", "load_logs", "api", "PUBLIC", "__version__"]

from ssvmbench.common import moved  # noqa: E402

moved.install({name: home for name, home in PUBLIC.items() if name != home}, sys.meta_path)

# ssvmbench's compiled kernels are cached in the per-user folder of this version of the
# sources, under a lock across processes; a user's own kernels and numba settings are left
# alone (kernel_home, cache_lock). Old versions' folders are pruned by the commands that run.
from ssvmbench.compiled import cache_lock, kernel_home  # noqa: E402

kernel_home.install()
cache_lock.install()


def __getattr__(name):
    """``ssvmbench.ChainSSVM``, ``ssvmbench.load_xy``, ``ssvmbench.load_logs`` and
    ``ssvmbench.api`` (imported on first use, so the command line stays light)."""
    if name == "api":
        import importlib
        return importlib.import_module("ssvmbench.api")
    if name == "ChainSSVM":
        from ssvmbench.estimators.estimator import ChainSSVM
        return ChainSSVM
    if name == "load_xy":
        from ssvmbench.data.xy import load_xy
        return load_xy
    if name == "load_logs":
        from ssvmbench.batch.results import load_logs
        return load_logs
    raise AttributeError(f"module 'ssvmbench' has no attribute {name!r}")
