"""Where configs, the dataset manifest and the data live."""

import os
from pathlib import Path

import pooch

PACKAGE = Path(__file__).resolve().parent
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
    ``datasets/`` in :func:`user_cache` (downloads go there)."""
    chosen = root or os.environ.get("SSVMBENCH_DATA_DIR") or user_cache() / "datasets"
    return Path(chosen).expanduser().resolve()


def cache_dir() -> Path:
    """Derived data (extracted features): ``$SSVMBENCH_CACHE_DIR``, else :func:`user_cache`."""
    return Path(os.environ.get("SSVMBENCH_CACHE_DIR") or user_cache()).expanduser()
