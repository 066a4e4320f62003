"""A batch on this machine: a pool of worker processes, each taking the next run (longest
expected first) until none is left.

Stopping is the point of this module. A first Ctrl-C or SIGTERM to the submitting process
stops every worker's run at its next step boundary (its state saved, its log
``interrupted``), lets no new run start, prints each run's line and the table, and exits with
128 + the signal; a second one kills the workers at once (each continues from its last saved
checkpoint). Workers end with their parent even if it is killed (``PR_SET_PDEATHSIG``), so no
orphan writes logs behind a re-run. The same command continues every stopped run.
"""

import ctypes
import multiprocessing
import os
import queue
import signal
import sys

from ssvmbench import batch
from ssvmbench.errors import UserError
from ssvmbench.messages import say
from ssvmbench.monitor import evaluation_threads

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
    (:meth:`ssvmbench.batch.Report.summary`)."""
    jobs = batch.longest_first(jobs)
    workers = max(1, min(workers, len(jobs)))
    report = batch.Report(jobs, f"on {workers} local worker{'s' * (workers > 1)} "
                                "(Ctrl-C stops them all; the same command continues)")
    if not jobs:
        return report.summary()
    context = multiprocessing.get_context("spawn")
    todo, done, stop = context.Value("i", 0), context.Queue(), context.Event()
    threads = evaluation_threads(workers)
    pool = [context.Process(target=_work, args=(jobs, todo, done, stop, threads),
                            name=f"ssvmbench-worker-{k}") for k in range(workers)]
    stopped = []

    def on_signal(signum, frame):
        if stopped:                      # the second signal: no more waiting
            for process in pool:
                if process.is_alive():
                    process.kill()
            say("ssvmbench: stopped at once; each stopped run continues from its last saved "
                "checkpoint when the same command runs again", error=True, log=False)
            os._exit(128 + stopped[0])
        stopped.append(signum)
        stop.set()
        say(f"ssvmbench: {signal.Signals(signum).name}: stopping every run at its next step "
            "(its state is saved); again to stop at once", error=True, log=False)
        for process in pool:
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for process in pool:
            process.start()
        _collect(report, done, pool)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return report.summary(stopped[0] if stopped else None)


def _collect(report, done, pool):
    """Report each run as its worker says it ended, until every worker has exited; a run
    whose worker died without a word is reported from its log."""
    running = {}                                   # worker pid -> index of its run
    while True:
        try:
            event, pid, index, code = done.get(timeout=POLL_S)
        except queue.Empty:
            if not any(process.is_alive() for process in pool):
                break
            for process in pool:
                if not process.is_alive() and process.pid in running:
                    report.ended(running.pop(process.pid), process.exitcode)
            continue
        if event == "start":
            running[pid] = index
        else:
            running.pop(pid, None)
            report.ended(index, code)
    while True:                                    # what was said just before the end
        try:
            event, pid, index, code = done.get_nowait()
        except queue.Empty:
            break
        running.pop(pid, None)
        if event == "end":
            report.ended(index, code)
    for pid, index in running.items():
        report.ended(index, None)


def _die_with_parent():
    """Linux: this process gets SIGTERM when its parent dies (so it saves and stops)."""
    if sys.platform.startswith("linux"):
        with_errno = ctypes.CDLL(None, use_errno=True)
        with_errno.prctl(1, signal.SIGTERM)        # PR_SET_PDEATHSIG
        if os.getppid() == 1:                      # the parent died before this call
            os.kill(os.getpid(), signal.SIGTERM)


def _work(jobs, todo, done, stop, threads):
    """A worker: take the next run (``todo``: the index of the next one to start) until none
    is left or the batch stops. Its messages go to each run's ``app.log``, none to the
    terminal (the batch prints one line per run)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C: the parent stops the batch
    _die_with_parent()
    sys.stdout = sys.stderr = open(os.devnull, "w")
    while not stop.is_set():
        with todo.get_lock():
            index = todo.value
            todo.value += 1
        if index >= len(jobs):
            return
        done.put(("start", os.getpid(), index, None))
        code = batch.execute(jobs[index], threads)
        done.put(("end", os.getpid(), index, code))
        if code > 128:
            return
