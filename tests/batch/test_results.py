"""``ssvmbench results``, ``ssvmbench.load_logs``, ``api.sweep`` and ``--version``."""

import importlib.metadata
import math
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ssvmbench
from ssvmbench.batch import results
from ssvmbench.cli import main
from ssvmbench.run import traces
from ssvmbench.run.runlog import RunLog, write_skipped

ROOT = Path(__file__).resolve().parents[2]


def fake_run(folder, overrides, status="finished", passes=3, dual=True):
    """A run log as a run writes it: two iterates, ``passes`` checkpoints (none: no rows),
    ending with ``status``."""
    folder.mkdir(parents=True)
    given = dict(word.split("=") for word in overrides)
    solver, seed = given.get("solver", "bcfw"), int(given.get("seed", 0))
    attrs = {"overrides": overrides, "solver": solver, "method": solver, "data": "ocr",
             "data_variant": "v", "lambda": 0.01, "l1": 0.0, "seed": seed, "n": 10,
             "test_metric": "accuracy"}
    if status == "skipped":
        write_skipped(folder / "run.h5", attrs, "cannot run here")
        return
    log = RunLog(folder / "run.h5", attrs)
    for k in range(1, passes + 1):
        primal = [1.0 / k + seed, 0.5 / k + seed]
        log.append({"iterate": ["raw", "wavg"], "effective_pass": [float(k)] * 2,
                    "primal": primal, "dual": [p - 0.1 / k if dual else np.nan for p in primal],
                    "gap": [0.1 / k if dual else np.nan] * 2,
                    "test_accuracy": [0.5 + k / 10, 0.6 + k / 10],
                    "test_error": [0.5 - k / 10, 0.4 - k / 10], "time_s": [2.0 * k] * 2})
    if status == "running":              # killed: the file closed without a final status
        log.file.close()
    else:
        log.close(status, "stopped" if status != "finished" else None)


@pytest.fixture
def sweep(tmp_path):
    """A sweep folder: bcfw and ssg at two seeds, every status a run can end with."""
    root = tmp_path / "sweep"
    common = ["data=ocr", "solver.passes=3"]
    fake_run(root / "a", ["solver=bcfw", "seed=0", *common])
    fake_run(root / "b", ["solver=bcfw", "seed=1", *common])
    fake_run(root / "c", ["solver=ssg", "seed=0", *common], dual=False, passes=2,
             status="interrupted")
    fake_run(root / "d", ["solver=ssg", "seed=1", *common], passes=0, status="failed")
    fake_run(root / "e", ["solver=ssg", "seed=2", "solver.step=0.1", *common],
             status="running", passes=1)
    fake_run(root / "f", ["solver=fw", "seed=0", *common], status="skipped")
    return root


def test_one_row_per_run_with_the_settings_that_vary(sweep):
    table = results.table(sweep)
    assert list(table.columns) == ["solver", "seed", "solver.step", "status", "passes",
                                   "primal", "gap", "test_accuracy", "test_error", "time_s",
                                   "run"]
    assert table.attrs["constant"] == {"data": "ocr", "solver.passes": 3}
    assert list(table["solver"]) == ["bcfw", "bcfw", "ssg", "ssg", "ssg", "fw"]
    assert list(table["status"]) == ["finished", "finished", "interrupted", "failed", "killed",
                                     "skipped"]
    assert list(table["passes"]) == [3, 3, 2, 0, 1, 0]
    first = table.iloc[0]                              # the last checkpoint of raw
    assert (first.primal, first.gap, first.test_accuracy, first.time_s) == pytest.approx(
        (1 / 3, 0.1 / 3, 0.8, 6.0))
    assert math.isnan(table.iloc[2].gap)              # no dual logged: no gap
    assert table["solver.step"].tolist() == [None] * 4 + [0.1, None]
    wavg = results.table(sweep, iterate="wavg")
    assert wavg.iloc[0].primal == pytest.approx(0.5 / 3)


