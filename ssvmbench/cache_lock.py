"""Processes that share numba's kernel cache (a sweep's parallel runs, SLURM array tasks, the
test workers) must not interleave their cache updates. numba's ``IndexDataCacheFile.save``
reads a function's index, picks the first free data-file number and writes index and data
file separately; two processes compiling different specializations of one function at once
both pick number 1, and the index of one then names the other's code, which crashes the
process that loads it (a segfault in a CI run, both workers compiling new kernels). The
index files of ssvmbench's kernels (those in :func:`ssvmbench.kernel_home.root`, and those
:mod:`ssvmbench.keyed_cache` marks) are read and updated under an exclusive ``flock`` on
``<index>.lock`` beside them; any other kernel's index is numba's business, untouched.
Where the file system refuses ``flock`` (Lustre mounted without ``flock``, some NFS mounts:
ENOLCK, EOPNOTSUPP, EINVAL, ENOSYS), the same index is guarded by a lock file created with
``O_EXCL`` instead (atomic on NFS v3+ and Lustre, across hosts), taken over when older than
:data:`STALE_S` (its holder died); the run never fails for want of a lock."""

import contextlib
import fcntl
import functools
import os
import time

from numba.core.caching import IndexDataCacheFile

from ssvmbench.files import age_s
from ssvmbench.kernel_home import root


def mark(index_file):
    """Lock ``index_file`` (an ``IndexDataCacheFile`` of one of ssvmbench's kernels kept in
    a folder the user chose) wherever it is."""
    index_file.ssvmbench_kernel = True
    return index_file


def _is_ssvmbench_kernel(index_file):
    return (getattr(index_file, "ssvmbench_kernel", False)
            or str(index_file._index_path).startswith(str(root()) + "/"))


STALE_S = 120      # an O_EXCL lock file older than this was left by a process that died
WAIT_S = 0.05


@contextlib.contextmanager
def exclusive(path):
    """Hold an exclusive lock on ``path`` (``flock``; an ``O_EXCL`` file ``path + ".excl"``
    where the file system refuses ``flock``); nothing if ``path`` cannot be opened (a
    read-only cache: numba saves nothing there anyway)."""
    try:
        lock = open(path, "a")
    except OSError:
        yield
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:              # ENOLCK, EOPNOTSUPP, EINVAL, ...: no flock here
            with _exclusive_file(path + ".excl"):
                yield
            return
        yield                                        # closing the file releases the lock


@contextlib.contextmanager
def _exclusive_file(path):
    """The ``O_EXCL`` lock: create ``path`` (waiting while another process holds it, taking
    it over once it is :data:`STALE_S` old by its own file system's clock), remove it after."""
    while True:
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            with contextlib.suppress(OSError):
                if age_s(path) > STALE_S:
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


def _locked(method):
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if not _is_ssvmbench_kernel(self):
            return method(self, *args, **kwargs)
        with exclusive(self._index_path + ".lock"):
            return method(self, *args, **kwargs)
    run.ssvmbench_locked = True
    return run


def install():
    """Serialize :class:`IndexDataCacheFile`'s ``save`` and ``load`` of ssvmbench's kernels
    (once per process)."""
    for name in ("save", "load"):
        method = getattr(IndexDataCacheFile, name)
        if not getattr(method, "ssvmbench_locked", False):
            setattr(IndexDataCacheFile, name, _locked(method))
