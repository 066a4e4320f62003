"""Issue 33: SAP's #NZ, l1 and rho1 wherever its results are shown (the finish line of a run
and of a batch, plot's summary), declared by the solver (``Solver.shows``)."""

import numpy as np
import pandas as pd
import pytest

from ssvmbench.batch import jobs as batch
from ssvmbench.common.errors import UserError
from ssvmbench.plotting.curves import summary
from ssvmbench.run.runlog import RunLog, load_logs
from ssvmbench.run.runner import finished_summary
from ssvmbench.solvers import result_columns
from ssvmbench.solvers.sap import SAP

LAM, L1 = 0.001, 0.009        # rho1 = 0.9


def write_log(run_dir, solver, l1=L1):
    run_dir.mkdir(parents=True)
    attrs = {"solver": solver, "method": solver, "data": "ocr", "data_variant": "v",
             "lambda": LAM, "l1": l1, "seed": 0, "test_metric": "accuracy", "jit_s": 0.5}
    with RunLog(run_dir / "run.h5", attrs) as log:
        for p, nnz in ((1, 25), (2, 37)):
            log.append({"iterate": ["raw"], "effective_pass": [float(p)],
                        "oracle_calls": [p * 10], "time_s": [0.1 * p], "eval_time_s": [0.01],
                        "primal": [1.0 / p], "dual": [0.4], "gap": [1.0 / p - 0.4],
                        "train_loss": [0.1], "test_error": [0.2], "test_metric": [0.8],
                        "nnz": [nnz]})
    return run_dir / "run.h5"


def test_the_finish_lines_show_what_sap_declares(tmp_path):
    """A SAP run's finish line says its #NZ, l1 and rho1; BCFW's, which declares nothing,
    stays as it was."""
    sap = write_log(tmp_path / "sap", "sap")
    bcfw = write_log(tmp_path / "bcfw", "bcfw", l1=0.0)
    since = ("2000-01-01T00:00:00+00:00", "2000-01-01 00:00:00")
    kind, text = batch.outcome(batch.Job((), sap.parent), 0, since)
    assert (kind, text) == ("finished", "2 passes, primal 0.5, 0.2 s, #NZ 37, l1 0.009, rho1 0.9")
    assert batch.outcome(batch.Job((), bcfw.parent), 0, since) == (
        "finished", "2 passes, primal 0.5, 0.2 s")
    lines = finished_summary(sap, tmp_path).splitlines()
    assert lines[1] == ("  raw    primal 0.5  dual 0.4  gap 0.1  test accuracy 0.8  #NZ 37  "
                        "l1 0.009  rho1 0.9")
    assert finished_summary(bcfw, tmp_path).splitlines()[1].endswith("test accuracy 0.8")


def test_plots_summary_shows_them_for_every_run_beside_sap(tmp_path):
    """summary.csv / .md: #NZ, l1 and rho1 after the test metric when a solver of the table
    declares them (the L2 SSVM beside SAP: l1 = rho1 = 0), as integers for counts."""
    write_log(tmp_path / "sap", "sap")
    write_log(tmp_path / "bcfw", "bcfw", l1=0.0)
    table = summary(load_logs(tmp_path))
    columns = list(table.columns)
    assert columns[columns.index("test_metric") + 1:columns.index("time_s")] == [
        "nnz", "l1", "rho1"]
    rows = table.set_index("solver")
    assert rows.loc["sap", ["nnz", "l1", "rho1"]].tolist() == pytest.approx([37, L1, 0.9])
    assert rows.loc["bcfw", ["nnz", "l1", "rho1"]].tolist() == [37, 0.0, 0.0]
    assert str(table["nnz"].dtype) == "Int64"
    alone = summary(load_logs(tmp_path / "bcfw"))
    assert not {"nnz", "l1", "rho1"} & set(alone.columns)


def test_a_solver_declaring_an_unknown_column_is_told_which_exist(monkeypatch):
    monkeypatch.setattr(SAP, "shows", ("nnz", "sparsity"))
    with pytest.raises(UserError, match=r"solver sap declares .*'sparsity'.* among \['nnz'"):
        result_columns.shown(["sap"])
    assert result_columns.shown(["a plugin not installed"]) == []


def test_values_of_a_row_without_l1_or_nnz():
    """Logs from before l1 or nnz were logged: l1 counts 0, a missing #NZ is left out."""
    row = {"lambda": 0.1, "l1": np.nan}
    assert result_columns.parts(row, ["nnz", "l1", "rho1"]) == ["l1 0", "rho1 0"]
    table = pd.DataFrame({"lambda": [0.1], "nnz": [12.0]})
    assert result_columns.values(table, ["nnz", "rho1"])["rho1"].tolist() == [0.0]
