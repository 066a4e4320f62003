"""Where ssvmbench's own compiled kernels are cached, without touching anyone else's.

numba keeps a kernel's cache beside its source file unless ``NUMBA_CACHE_DIR`` says
otherwise. Beside the installed sources, a reinstall drops it, and numba re-compiles a kernel
whose own file changed but not one whose callee in another file changed. So ssvmbench's
kernels, and those of the installed task and solver plugins, are cached in the per-user folder
of this version of the sources (:func:`ssvmbench.common.paths.kernel_cache`) by a cache locator of
their own, the first numba asks. It answers for those kernels only: a user's own
``@njit(cache=True)`` kernels, ``NUMBA_CACHE_DIR`` and the environment are left alone, and a
``NUMBA_CACHE_DIR`` the user set wins for ssvmbench's kernels too.
"""

import functools
import os
from pathlib import Path

from numba.core import caching, config
from numba.core.caching import _CacheLocator, _SourceFileBackedLocatorMixin

from ssvmbench.common.paths import PACKAGE, kernel_cache, plugin_roots, user_cache


def root() -> Path:
    """The folder of every version's kernel cache (``numba/`` in the per-user cache)."""
    return user_cache() / "numba"


@functools.lru_cache(maxsize=1)
def _folder_and_owners():
    """This version's cache folder and the source folders (or files) whose kernels go there:
    ssvmbench's package and the installed plugins' (read once per process)."""
    return kernel_cache(), (Path(PACKAGE).resolve(), *(p.resolve() for p in plugin_roots()))


def owns(py_file) -> bool:
    """Whether the kernel defined in ``py_file`` is ssvmbench's or an installed plugin's."""
    path = Path(py_file).resolve()
    return any(path == owner or owner in path.parents for owner in _folder_and_owners()[1])


class KernelHomeLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """numba's cache locator for ssvmbench's and its plugins' kernels: the per-version
    folder in the per-user cache (None for any other kernel, or when ``NUMBA_CACHE_DIR``
    is set: numba's own locators then place it)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_folder_and_owners()[0],
                                        self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if config.CACHE_DIR or not os.path.exists(py_file) or not owns(py_file):
            return None
        return super().from_function(py_func, py_file)


def install():
    """Ask :class:`KernelHomeLocator` first (once per process; it declines other kernels).
    numba 0.68 named the class that holds the locators ``CacheImpl``, before ``_CacheImpl``."""
    locators = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    if KernelHomeLocator not in locators._locator_classes:
        locators._locator_classes.insert(0, KernelHomeLocator)
