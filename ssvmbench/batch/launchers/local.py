"""A batch on this machine: a pool of worker processes, each taking the next run (longest
expected first) until none is left.

Stopping is the point of this module. A first Ctrl-C or SIGTERM to the submitting process
stops every worker's run at its next step boundary (its state saved, its log
``interrupted``), lets no new run start, prints each run's line and the table, and exits with
128 + the signal; a second one kills the workers at once (each continues from its last saved
checkpoint). Workers end with their parent even if it is killed (``PR_SET_PDEATHSIG``), so no
orphan writes logs behind a re-run. The same command continues every stopped run.

Workers are started with ``spawn`` (no fork of a process holding numba's threads), and they
never run the caller's script again: multiprocessing would import a script's ``__main__`` in
every worker, so that ``api.sweep`` called from a plain script (no ``if __name__ ==
"__main__":``) would start the sweep again in each worker and stop on multiprocessing's
bootstrapping error. Nothing of ``__main__`` is needed there (a worker runs
:func:`_work` of this module on plain job records; plugins come through entry points).
"""

import contextlib
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import types

from ssvmbench.batch import jobs as batch
from ssvmbench.common.errors import UserError
from ssvmbench.run.job import execute
from ssvmbench.run.monitor import evaluation_threads

POLL_S = 0.2


def worker_count(n_jobs):
    """Workers for ``n_jobs`` as joblib reads it: a positive count, or -1 one per core, -2 all
    cores but one, …"""
    if not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise UserError(f"hydra.launcher.n_jobs={n_jobs} must be a whole number, not 0 "
                        "(-1: one worker per core)")
    return n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)


def run_local(jobs, workers=1):
    """Run ``jobs`` on ``workers`` processes; returns the batch's exit status
    (:meth:`ssvmbench.batch.jobs.Report.summary`)."""
    jobs = batch.longest_first(jobs)
    workers = max(1, min(workers, len(jobs)))
    report = batch.Report(jobs, f"on {workers} local worker{'s' * (workers > 1)} "
                                "(Ctrl-C stops them all; the same command continues)")
    if not jobs:
        return report.summary()
    context = multiprocessing.get_context("spawn")
    todo, done, stop = context.Value("i", 0), context.Queue(), context.Event()
    threads = evaluation_threads(workers)
    pool = [context.Process(target=_work, args=(jobs, todo, done, stop, threads, os.getpid()),
                            name=f"ssvmbench-worker-{k}") for k in range(workers)]
    stopped = []

    def on_signal(signum, frame):        # os.write: the main thread may be printing
        if stopped:                      # the second signal: no more waiting
            for process in pool:
                if process.is_alive():
                    process.kill()
            os.write(2, b"ssvmbench: stopped at once; each stopped run continues from its "
                        b"last saved checkpoint when the same command runs again\n")
            os._exit(128 + stopped[0])
        stopped.append(signum)
        stop.set()
        os.write(2, f"ssvmbench: {signal.Signals(signum).name}: stopping every run at its "
                    "next step (its state is saved); again to stop at once\n".encode())
        for process in pool:
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    # the workers start with SIGINT ignored (inherited), so a Ctrl-C while they import is
    # no traceback of theirs; the batch's own handler is installed once they run
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    try:
        with _main_not_rerun():
            for process in pool:
                process.start()
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        _collect(report, done, pool)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return report.summary(stopped[0] if stopped else None)


@contextlib.contextmanager
def _main_not_rerun():
    """While workers start: ``__main__`` as an empty module, so that multiprocessing tells
    them no script or module to import as their ``__main__`` (it reads ``__main__``'s
    ``__spec__`` and ``__file__`` when each process starts, in this process)."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _collect(report, done, pool):
    """Report each run as its worker says it ended, until every worker has exited; a run
    whose worker died without a word is reported from its log and the worker's exit code."""
    running = {}                                   # worker pid -> index of its run

    def take(event, pid, index, code):
        if event == "start":
            running[pid] = index
        else:
            running.pop(pid, None)
            report.ended(index, code)

    while any(process.is_alive() for process in pool):
        with contextlib.suppress(queue.Empty):
            take(*done.get(timeout=POLL_S))
    while True:                                    # what the workers said before they ended
        try:
            take(*done.get(timeout=POLL_S))
        except queue.Empty:
            break
    exit_codes = {process.pid: process.exitcode for process in pool}
    for pid, index in running.items():             # died in the middle of a run
        report.ended(index, exit_codes.get(pid))


def _die_with_parent(parent):
    """Linux: this process gets SIGTERM when its parent (pid ``parent``) dies (so it saves
    and stops)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)     # PR_SET_PDEATHSIG
        if os.getppid() != parent:                 # the parent died before this call
            os.kill(os.getpid(), signal.SIGTERM)


def _work(jobs, todo, done, stop, threads, parent):
    """A worker: take the next run (``todo``: the index of the next one to start) until none
    is left or the batch stops. Its messages go to each run's ``app.log``, none to the
    terminal (the batch prints one line per run)."""
    from ssvmbench.run.stop_signals import StopSignals

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C: the parent stops the batch
    StopSignals.one_shot = False                   # (and kills this worker on a second one)
    _die_with_parent(parent)
    quiet = os.open(os.devnull, os.O_WRONLY)       # a run's messages go to its app.log
    for fd in (1, 2):
        os.dup2(quiet, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    while not stop.is_set():
        with todo.get_lock():
            index = todo.value
            todo.value += 1
        if index >= len(jobs):
            return
        done.put(("start", os.getpid(), index, None))
        code = execute(jobs[index], threads)
        done.put(("end", os.getpid(), index, code))
        if code > 128:
            return
