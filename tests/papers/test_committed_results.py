"""The committed reproduction (results/reproduction) re-derived from its committed traces."""

import shutil
from pathlib import Path

import pandas as pd
from helpers.cli import ssvmbench

from ssvmbench.run import traces

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "reproduction"


def test_the_committed_checks_follow_from_the_committed_traces(tmp_path):
    """Issue 32: `ssvmbench report` on the committed traces alone (no run logs) gives the
    committed checks.csv, row for row; a preset folder without traces is not in it."""
    folders = sorted(path.parent for path in COMMITTED.glob(f"*/{traces.NAME}"))
    assert folders, f"no {traces.NAME} under {COMMITTED}"
    for folder in folders:
        shutil.copytree(folder, tmp_path / folder.name)
    ssvmbench("report", str(tmp_path), cwd=tmp_path)
    derived = pd.read_csv(tmp_path / "checks.csv", keep_default_na=False)
    committed = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    pd.testing.assert_frame_equal(derived, committed)
    assert set(committed["preset"]) <= {folder.name for folder in folders}
