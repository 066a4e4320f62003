"""The line a run prints (to stderr, with the progress bars) when numba starts compiling its
kernels (issue 31): ``compiling kernels (first run only, ~N s)``, at numba's first compile
event (none fires when every kernel loads from the cache), with ``N`` the last cold warm-up
measured for that solver on this machine (kept across versions of the sources), or
:data:`TYPICAL_S` before any.

What is measured is the compile's CPU seconds, not its wall seconds: numba compiles on the
calling thread, so on an idle machine the two agree (within the file reads and writes, a few
percent), while on a loaded one the wall seconds stretch with the load (after a cold start
beside other jobs the line announced ~175 s for a warm-up of 20 s) and the CPU seconds do
not. So ``N`` is the machine's idle figure whatever the load of the run that measured it."""

import contextlib
import gc
import json
import os
import pickle
import resource
import subprocess
import sys
import threading
import time

import numba
from numba.core import event

from ssvmbench.common.files import write_text
from ssvmbench.common.messages import say
from ssvmbench.common.paths import user_cache

TYPICAL_S = 8       # warm-up of `ssvmbench run solver=bcfw data=ocr` on an empty cache, 2 cores
COLD_EVENTS = 20    # a block that compiled fewer functions did not start cold (not an estimate)


def _records():
    return user_cache() / "numba" / "cold_starts.json"


def _read():
    try:
        return json.loads(_records().read_text())
    except (OSError, ValueError):
        return {}


def estimate(solver_name):
    """Seconds the solver's last compiling warm-up takes here on an idle machine (its CPU
    seconds, :func:`compile_notice`; :data:`TYPICAL_S` if none)."""
    return _read().get(solver_name, TYPICAL_S)


def record(solver_name, seconds):
    """Keep ``seconds`` as the solver's next estimate (best effort: an unwritable cache
    folder keeps the old one)."""
    records = {**_read(), solver_name: round(seconds, 1)}
    with contextlib.suppress(OSError):
        write_text(_records(), json.dumps(records, indent=1, sort_keys=True))


_now_compiling = None     # (expected seconds, start) while a compile_notice block compiles


def compiling():
    """``(expected_s, elapsed_s)`` of the compile going on now (the estimate its notice
    gave, and the seconds since it began), or None when nothing compiles: what a stop
    signal's acknowledgement says, as the stop takes effect only once it is done."""
    if _now_compiling is None:
        return None
    expected_s, start = _now_compiling
    return expected_s, time.perf_counter() - start


class _FirstCompile(event.Listener):
    def __init__(self, solver_name, beside):
        self.solver_name, self.compiled = solver_name, 0
        self.beside, self.helper = beside, None

    def on_start(self, ev):
        global _now_compiling
        self.compiled += 1
        if self.compiled == 1:
            expected_s = estimate(self.solver_name)
            _now_compiling = (expected_s, time.perf_counter())
            say(f"compiling kernels (first run only, ~{expected_s:.0f} s)", progress=True)
            if self.beside is not None:
                self.helper = self.beside()

    def on_end(self, ev):
        """(numba's listener contract; only the starts count)"""

    def join(self):
        """Wait for the helper process (if one was started) to end, after a cold start (at
        least :data:`COLD_EVENTS` compiles here); after a kernel or two, stop it instead:
        what the checkpoint misses, if anything, compiles here sooner than the helper
        starts and loads the rest."""
        if self.helper is not None:
            if self.compiled < COLD_EVENTS:
                self.helper.kill()
            self.helper.wait()


@contextlib.contextmanager
def compile_notice(solver_name, beside=None):
    """Within it, numba's first compile says so in one line (and :func:`compiling` tells
    until the block ends) and calls ``beside()``, which may start a process compiling other
    kernels into the cache meanwhile (:func:`checkpoint_compiler`; it returns the
    ``Popen`` or None); the block gets an object whose ``join()`` waits for that process
    after a cold start, or stops it (at the latest the block's end does). A block that compiled at least
    :data:`COLD_EVENTS` functions (a cold start, not a kernel or two) is recorded as the
    solver's next estimate: the CPU seconds of this thread within it, where numba compiles,
    or the helper's if longer (not the wall seconds, which grow with the machine's load).

    Within it the objects alive at its start are out of the cyclic garbage collector's sight
    (``gc.freeze``): numba's compiling makes millions of objects, and each of the
    collector's full passes walked every object of the libraries imported before it too
    (0.4 s of the README's first command's 8 s of compiling)."""
    global _now_compiling
    listener = _FirstCompile(solver_name, beside)
    start, helpers = time.thread_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    gc.freeze()
    try:
        with event.install_listener("numba:compile", listener):
            yield listener
        listener.join()
    finally:
        gc.unfreeze()
        _now_compiling = None
        if listener.helper is not None and listener.helper.poll() is None:
            listener.helper.kill()            # the block failed: its helper is not needed
            listener.helper.wait()
    if listener.compiled >= COLD_EVENTS:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        helper_s = (ended.ru_utime + ended.ru_stime) - (helpers.ru_utime + helpers.ru_stime)
        record(solver_name, max(time.thread_time() - start, helper_s))


def checkpoint_compiler(settings, train, test, lam, l1):
    """For :func:`compile_notice`: a function starting a process that compiles a
    checkpoint's kernels into numba's cache (:mod:`ssvmbench.compiled.warm_checkpoint`: the
    ``evaluate`` of the tasks ``train`` and ``test``, the test metrics, the solver's averaged
    iterates), on the machine's other core, while this process compiles the solver's steps;
    then the checkpoint loads them from the cache. None where this process has one thread
    (one core, or a sweep's share of one): a helper would only compete with it. The helper
    is given ``(settings, train, test, lam, l1)`` pickled, and this process's ``sys.path``
    (a plugin's task that cannot be pickled has no helper; a helper that fails costs only
    its time: the checkpoint then compiles what is missing). A stop signal at the terminal
    does not reach the helper, so a stop that waits for the compile waits for no more than
    it announced."""
    if numba.get_num_threads() < 2:
        return None

    def start():
        try:
            given = pickle.dumps((settings, train, test, lam, l1))
        except Exception:                      # noqa: BLE001 (a plugin's unpicklable task)
            return None
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))}
        try:
            helper = subprocess.Popen(
                [sys.executable, "-c", "from ssvmbench.compiled import warm_checkpoint; "
                 "warm_checkpoint.main()"], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                start_new_session=True)    # a Ctrl-C at the terminal stops the run only
        except OSError:
            return None
        # (fed by a thread: the pipe holds 64 KiB, and the helper reads once it has started)
        threading.Thread(target=_feed, args=(helper.stdin, given), daemon=True).start()
        return helper

    return start


def _feed(pipe, data):
    with contextlib.suppress(OSError), pipe:       # (a helper that ended: a broken pipe)
        pipe.write(data)
