"""Whether a process named by a lock or a plan (its host and pid) still runs: one answer for
the run lock (:mod:`ssvmbench.run.runlock`) and ``ssvmbench status`` (light: no imports beyond
the standard library, so that status stays quick)."""

import os
import socket


def process_alive(host, pid, this_host=None):
    """False if ``host`` is this one (``this_host``, default this machine's name) and it has
    no process ``pid``; True if it has one, or it cannot be told (no permission, a bad pid);
    None for a process on another host."""
    if host != (this_host or socket.gethostname()):
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError, TypeError):
        return True
    return True
