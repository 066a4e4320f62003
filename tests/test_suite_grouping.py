"""The suite's own machinery: the SLURM tests (one 2-core cluster) and the browser tests (one
chromium) each run in one xdist worker through ``--dist loadgroup`` and their
``xdist_group`` marks (pyproject's addopts). A pytest that silently drops the grouping (9.2,
pytest-xdist issue 1386) made the SLURM tests share the cluster two at a time and fail now
and then; this fails at once instead."""

import subprocess
import sys


def test_loadgroup_keeps_a_group_in_one_worker(tmp_path):
    marked = "import pytest\n\npytestmark = pytest.mark.xdist_group('g')\n\n" + "".join(
        f"def test_{k}():\n    pass\n\n" for k in range(6))
    (tmp_path / "test_grouped.py").write_text(marked)
    (tmp_path / "test_free.py").write_text("def test_free():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
                          "-v", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120).stdout
    grouped = [line for line in out.splitlines() if "PASSED test_grouped.py::" in line]
    assert len(grouped) == 6 and all(line.endswith("@g") for line in map(str.strip, grouped))
    assert len({line.split("]")[0] for line in grouped}) == 1, out
