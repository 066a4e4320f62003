"""Console entry point: ``ssvmbench run | plot | results | status | data | bench | reproduce |
report | check-solver``, and ``ssvmbench --version``.

``run`` hands the rest of the command line to the Hydra app (so ``-m`` sweeps and
every Hydra option work); the other subcommands use argparse, each in the module of its
layer (``configure_parser`` and ``main``: :func:`command_parser` names them), and the two
that draw on several layers live beside this one: ``plot`` (:mod:`ssvmbench.cli.plot`) and
``data`` (:mod:`ssvmbench.cli.data`). A door, with ``ssvmbench.api``: may import every
layer.
"""

import argparse
import contextlib
import dataclasses
import os
import signal
import sys
import tempfile
import threading
import warnings
from pathlib import Path

from ssvmbench.common.errors import UserError, describe_os_error, read_yaml
from ssvmbench.common.paths import prune_kernel_caches

USAGE = """ssvmbench <command> [options]   (ssvmbench --version: the installed version)

commands:
  run        train one structural SVM, or sweep with -m (a Hydra app: `ssvmbench run --help`)
             e.g. ssvmbench run solver=bcfw data=ocr lambda=0.01
  plot       figures and summary tables from the run logs under a directory
  results    one row per run under a directory: the settings that vary, status, passes,
             final primal, gap, test metrics, time (--csv / --parquet to export)
             e.g. ssvmbench results results/sweeps/2026-01-01/12-00-00-000000
  status     where a sweep or reproduction stands: runs finished / running / pending /
             failed ..., the time left, the failed runs' reasons (--json for scripts)
             e.g. ssvmbench status results/sweeps/2026-01-01/12-00-00-000000
  data       list, fetch or verify datasets
  bench      seconds per pass, oracle calls per second and peak memory of a solver
  reproduce  the sweeps and plots of a paper's figure or table (configs/experiment/)
             e.g. ssvmbench reproduce bcfw_figure2_ocr --size smoke
  report     report.md: per preset the paper's claim, our figures and the claim's checks
  check-solver  does a solver (built-in or plugin) keep the solver contract? tiny instances
             e.g. ssvmbench check-solver bcfw; a task's kernels: check-solver --task NAME
"""


# the commands that compile kernels: they delete other versions' unused kernel caches
COMPILING_COMMANDS = ("run", "bench", "reproduce", "check-solver")


def _one_line(message, category, *args, **kwargs):
    """Warnings on the command line: one line, without the source line that raised them."""
    return f"ssvmbench: warning: {message}\n"


class Terminated(KeyboardInterrupt):
    """SIGTERM outside a run's own handling: a command stops as on Ctrl-C (its files written
    whole or not at all), with status 128 + 15."""

    signum = signal.SIGTERM


def _interrupt(signum, frame):
    """Ctrl-C or SIGTERM during a command: KeyboardInterrupt (:class:`Terminated`), but not
    inside a callback from compiled code (llvmlite's, while numba compiles), which would
    print it and drop it: there the signal comes again a moment later."""
    if _in_compiled_callback(frame):
        threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()
        return
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _in_compiled_callback(frame):
    """Whether ``frame`` runs inside llvmlite (called from LLVM through ctypes)."""
    while frame is not None:
        if "llvmlite" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def main(argv=None):
    """``ssvmbench COMMAND ...``: the command's exit status; bad input, a file-system error
    and a stop (Ctrl-C, SIGTERM) are one line each, never a traceback."""
    handlers = {signal.SIGINT: _interrupt, signal.SIGTERM: _interrupt}
    if threading.current_thread() is not threading.main_thread():
        handlers = {}
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    finally:
        for sig, handler in previous.items():
            # the command line's command is done: a stop while the interpreter exits (which
            # sets Python-level handlers back to the default, death by the signal) is ignored
            signal.signal(sig, signal.SIG_IGN if argv is None else handler)


