"""The line a run prints (to stderr, with the progress bars) when numba starts compiling its
kernels (issue 31): ``compiling kernels (first run only, ~N s)``, at numba's first compile
event (none fires when every kernel loads from the cache), with ``N`` the last cold warm-up
measured for that solver on this machine (kept across versions of the sources), or
:data:`TYPICAL_S` before any.

What is measured is the compile's CPU seconds, not its wall seconds: numba compiles on the
calling thread, so on an idle machine the two agree (within the file reads and writes, a few
percent), while on a loaded one the wall seconds stretch with the load (after a cold start beside other jobs the line announced ~175 s for a
warm-up of 20 s) and the CPU seconds do not. So ``N`` is the machine's idle figure whatever the load of the run that
measured it."""

import contextlib
import json
import time

from numba.core import event

from ssvmbench.files import write_text
from ssvmbench.messages import say
from ssvmbench.paths import user_cache

TYPICAL_S = 20      # warm-up of `ssvmbench run solver=bcfw data=ocr` on an empty cache, 2 cores
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
    def __init__(self, solver_name):
        self.solver_name, self.compiled = solver_name, 0

    def on_start(self, ev):
        global _now_compiling
        self.compiled += 1
        if self.compiled == 1:
            expected_s = estimate(self.solver_name)
            _now_compiling = (expected_s, time.perf_counter())
            say(f"compiling kernels (first run only, ~{expected_s:.0f} s)", progress=True)

    def on_end(self, ev):
        """(numba's listener contract; only the starts count)"""


@contextlib.contextmanager
def compile_notice(solver_name):
    """Within it, numba's first compile says so in one line (and :func:`compiling` tells
    until the block ends); a block that compiled at least :data:`COLD_EVENTS` functions (a
    cold start, not a kernel or two) is recorded as the solver's next estimate: the CPU
    seconds of this thread within it, where numba compiles (not the wall seconds, which
    grow with the machine's load)."""
    global _now_compiling
    listener = _FirstCompile(solver_name)
    start = time.thread_time()
    try:
        with event.install_listener("numba:compile", listener):
            yield
    finally:
        _now_compiling = None
    if listener.compiled >= COLD_EVENTS:
        record(solver_name, time.thread_time() - start)
