"""What a run tells its user: each message goes to the terminal and to the run's ``app.log``
(the file handler of Hydra's job logging, configs/config.yaml, or of a batch worker), so the
log directory keeps what the run said; durations as people read them."""

import logging
import os
import sys
import time

_LOG = logging.getLogger("ssvmbench")


def say(message, error=False, log=True, progress=False):
    """Print ``message`` (to stderr if ``error``, or if it is ``progress`` news, as the
    progress bars are) and, with ``log``, log it (INFO, or ERROR)."""
    print(message, file=sys.stderr if error or progress else sys.stdout, flush=True)
    if log:
        _LOG.log(logging.ERROR if error else logging.INFO, message)


def duration(seconds):
    """``seconds`` as people read them: 40 s, 12 min, 3.3 h."""
    return (f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
            if seconds < 3600 else f"{seconds / 3600:.1f} h")


PROGRESS_AFTER_S = 2.0     # planning longer than this says how far it is (env
#                            SSVMBENCH_PROGRESS_AFTER_S overrides it, e.g. 0 in a test)
PROGRESS_EVERY_S = 1.0     # at most one progress line this often
_PLANNING = {}             # the planning clock: when it started, when it last said so


def start_planning():
    """Start the planning clock (a command's planning begins; :func:`end_planning` when its
    first run starts): the stages of :class:`Planning` after it add up."""
    _PLANNING.clear()
    _PLANNING["start"] = time.perf_counter()


def end_planning():
    _PLANNING.clear()


class Planning:
    """Progress of planning ``total`` runs (``what``: ``checking``, ``naming``, ...): once
    planning has taken longer than ``after_s`` (:data:`PROGRESS_AFTER_S`; the clock
    starts at :func:`start_planning`, else with this stage), a
    line on stderr at most every :data:`PROGRESS_EVERY_S`: ``ssvmbench: planning 5000
    runs: checking 1200 of 5000 (3 s)``; call it with the runs done so far."""

    def __init__(self, what, total, after_s=None):
        self.what, self.total = what, total
        if after_s is None:
            after_s = float(os.environ.get("SSVMBENCH_PROGRESS_AFTER_S", PROGRESS_AFTER_S))
        self.after_s = after_s
        _PLANNING.setdefault("start", time.perf_counter())

    def __call__(self, done):
        now = time.perf_counter()
        if (now - _PLANNING["start"] >= self.after_s
                and now - _PLANNING.get("said", -1e9) >= PROGRESS_EVERY_S):
            _PLANNING["said"] = now
            say(f"ssvmbench: planning {self.total} run{'s' * (self.total != 1)}: {self.what} "
                f"{done} of {self.total} ({duration(now - _PLANNING['start'])})",
                progress=True, log=False)