def _main(argv):
    command = argv[0] if argv else ""
    try:
        warnings.formatwarning = _one_line
        if not argv or argv[0] in ("-h", "--help"):
            print(USAGE)
            return 0
        if argv[0] in ("-V", "--version"):
            from ssvmbench import __version__
            print(f"ssvmbench {__version__}")
            return 0
        rest = argv[1:]
        if command in COMPILING_COMMANDS:
            with contextlib.suppress(OSError):   # an unwritable cache is no reason to stop
                prune_kernel_caches()
        if command == "run":
            return _run(rest)
        if command in ("plot", "results", "status", "data", "bench", "reproduce", "report",
                       "check-solver"):
            return _argparse_command(command, rest)
    except UserError as err:
        print(f"ssvmbench {command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        print(interrupted(command, err), file=sys.stderr)
        return 128 + getattr(err, "signum", signal.SIGINT)
    except BrokenPipeError:           # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as err:
        print(f"ssvmbench {command}: error: {describe_os_error(err)}", file=sys.stderr)
        return 1
    print(f"ssvmbench: unknown command '{command}'\n\n{USAGE}", file=sys.stderr)
    return 2


def interrupted(command, err):
    """The one line of a command stopped by Ctrl-C or SIGTERM (``err``), naming the file
    it was writing, if any, and that its previous version is intact."""
    name = " (SIGTERM)" if isinstance(err, Terminated) else ""
    where = getattr(err, "not_written", "")
    return f"ssvmbench {command}: interrupted{name}{' ' + where if where else ''}"


def command_parser(command):
    """The argparse parser of ``ssvmbench COMMAND`` (any command but ``run``) and the module
    whose ``main(args)`` carries it out; the reference docs are generated from these."""
    if command == "plot":
        from ssvmbench.cli import plot as module
        description = "Plot every run log found under the DIRs (BCFW Figures 1-3 style)."
    elif command == "results":
        from ssvmbench.batch import results as module
        description = ("One row per run found under the DIRs: the settings that vary across "
                       "the runs (those every run shares above the table), status, passes, "
                       "and the last checkpoint's primal, duality gap, test metrics and "
                       "solver seconds.")
    elif command == "status":
        from ssvmbench.batch import status as module
        description = ("Where the runs under DIR stand (a sweep folder, a reproduction's "
                       "--out folder, any folder of run folders), from their files alone: "
                       "runs finished, running, pending, requeued, held, failed, "
                       "interrupted, skipped; the time left from the passes measured so "
                       "far; the failed runs' reasons; the report once written.")
    elif command == "data":
        from ssvmbench.cli import data as module
        description = "List, fetch or verify the datasets."
    elif command == "bench":
        from ssvmbench.plugin_kit import bench as module
        description = "Benchmark a solver: seconds per pass, oracle calls/s, peak memory."
    elif command == "check-solver":
        from ssvmbench.plugin_kit import conformance as module
        description = ("Check a solver's contract on tiny generated instances of every task "
                       "it declares: oracle-call accounting, iterates, weak duality, "
                       "progress, determinism; with --task, that task's kernels against "
                       "brute force (ssvmbench.plugin_kit.testing).")
    elif command == "report":
        from ssvmbench.papers import report as module
        description = ("Write DIR/report.md: the papers' claims next to our figures, with "
                       "automatic checks of the claims.")
    else:
        from ssvmbench.papers import reproduce as module
        description = ("Run the sweeps of paper presets (configs/experiment/) and plot them, "
                       "optionally with your own methods beside the papers' (--with); "
                       "re-running continues where it stopped.")
    parser = argparse.ArgumentParser(prog=f"ssvmbench {command}", description=description)
    module.configure_parser(parser)
    return parser, module


def _argparse_command(command, rest):
    parser, module = command_parser(command)
    # bench and check-solver take options among their overrides (`--passes 5 solver=...`);
    # argparse cannot intermix with sub-commands (`data`) or optional lists (`--overrides`)
    intermixed = command in ("bench", "check-solver")
    args = parser.parse_intermixed_args(rest) if intermixed else parser.parse_args(rest)
    return module.main(args) or 0


def _check_output_dirs(rest):
    """Create the run or sweep directory named on the command line (``hydra.run.dir=``,
    ``hydra.sweep.dir=``; else ``results/``, the defaults' parent) now and check that it
    takes a file, so that a file in the way, a read-only disk or a missing permission ends
    in one line, not in Hydra's report."""
    if any(arg.startswith(("-h", "--help", "--hydra-help", "--cfg", "-c", "--info"))
           for arg in rest):
        return
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    given = []
    for arg in rest:
        if arg.startswith(("hydra.run.dir=", "hydra.sweep.dir=")):
            try:      # the value as Hydra reads it: 'hydra.run.dir="a b"' is the folder a b
                given.append(str(OverridesParser.create().parse_override(arg).value()))
            except HydraException:
                return                        # Hydra says what is wrong with it
    for directory in given or ["results"]:
        if "${" not in directory:
            Path(directory).mkdir(parents=True, exist_ok=True)
            try:                                   # writable? (Hydra writes app.log there)
                tempfile.TemporaryFile(dir=directory).close()
            except OSError as err:
                raise OSError(err.errno, err.strerror, directory) from None


def _check_config_dirs(rest):
    """Parse every YAML file of the config directories named on the command line
    (``--config-dir DIR``, ``-cd DIR``), so that a broken one is one line naming its line and
    column, not the YAML parser's traceback from inside Hydra."""
    dirs = [value for flag, value in zip(rest, rest[1:]) if flag in ("--config-dir", "-cd")]
    dirs += [arg.split("=", 1)[1] for arg in rest if arg.startswith("--config-dir=")]
    for directory in dirs:
        for path in sorted(Path(directory).rglob("*.yaml")):
            read_yaml(path)


# options of `ssvmbench run` after which no run starts, or under which the run's config is
# another one than the package's (its keys cannot be checked here)
NOT_A_RUN = ("-h", "--help", "--hydra-help", "--cfg", "-c", "--info", "-i", "--config-name",
             "-cn", "--config-path", "-cp", "--experimental-rerun", "--shell-completion", "-sc")


def _check_runs(rest):
    """Compose and check the run (or, with ``-m``, one run per value of each override,
    :func:`~ssvmbench.batch.jobs.check_jobs`) of the command line before Hydra makes any folder,
    so that a typo is one line (``solver.pases``: did you mean ``solver.passes``?) and leaves
    no run folder behind."""
    if any(arg.startswith(NOT_A_RUN) for arg in rest):
        return
    from ssvmbench.batch.jobs import Job, check_jobs, is_hydra_override, sweep_jobs

    dirs = [value for flag, value in zip(rest, rest[1:]) if flag in ("--config-dir", "-cd")]
    dirs += [arg.split("=", 1)[1] for arg in rest if arg.startswith("--config-dir=")]
    sources = tuple(f"file://{Path(directory).resolve()}" for directory in dirs)
    words = [arg for arg in rest if "=" in arg and not arg.startswith("-")
             and not is_hydra_override(arg) and arg not in dirs]
    if "-m" in rest or "--multirun" in rest:
        jobs = sweep_jobs(words, "")
    else:
        jobs = [Job(tuple(words), Path())]
    check_jobs([dataclasses.replace(job, search_path=sources) for job in jobs])


def _run(rest):
    from ssvmbench.run import app, compose

    _check_config_dirs(rest)
    _check_runs(rest)
    _check_output_dirs(rest)
    sys.argv = ["ssvmbench run"] + rest
    compose.store_plugin_configs()
    app.main()
    return 0

