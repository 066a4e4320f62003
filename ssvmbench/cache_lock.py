"""Processes that share numba's kernel cache (a sweep's parallel runs, SLURM array tasks, the
test workers) must not interleave their cache updates. numba's ``IndexDataCacheFile.save``
reads a function's index, picks the first free data-file number and writes index and data
file separately; two processes compiling different specializations of one function at once
both pick number 1, and the index of one then names the other's code, which crashes the
process that loads it (a segfault in a CI run, both workers compiling new kernels). Each
index file's reads and updates are serialized here with an exclusive ``flock`` on
``<index>.lock`` beside it (files on local or cluster file systems with POSIX locks)."""

import fcntl
import functools

from numba.core.caching import IndexDataCacheFile


def _locked(method):
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            lock = open(self._index_path + ".lock", "a")
        except OSError:                 # a read-only cache: numba saves nothing there anyway
            return method(self, *args, **kwargs)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return method(self, *args, **kwargs)     # closing the file releases the lock
    run.ssvmbench_locked = True
    return run


def install():
    """Serialize :class:`IndexDataCacheFile`'s ``save`` and ``load`` (once per process)."""
    for name in ("save", "load"):
        method = getattr(IndexDataCacheFile, name)
        if not getattr(method, "ssvmbench_locked", False):
            setattr(IndexDataCacheFile, name, _locked(method))
