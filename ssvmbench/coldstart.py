"""The line a run prints (to stderr, with the progress bars) when numba starts compiling its
kernels (issue 31): ``compiling kernels (first run only, ~N s)``, at numba's first compile
event (none fires when every kernel loads from the cache), with ``N`` the last cold warm-up
measured for that solver on this machine (kept across versions of the sources), or
:data:`TYPICAL_S` before any."""

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
    """Seconds the solver's last compiling warm-up took here (:data:`TYPICAL_S` if none)."""
    return _read().get(solver_name, TYPICAL_S)


def record(solver_name, seconds):
    """Keep ``seconds`` as the solver's next estimate (best effort: an unwritable cache
    folder keeps the old one)."""
    records = {**_read(), solver_name: round(seconds, 1)}
    with contextlib.suppress(OSError):
        write_text(_records(), json.dumps(records, indent=1, sort_keys=True))


class _FirstCompile(event.Listener):
    def __init__(self, solver_name):
        self.solver_name, self.compiled = solver_name, 0

    def on_start(self, ev):
        self.compiled += 1
        if self.compiled == 1:
            say(f"compiling kernels (first run only, ~{estimate(self.solver_name):.0f} s)",
                progress=True)

    def on_end(self, ev):
        """(numba's listener contract; only the starts count)"""


@contextlib.contextmanager
def compile_notice(solver_name):
    """Within it, numba's first compile says so in one line; a block that compiled at least
    :data:`COLD_EVENTS` functions (a cold start, not a kernel or two) is recorded as the
    solver's next estimate."""
    listener = _FirstCompile(solver_name)
    start = time.perf_counter()
    with event.install_listener("numba:compile", listener):
        yield
    if listener.compiled >= COLD_EVENTS:
        record(solver_name, time.perf_counter() - start)
