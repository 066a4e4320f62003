"""Per-pass traces of a figure in one Parquet file: what committed figures and checks are
drawn from, so that anyone can re-derive them without the run logs.

``ssvmbench plot LOGS -o DIR`` writes ``DIR/traces.parquet``: every row of every run log it
read (:func:`ssvmbench.run.runlog.load_logs`' table: one row per run, iterate and checkpoint;
the logged columns — ``effective_pass``, ``primal``, ``dual``, ``gap``, ``test_*``,
``oracle_calls``, ``time_s``, ``nnz``... — and the run's metadata — ``solver``, ``method``,
``data``, ``data_variant``, ``lambda``, ``l1``, ``n``, ``seed``, ``status``, ``loss``,
``objective``, ``overrides``, ``git_revision``, ``dataset_checksum``, ``started``,
``finished``), with ``run``, the log's path, relative to ``DIR``. Columns a run did not log
are empty. ``plot``, ``report`` and :func:`ssvmbench.run.runlog.load_logs` read a traces file
wherever they read a folder of logs, so ``ssvmbench plot DIR/traces.parquet -o DIR`` redraws
the figures and ``ssvmbench report`` re-derives the checks from it.
"""

import os
from pathlib import Path

import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_atomically

NAME = "traces.parquet"     # a figure folder's traces
SUFFIX = ".parquet"


def is_traces(path):
    return Path(path).suffix == SUFFIX


def write(df, path):
    """Write the rows ``df`` (a ``load_logs`` table) to ``path``, run paths relative to its
    folder; zstd-compressed, so a preset's thousands of checkpoints take a few hundred kB."""
    path = Path(path)
    runs = [os.path.relpath(run, path.parent) for run in df["run"]]
    table = df.assign(run=runs).reset_index(drop=True)
    for column in table.columns[table.dtypes == object]:
        # metadata a run may lack (pd.NA): strings stay strings, the rest become numbers
        table[column] = _one_type(table[column])
    write_atomically(path, lambda out: table.to_parquet(out, index=False, compression="zstd"))


def read(path):
    """The ``load_logs`` table of a traces file, run paths as written, joined to its folder
    and normalised (which only names them: the logs need not exist), so that one run drawn
    in two figures has one path (``a/fig1/../logs/r`` and ``a/fig2/../logs/r`` are
    ``a/logs/r``)."""
    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read the traces {path} ({type(err).__name__}: {err}); "
                        "write them again with `ssvmbench plot LOGS -o DIR`") from None
    table["run"] = [os.path.normpath(Path(path).parent / run) for run in table["run"]]
    return table


def _one_type(column):
    """An object column as one Parquet type: strings (missing values kept), else numbers."""
    present = column.dropna()
    if len(present) and all(isinstance(value, str) for value in present):
        return column.astype("string")
    try:
        return pd.to_numeric(column)
    except (TypeError, ValueError):
        return column.astype("string")
