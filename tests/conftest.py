"""Shared fixtures. Tests needing real data find it where the package reads it
(``$SSVMBENCH_DATA_DIR``, else the package's own data root: :mod:`data_files`) and skip
with a reason saying how the file gets there, except in CI (environment variable ``CI``
set), where missing data is a failure."""

import os

import pytest
from helpers.data_files import root_with

from ssvmbench.tasks import kernels


def _data_fixture(relpath):
    """A session fixture giving the data root, which must hold ``relpath``."""
    @pytest.fixture(scope="session")
    def root():
        return root_with(relpath)
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


@pytest.fixture
def register(monkeypatch):
    """Route the kernel calls made from Python (the kit's) on a task's data type to a class
    built in the test, for the test's duration."""
    original = kernels.task_of_data

    def add(cls):
        monkeypatch.setattr(kernels, "task_of_data",
                            lambda t: cls if t is cls.data_type else original(t))
        return cls
    return add
