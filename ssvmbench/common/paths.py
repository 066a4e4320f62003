"""Where configs, the dataset manifest and the data live."""

import hashlib
import importlib.util
import os
import shutil
import time
from importlib.metadata import entry_points
from pathlib import Path

import pooch

PACKAGE = Path(__file__).resolve().parent.parent     # ssvmbench/ (this file is in common/)
REPO = PACKAGE.parent


def _packaged_or_repo(packaged, in_repo):
    return packaged if packaged.exists() else in_repo


def config_dir() -> Path:
    """The Hydra config directory (inside the installed package, or the checkout's)."""
    return _packaged_or_repo(PACKAGE / "configs", REPO / "configs")


def manifest_path() -> Path:
    """The dataset manifest (sources, checksums, licences, citations)."""
    return _packaged_or_repo(PACKAGE / "manifest.yaml", REPO / "datasets" / "manifest.yaml")


def user_cache() -> Path:
    """The per-user cache folder of the platform (``~/.cache/ssvmbench`` on Linux), as pooch
    and scikit-learn keep downloads: the same whatever the current directory."""
    return Path(pooch.os_cache("ssvmbench"))


def data_root(root=None) -> Path:
    """Data root: the ``data.root=`` override, else ``$SSVMBENCH_DATA_DIR``, else
    :func:`default_data_root` (downloads go there)."""
    chosen = root or os.environ.get("SSVMBENCH_DATA_DIR") or default_data_root()
    return Path(chosen).expanduser().resolve()


def default_data_root() -> Path:
    """The package's own data root, ``datasets/`` in :func:`user_cache`: where ``ssvmbench
    data fetch`` and runs put data when neither ``data.root`` nor ``$SSVMBENCH_DATA_DIR``
    is set."""
    return user_cache() / "datasets"


def cache_dir() -> Path:
    """Derived data (extracted features): ``$SSVMBENCH_CACHE_DIR``, else :func:`user_cache`."""
    return Path(os.environ.get("SSVMBENCH_CACHE_DIR") or user_cache()).expanduser()


def source_digest(root=PACKAGE) -> str:
    """A short digest of the contents of every ``.py`` file under ``root``."""
    digest = hashlib.sha1()
    for path in sorted(Path(root).rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


COMPILED_PLUGINS = ("ssvmbench.tasks", "ssvmbench.solvers")  # their kernels enter ours


def plugin_roots():
    """The folders of the installed packages that register tasks or solvers (found without
    importing them): a task's kernels are compiled into the built-in solvers' loops."""
    roots = set()
    for group in COMPILED_PLUGINS:
        for point in entry_points(group=group):
            spec = importlib.util.find_spec(point.module.split(".")[0])
            if spec is None:
                continue
            roots.update(Path(p) for p in spec.submodule_search_locations or ())
            if spec.submodule_search_locations is None and spec.origin:
                roots.add(Path(spec.origin))
    return sorted(roots)


def kernel_cache() -> Path:
    """numba's cache of compiled kernels: ``numba/<digest>`` in :func:`user_cache`, the
    digest of ssvmbench's sources and of the installed task and solver plugins'
    (:func:`plugin_roots`). numba re-compiles a kernel whose own file changed, but not one
    whose callee in another file changed (a plugin task's kernel inside BCFW's loop); a
    folder per version of the sources never serves such a stale kernel."""
    digest = hashlib.sha1(source_digest().encode())
    for root in plugin_roots():
        digest.update(str(root).encode() + (source_digest(root) if root.is_dir() else
                                             hashlib.sha1(root.read_bytes()).hexdigest()).encode())
    return user_cache() / "numba" / digest.hexdigest()[:12]


KERNEL_CACHE_KEEP_DAYS = 14


def prune_kernel_caches(keep_days=KERNEL_CACHE_KEEP_DAYS):
    """Mark this version's :func:`kernel_cache` as used now and delete the folders of other
    versions of the sources unused for ``keep_days`` days (about 30 MB each; editing a
    kernel makes a new one)."""
    current = kernel_cache()
    current.mkdir(parents=True, exist_ok=True)
    os.utime(current)
    cutoff = time.time() - keep_days * 86400
    for folder in current.parent.iterdir():
        if folder != current and folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
