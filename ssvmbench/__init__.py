"""ssvmbench: reproduce and extend structural-SVM optimizer benchmarks."""

import contextlib
import os

from ssvmbench.paths import user_cache

__version__ = "0.1.0"

# numba's compiled kernels go to the per-user cache (``numba/`` in it), not beside the
# installed sources, so that reinstalling the package (the README's test command does) keeps
# them; a source file that changed is recompiled (numba keys its cache on the file's stamp).
# NUMBA_CACHE_DIR, if set, wins; a cache folder that cannot be made leaves numba's default.
if "NUMBA_CACHE_DIR" not in os.environ:
    with contextlib.suppress(OSError):
        (user_cache() / "numba").mkdir(parents=True, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = str(user_cache() / "numba")


def __getattr__(name):
    """``ssvmbench.ChainSSVM`` (imported on first use, so the command line stays light)."""
    if name == "ChainSSVM":
        from ssvmbench.estimator import ChainSSVM
        return ChainSSVM
    raise AttributeError(f"module 'ssvmbench' has no attribute {name!r}")
