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


def _data_fixture(relpath):
    """A session fixture giving the data root, which must hold ``relpath``."""
    @pytest.fixture(scope="session")
    def root():
        return _root_with(relpath)
    root.__doc__ = f"The data root, holding {relpath}."
    return root


data_root = _data_fixture("ocr/letters.pickle")
conll2000_root = _data_fixture("conll2000/conll2000.zip")
conll2003_root = _data_fixture("conll2003/eng.train")
treebank_root = _data_fixture("treebank/treebank.zip")
brown_root = _data_fixture("brown/brown.zip")
hansards_root = _data_fixture("hansards/hansards.a")
conll2002_root = _data_fixture("conll2002/conll2002.zip")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Feature caches of the test session go to a temporary folder."""
    os.environ["SSVMBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
