"""Submit and log off (``reproduce … --detach``, ``hydra.launcher.detach=true``): the batch,
its figures and its report go on without the submitting shell (ssvmbench.batch.detach)."""

import time
from argparse import Namespace
from pathlib import Path

from helpers.cli import ssvmbench

from ssvmbench.batch import detach


def _wait_for(path, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline and not path.exists():
        time.sleep(1)
    return path.exists()


def test_the_child_command_is_the_same_reproduce_without_detach(tmp_path):
    args = Namespace(presets=["bcfw_figure2_ocr", "mine.yaml"], methods=[
        {"words": ["solver=bcfw", "solver.sampling=permutation"], "label": "P"}],
        source=None, overwrite_committed=False, overrides=["hydra/launcher=local"])
    words = detach.child_command(args, "smoke", "out")
    assert words[1:4] == ["-m", "ssvmbench", "reproduce"] and "--detach" not in words
    assert words[4] == "bcfw_figure2_ocr" and words[5].endswith("/mine.yaml")
    assert words[6:10] == ["--size", "smoke", "--out", str(Path("out").resolve())]
    assert words[10:] == ["--with", "solver=bcfw", "solver.sampling=permutation", "--as", "P",
                          "--overrides", "hydra/launcher=local"]


def test_a_detached_reproduce_returns_and_its_report_appears(data_root, tmp_path):
    """The command returns at once; the batch, figures and report follow in a process of
    their own session, whose messages go to OUT/reproduce.log."""
    out = tmp_path / "out"
    start = time.time()
    result = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
                       "--detach", cwd=tmp_path, timeout=300)
    returned_s = time.time() - start
    assert "detached: process" in result.stdout and "ssvmbench status" in result.stdout
    assert not (out / "report.md").exists()
    assert _wait_for(out / "report.md"), (out / "reproduce.log").read_text()[-2000:]
    assert returned_s < 60
    log = (out / "reproduce.log").read_text()
    assert "Traceback" not in log and "ssvmbench report" in log
    assert not (out / "reproduce.lock").exists()
    again = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
                      cwd=tmp_path, timeout=300)
    assert "done before" in again.stdout


def test_finish_says_which_runs_did_not_finish(data_root, tmp_path):
    """The job after a detached SLURM array: no figures while a run is unfinished."""
    out = tmp_path / "out"
    result = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
                       "--finish", cwd=tmp_path, check=False, timeout=300)
    assert result.returncode == 1 and "did not finish, so no figures or report yet" in \
        result.stderr and "(not started)" in result.stderr
    assert not (out / "report.md").exists()
