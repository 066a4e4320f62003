"""numba's cache index under concurrent writers (ssvmbench.compiled.cache_lock): two writers of
different specializations of one function, interleaved at their worst, each load back
their own code."""

import contextlib
import threading
import time

import pytest
from numba.core.caching import IndexDataCacheFile

from ssvmbench.compiled import cache_lock, kernel_home


def _save_both(tmp_path):
    """Two writers of one index save different keys; every index read waits until both
    have read (the interleaving that gave both the data file number 1)."""
    files = [cache_lock.mark(IndexDataCacheFile(str(tmp_path), "kernel-12.py311", "stamp"))
             for _ in range(2)]
    read = IndexDataCacheFile._load_index
    barrier = threading.Barrier(2, timeout=1)

    def slow(self):
        index = read(self)
        with contextlib.suppress(threading.BrokenBarrierError):   # the lock let one in: fine
            barrier.wait()
        return index

    IndexDataCacheFile._load_index = slow
    try:
        threads = [threading.Thread(target=f.save, args=(key, f"code of {key}"))
                   for f, key in zip(files, ("sig A", "sig B"))]
        for t in threads:
            t.start()
            time.sleep(0.01)
        for t in threads:
            t.join()
    finally:
        IndexDataCacheFile._load_index = read
    return files[0]


def test_interleaved_writers_keep_their_own_code(tmp_path):
    cache_lock.install()
    reader = _save_both(tmp_path)
    assert reader.load("sig A") == "code of sig A" and reader.load("sig B") == "code of sig B"


def test_without_the_lock_they_clobber_each_other(tmp_path, monkeypatch):
    """The failure the lock prevents (numba's own save, unlocked)."""
    for name in ("save", "load"):
        method = getattr(IndexDataCacheFile, name)
        monkeypatch.setattr(IndexDataCacheFile, name, getattr(method, "__wrapped__", method))
    reader = _save_both(tmp_path)
    loaded = {reader.load("sig A"), reader.load("sig B")}
    assert loaded != {"code of sig A", "code of sig B"}


def test_only_ssvmbench_kernels_are_locked(tmp_path):
    """A user's own kernel's index (anywhere but ssvmbench's cache, unmarked) is numba's
    business: no lock file beside it; ssvmbench's cache folder is locked unmarked."""
    cache_lock.install()
    theirs = IndexDataCacheFile(str(tmp_path), "kernel-12.py311", "stamp")
    theirs.save("sig A", "code")
    assert theirs.load("sig A") == "code" and not list(tmp_path.glob("*.lock"))
    ours = IndexDataCacheFile(str(kernel_home.root() / "lock-test"), "kernel-12.py311", "s")
    assert cache_lock._is_ssvmbench_kernel(ours) and not cache_lock._is_ssvmbench_kernel(theirs)


def test_installed_with_the_package():
    """Importing ssvmbench (done above) installed the lock."""
    assert IndexDataCacheFile.save.ssvmbench_locked and IndexDataCacheFile.load.ssvmbench_locked
    with pytest.raises(AttributeError):
        IndexDataCacheFile.flush.ssvmbench_locked
