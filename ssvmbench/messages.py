"""What a run tells its user: each message goes to the terminal and to the run's ``app.log``
(the file handler of Hydra's job logging, configs/config.yaml, or of a batch worker), so the
log directory keeps what the run said; durations as people read them."""

import logging
import sys

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
