"""Processes that share numba's kernel cache (a sweep's parallel runs, SLURM array tasks, the
test workers) must not interleave their cache updates. numba's ``IndexDataCacheFile.save``
reads a function's index, picks the first free data-file number and writes index and data
file separately; two processes compiling different specializations of one function at once
both pick number 1, and the index of one then names the other's code, which crashes the
process that loads it (a segfault in a CI run, both workers compiling new kernels). The
index files of ssvmbench's kernels (those in :func:`ssvmbench.compiled.kernel_home.root`, and those
:mod:`ssvmbench.compiled.keyed_cache` marks) are read and updated under an exclusive ``flock`` on
``<index>.lock`` beside them (:func:`ssvmbench.common.file_lock.exclusive`, which falls back to an
``O_EXCL`` lock file where the file system refuses ``flock``); any other kernel's index is
numba's business, untouched."""

import functools

from numba.core.caching import IndexDataCacheFile

from ssvmbench.common.file_lock import exclusive
from ssvmbench.compiled.kernel_home import root


def mark(index_file):
    """Lock ``index_file`` (an ``IndexDataCacheFile`` of one of ssvmbench's kernels kept in
    a folder the user chose) wherever it is."""
    index_file.ssvmbench_kernel = True
    return index_file


def _is_ssvmbench_kernel(index_file):
    return (getattr(index_file, "ssvmbench_kernel", False)
            or str(index_file._index_path).startswith(str(root()) + "/"))


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
