"""ssvmbench's compiled kernels cached per key of the sources they compile in, so that editing
one plugin re-compiles only the kernels compiled with it.

numba keeps, per function, one index file with an entry per signature. Here each signature's
entry goes to the folder ``<root>/<key>`` of its key
(:func:`ssvmbench.compiled.kernel_sources.key`): BCFW's loop compiled for the chain task and for a
plugin's task go to two folders, and an edit of the plugin changes the second key only; the
built-ins' and the other tasks' entries stay valid. ``<root>`` is ``NUMBA_CACHE_DIR`` if the user
set it, else :func:`ssvmbench.compiled.kernel_home.root`, beside the folders of
:func:`ssvmbench.common.paths.kernel_cache` (where the kernels not given this cache go) and pruned
like them (a key folder is touched when used). The index and data files are numba's own, marked so
that :mod:`ssvmbench.compiled.cache_lock` serializes their updates across processes.

:func:`use` gives the kernels this cache when a run (or ``bench``), an estimator's fit or
``check-solver`` starts: after their imports, before their first compile. ssvmbench's kernels
it has not reached (a module imported later) keep the cache :mod:`ssvmbench.compiled.kernel_home`
gives them, keyed by every source, so they are never stale either.
"""

import contextlib
import inspect
import os
import sys
from pathlib import Path

import numba
from numba.core.caching import FunctionCache, IndexDataCacheFile, _CacheLocator
from numba.core.dispatcher import Dispatcher

from ssvmbench.compiled import cache_lock, kernel_home, kernel_sources
from ssvmbench.solvers import registered as registered_solvers
from ssvmbench.tasks import registered as registered_tasks


class KeyedFiles:
    """numba's index-and-data files of one function (the ``load``, ``save`` and ``flush`` of
    ``IndexDataCacheFile``), one set per key folder."""

    def __init__(self, py_func, root, filename_base, source_stamp):
        self.py_func, self.root = py_func, root
        self.subpath = _CacheLocator.get_suitable_cache_subpath(inspect.getfile(py_func))
        self.filename_base, self.source_stamp = filename_base, source_stamp
        self.files = {}

    def file(self, sig):
        """The index of ``sig``'s key folder (made and marked as used on first call, if it
        can be), or None if ``sig`` cannot be keyed (then nothing is cached)."""
        found = kernel_sources.compiled_in(self.py_func, sig)
        if found is None:
            return None
        folder = self.root / kernel_sources.key(found)
        if folder not in self.files:
            with contextlib.suppress(OSError):      # a read-only cache is still read
                (folder / self.subpath).mkdir(parents=True, exist_ok=True)
                os.utime(folder)
            self.files[folder] = cache_lock.mark(IndexDataCacheFile(
                str(folder / self.subpath), self.filename_base, self.source_stamp))
        return self.files[folder]

    def load(self, key):
        """The cached data of numba's index key ``key`` (its first item is the signature)."""
        file = self.file(key[0])
        return None if file is None else file.load(key)

    def save(self, key, data):
        """Cache ``data`` under ``key`` (not if its folder cannot be written: the kernel
        stays compiled in this process only)."""
        file = self.file(key[0])
        if file is not None:
            with contextlib.suppress(OSError):
                file.save(key, data)

    def flush(self):
        """Empty every index this function has used."""
        for file in self.files.values():
            file.flush()


class KeyedCache(FunctionCache):
    """numba's cache of one function, with each signature in the folder of its key."""

    def __init__(self, py_func, root):
        super().__init__(py_func)
        self._cache_path = str(root)
        self._cache_file = KeyedFiles(py_func, root, self._impl.filename_base,
                                      self._impl.locator.get_source_stamp())


def root():
    """Where the key folders go: ``NUMBA_CACHE_DIR`` set by the user, else
    :func:`ssvmbench.compiled.kernel_home.root` (also when ``NUMBA_CACHE_DIR`` names one of the
    folders there, as in a process started by an earlier version of ssvmbench)."""
    ours = kernel_home.root()
    if not numba.config.CACHE_DIR:
        return ours
    chosen = Path(numba.config.CACHE_DIR)
    return ours if chosen.parent == ours else chosen


def use():
    """Give every caching kernel of the loaded modules of ssvmbench and of the registered
    task and solver plugins a :class:`KeyedCache` (each once), and read the sources again."""
    where = root()
    kernel_sources.forget()
    plugins = [*registered_tasks().values(), *registered_solvers().values()]
    packages = {"ssvmbench", *(cls.__module__.split(".")[0] for cls in plugins)}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in packages:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher) and type(value._cache) is FunctionCache:
                value._cache = KeyedCache(value.py_func, where)
