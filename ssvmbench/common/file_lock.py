"""Locks on files shared by processes, possibly on several hosts: :func:`exclusive` (the
kernel cache's index files, a dataset's download) and :func:`age_s`, a file's age by the
clock of the file system that holds it (run locks' heartbeats).

``flock`` where the file system has it; where it refuses (Lustre mounted without ``flock``,
some NFS mounts: ENOLCK, EOPNOTSUPP, EINVAL, ENOSYS), a lock file created with ``O_EXCL``
instead (atomic on NFS v3+ and Lustre, across hosts), taken over when older than its
``stale_s`` (its holder died); nothing ever fails for want of a lock."""

import contextlib
import fcntl
import os
import socket
import time

STALE_S = 120      # an O_EXCL lock file older than this was left by a process that died
WAIT_S = 0.05


@contextlib.contextmanager
def exclusive(path, stale_s=STALE_S):
    """Hold an exclusive lock on ``path`` (``flock``; an ``O_EXCL`` file ``path + ".excl"``,
    taken over after ``stale_s``, where the file system refuses ``flock``); nothing if
    ``path`` cannot be opened (a read-only folder, where nobody writes)."""
    try:
        lock = open(path, "a")
    except OSError:
        yield
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:              # ENOLCK, EOPNOTSUPP, EINVAL, ...: no flock here
            with _exclusive_file(path + ".excl", stale_s):
                yield
            return
        yield                                        # closing the file releases the lock


@contextlib.contextmanager
def _exclusive_file(path, stale_s):
    """The ``O_EXCL`` lock: create ``path`` (waiting while another process holds it, taking
    it over once it is ``stale_s`` old by its own file system's clock), remove it after."""
    while True:
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            with contextlib.suppress(OSError):
                if age_s(path) > stale_s:
                    os.unlink(path)
                    continue
            time.sleep(WAIT_S)
        except OSError:              # cannot create it either: go on unguarded, never fail
            yield
            return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def age_s(path):
    """Seconds since ``path`` was last modified, by the clock of the file system that holds
    it (a file made beside it now gives its "now"), so that hosts whose clocks disagree
    agree on it; infinite if ``path`` is gone, and by this host's clock if nothing can be
    made beside it."""
    probe = f"{path}.now.{socket.gethostname()}.{os.getpid()}"
    try:
        modified = os.stat(path).st_mtime
    except OSError:
        return float("inf")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_WRONLY))
        now = os.stat(probe).st_mtime
    except OSError:
        now = time.time()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
    return now - modified
