"""Where configs, the dataset manifest and the data live."""

import os
from pathlib import Path

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


def data_root(root=None) -> Path:
    """Data root: the ``data.root=`` override, else ``$SSVMBENCH_DATA_DIR``, else
    ``./datasets`` (the checkout's top-level folder when run from the checkout)."""
    chosen = root or os.environ.get("SSVMBENCH_DATA_DIR") or "datasets"
    return Path(chosen).expanduser().resolve()


def cache_dir() -> Path:
    """Derived data (extracted features): ``$SSVMBENCH_CACHE_DIR``, else ``~/.cache/ssvmbench``."""
    return Path(os.environ.get("SSVMBENCH_CACHE_DIR") or "~/.cache/ssvmbench").expanduser()
