"""Shared fixtures. Tests needing real data skip with a reason naming the file, except in
CI (environment variable ``CI`` set), where missing data is a failure."""

import os
from pathlib import Path

import pytest


def _root_with(relpath):
    """The data root of ``$SSVMBENCH_DATA_DIR`` if it holds ``relpath`` (else skip or fail)."""
    root = Path(os.environ.get("SSVMBENCH_DATA_DIR", "datasets")).resolve()
    if not (root / relpath).exists():
        reason = f"needs {root / relpath}; set SSVMBENCH_DATA_DIR to the shared datasets folder"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return root


@pytest.fixture(scope="session")
def data_root():
    """The data root, holding the OCR file."""
    return _root_with("ocr/letters.pickle")


@pytest.fixture(scope="session")
def conll2000_root():
    """The data root, holding the CoNLL-2000 archive."""
    return _root_with("conll2000/conll2000.zip")


@pytest.fixture(scope="session")
def conll2003_root():
    """The data root, holding the CoNLL-2003 files."""
    return _root_with("conll2003/eng.train")


@pytest.fixture(scope="session")
def treebank_root():
    """The data root, holding NLTK's WSJ sample."""
    return _root_with("treebank/treebank.zip")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Feature caches of the test session go to a temporary folder."""
    os.environ["SSVMBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
