"""Shared fixtures. Tests needing real data skip with a reason naming the file, except in
CI (environment variable ``CI`` set), where missing data is a failure."""

import os
from pathlib import Path

import pytest

OCR_FILE = "ocr/letters.pickle"


@pytest.fixture(scope="session")
def data_root():
    """The data root of ``$SSVMBENCH_DATA_DIR``, which must hold the OCR file."""
    root = Path(os.environ.get("SSVMBENCH_DATA_DIR", "datasets")).resolve()
    if not (root / OCR_FILE).exists():
        reason = f"needs {root / OCR_FILE}; set SSVMBENCH_DATA_DIR to the shared datasets folder"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return root