def test_the_command_prints_the_table_and_exports_it(sweep, tmp_path, capsys):
    csv, parquet = tmp_path / "runs.csv", tmp_path / "runs.parquet"
    assert main(["results", str(sweep), "--csv", str(csv), "--parquet", str(parquet)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "settings of every run: data=ocr, solver.passes=3"
    assert out[1].split() == ["solver", "seed", "solver.step", "status", "passes", "primal",
                              "gap", "test_accuracy", "test_error", "time", "(s)"]
    assert out[2].split() == ["bcfw", "0", "finished", "3", "0.333333", "0.0333", "0.8",
                              "0.2", "6"]
    assert out[-2:] == [f"wrote {csv}", f"wrote {parquet}"]
    for written in (pd.read_csv(csv), pd.read_parquet(parquet)):
        assert len(written) == 6 and set(written["data"]) == {"ocr"}
        assert written["primal"].iloc[0] == pytest.approx(1 / 3)
    before = csv.read_bytes()
    assert main(["results", str(sweep), "--csv", str(csv)]) == 2     # kept, not overwritten
    assert "exists; give another file or --overwrite" in capsys.readouterr().err
    assert csv.read_bytes() == before
    assert main(["results", str(sweep / "a"), "--csv", str(csv), "--overwrite"]) == 0
    assert len(pd.read_csv(csv)) == 1


def test_runs_the_settings_do_not_tell_apart_are_named(tmp_path, capsys):
    fake_run(tmp_path / "x" / "one", ["solver=bcfw"])
    fake_run(tmp_path / "x" / "two", ["solver=bcfw"])
    assert main(["results", str(tmp_path / "x")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].endswith(" one/run.h5") and lines[-1].endswith(" two/run.h5")


def test_a_traces_file_gives_the_same_rows(sweep, tmp_path):
    from ssvmbench.run.runlog import load_logs
    traces.write(load_logs(sweep), tmp_path / "traces.parquet")
    table = results.table(tmp_path / "traces.parquet")
    assert list(table["status"]) == ["finished", "finished", "interrupted", "killed"]
    assert list(table["solver.step"].fillna(-1)) == [-1, -1, -1, 0.1]


@pytest.mark.parametrize("where, message", [
    ("missing", "missing: no such file or folder; give a run or sweep folder"),
    ("empty", "no run logs (*.h5) or traces (*.parquet) under")])
def test_a_bad_directory_is_one_line(tmp_path, capsys, where, message):
    (tmp_path / "empty").mkdir()
    assert main(["results", str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


def test_load_logs_at_the_top_level_has_a_column_per_varied_setting(sweep):
    table = ssvmbench.load_logs(sweep)
    assert "solver.step" in table and "solver.passes" not in table      # constant: no column
    assert set(table.loc[table["seed"] == 2, "solver.step"]) == {0.1}
    assert table.loc[table["seed"] != 2, "solver.step"].isna().all()
    assert {"effective_pass", "primal", "iterate", "run"} <= set(table.columns)


def test_import_ssvmbench_stays_light():
    """``load_logs`` is imported on first use, as ``ChainSSVM`` is."""
    code = "import sys, ssvmbench; print('ssvmbench.batch.results' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_version_has_one_source(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ssvmbench {ssvmbench.__version__}\n"
    assert importlib.metadata.version("ssvmbench") == ssvmbench.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]


def test_a_sweep_from_python(data_root, tmp_path, monkeypatch):
    """``api.sweep`` runs the runs of ``run -m`` into their folders and returns the table;
    a bad value is one error before any folder is made."""
    from ssvmbench import api
    from ssvmbench.common.errors import UserError
    from ssvmbench.run.compose import run_dirname

    monkeypatch.chdir(tmp_path)
    grid = {"solver": ["bcfw", "ssg"], "data": "ocr", "+data.subset": 0.05,
            "solver.passes": 1, "data.root": str(data_root)}
    table = api.sweep(grid, sweep_dir="s")
    assert list(table["solver"]) == ["bcfw", "ssg"] and set(table["status"]) == {"finished"}
    assert table.attrs["constant"]["solver.passes"] == 1
    assert sorted(p.name for p in Path("s").iterdir() if p.is_dir()) == [
        run_dirname(f"+data.subset=0.05,data.root={data_root},data=ocr,solver.passes=1,"
                    f"solver={s}") for s in ("bcfw", "ssg")]
    folders = sorted(p for p in Path("s").iterdir() if p.is_dir())
    assert all(p.name.startswith(f"solver-{s}_data-ocr_root-{Path(data_root).name}_subset-0.05_"
                                 "passes-1_") for p, s in zip(folders, ("bcfw", "ssg")))
    with pytest.raises(UserError, match="lambda=abc is not a number"):
        api.sweep(["solver=bcfw", "lambda=0.1,abc"], sweep_dir="bad")
    assert not Path("bad").exists()


def test_sap_runs_show_their_nnz_and_l1():
    """Issue 33: SAP shows #NZ, l1 and rho1 wherever its results are; its solver declares
    them (``Solver.shows``), a varied rho1 keeps its one column, BCFW's table has none."""
    committed = ROOT / "results" / "reproduction"
    sap = results.table(committed / "sap_figure3" / "traces.parquet")
    assert list(sap.columns).count("rho1") == 1 and {"nnz", "l1"} <= set(sap.columns)
    assert sap["nnz"].dtype == "Int64" and (sap["nnz"] > 0).all()
    assert (sap["l1"] / (sap["lambda"] + sap["l1"])).round(6).tolist() == \
        sap["rho1"].astype(float).tolist()
    assert "#NZ" in results.text(sap).splitlines()[1]
    bcfw = results.table(committed / "bcfw_figure4_conll" / "traces.parquet")
    assert not {"nnz", "l1", "rho1"} & set(bcfw.columns)


def test_an_iterate_no_run_logged_names_those_they_did(sweep, capsys):
    """Issue 47: ``--iterate nosuch`` said 'no run logs ... run `ssvmbench run ...` first'
    although the logs are there; now it names the iterates they logged."""
    assert main(["results", str(sweep), "--iterate", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err == (f"ssvmbench results: error: --iterate nosuch: no run under {sweep} logged "
                   "it; their iterates: raw, wavg\n")


def test_an_unreadable_traces_file_is_named_with_the_readers_reason(sweep, tmp_path, capsys):
    """Issue 47: a corrupt traces.parquet said 'no run logs ...' too; now it is named with
    the Parquet reader's reason, as ``report`` and ``plot`` name it."""
    from ssvmbench.run.runlog import load_logs
    path = tmp_path / "traces.parquet"
    traces.write(load_logs(sweep), path)
    path.write_bytes(path.read_bytes()[:200])
    assert main(["results", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ssvmbench results: error: cannot read the traces {path} (")
    assert "ArrowInvalid" in err and len(err.splitlines()) == 1


def test_one_run_drawn_in_two_figures_has_one_path(sweep, tmp_path):
    """The report counts a run shared by two presets once (its compute line said 925 runs
    where the committed traces hold 756): traces files in two figure folders beside one logs
    folder name each run by the same path."""
    from ssvmbench.run.runlog import load_logs
    logs = tmp_path / "logs"
    shutil.copytree(sweep, logs)
    for figure in ("fig1", "fig2"):
        traces.write(load_logs(logs), tmp_path / figure / "traces.parquet")
    one, two = (set(traces.read(tmp_path / figure / "traces.parquet")["run"])
                for figure in ("fig1", "fig2"))
    assert one == two and len(one) == 4
