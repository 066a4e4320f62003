"""What a run tells its user: each message goes to the terminal and to the run's ``app.log``
(the file handler of Hydra's job logging, configs/config.yaml), so the log directory keeps
what the run said."""

import logging
import sys

_LOG = logging.getLogger("ssvmbench")


def say(message, error=False):
    """Print ``message`` (to stderr if ``error``) and log it (INFO, or ERROR)."""
    print(message, file=sys.stderr if error else sys.stdout, flush=True)
    _LOG.log(logging.ERROR if error else logging.INFO, message)
