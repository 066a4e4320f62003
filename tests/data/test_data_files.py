"""The tests find real data where the package puts it (issue 43): a file in the package's
own data root, where the README's first command fetches OCR, is used when
``SSVMBENCH_DATA_DIR`` is not set; a missing file skips with a reason saying how it gets
there (``ssvmbench data fetch NAME``), and fails in CI. The fixtures of tests/conftest.py
are run in a small pytest session of their own, with the package's cache folder moved to a
temporary one (``XDG_CACHE_HOME``)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.data_files import missing_reason, root_with

from ssvmbench.common import paths

TESTS = Path(__file__).resolve().parents[1]
OCR = "ocr/letters.pickle"


def _session(tmp_path):
    """Run one test needing ``data_root`` with this suite's conftest; ``(outcome line,
    output)``."""
    folder = tmp_path / "session"
    folder.mkdir(exist_ok=True)
    shutil.copy(TESTS / "conftest.py", folder / "conftest.py")
    shutil.copytree(TESTS / "helpers", folder / "helpers", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "test_needs_ocr.py").write_text(
        "def test_needs_ocr(data_root):\n    print('data root:', data_root)\n")
    env = {key: value for key, value in os.environ.items()
           if key not in ("CI", "SSVMBENCH_DATA_DIR", "PYTEST_ADDOPTS")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-rs", "-p",
                           "no:cacheprovider", "-p", "no:randomly", "test_needs_ocr.py"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    return proc.stdout.strip().splitlines()[-1], proc.stdout


def test_the_fixtures_use_the_packages_own_data_root(tmp_path):
    """No ``SSVMBENCH_DATA_DIR``: OCR fetched into the package's data root is found (it was
    looked for in ``./datasets`` and 61 OCR tests skipped); without it the test skips with
    the command that fetches it (in CI it fails: the next test)."""
    outcome, out = _session(tmp_path)
    assert "1 skipped" in outcome, out
    assert "`ssvmbench data fetch ocr` puts it there" in out
    assert f"needs {tmp_path / 'cache' / 'ssvmbench' / 'datasets' / OCR}" in out
    fetched = tmp_path / "cache" / "ssvmbench" / "datasets" / OCR
    fetched.parent.mkdir(parents=True)
    fetched.write_bytes(b"")
    outcome, out = _session(tmp_path)
    assert "1 passed" in outcome, out
    assert f"data root: {fetched.parent.parent}" in out


def test_ssvmbench_data_dir_comes_first(tmp_path, monkeypatch):
    """``$SSVMBENCH_DATA_DIR`` is the data root when it is set, as for the package; a file
    only in the package's own root is named in the reason, not used (the command-line runs
    of the tests would not read it there)."""
    monkeypatch.setattr(paths, "user_cache", lambda: tmp_path / "cache")
    monkeypatch.delenv("CI", raising=False)
    shared = tmp_path / "shared"
    (shared / "ocr").mkdir(parents=True)
    (shared / OCR).write_bytes(b"")
    monkeypatch.setenv("SSVMBENCH_DATA_DIR", str(shared))
    assert root_with(OCR) == shared
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SSVMBENCH_DATA_DIR", str(empty))
    with pytest.raises(pytest.skip.Exception, match="`ssvmbench data fetch ocr` puts it"):
        root_with(OCR)
    (tmp_path / "cache" / "datasets" / "ocr").mkdir(parents=True)
    (tmp_path / "cache" / "datasets" / OCR).write_bytes(b"")
    with pytest.raises(pytest.skip.Exception,
                       match=f"SSVMBENCH_DATA_DIR={empty} does not hold it, the package's "
                             f"own data root {tmp_path / 'cache' / 'datasets'} does"):
        root_with(OCR)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="does not hold it"):
        root_with(OCR)


def test_data_without_a_download_says_where_it_comes_from(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "user_cache", lambda: tmp_path / "cache")
    hansards = missing_reason(tmp_path, "hansards/hansards.a")
    assert hansards.startswith(f"needs {tmp_path / 'hansards/hansards.a'}: No download")
    assert "under the data root's hansards/" in hansards
    assert "not in ssvmbench's dataset manifest" in missing_reason(tmp_path,
                                                                   "conll2002/conll2002.zip")
