"""``ssvmbench results DIR``: one row per run found under the DIRs (run folders, sweep folders,
a figure folder's ``traces.parquet``: the roots ``plot`` reads) — the settings that vary
across the runs, the run's status, its passes and its last checkpoint's primal, duality gap,
test metrics, the result columns its solver declares (SAP's #NZ, l1, rho1:
:mod:`ssvmbench.solvers.result_columns`) and solver seconds; ``--csv`` / ``--parquet`` export the
same table."""

import math
from pathlib import Path

import h5py
import pandas as pd
import yaml

from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_atomically
from ssvmbench.run import runlog, traces
from ssvmbench.solvers import result_columns

# the run log's metadata columns that already hold a setting, as resolved (lambda=1/n is
# the number it came to): an override of that key adds no column of its own
RESOLVED = ("solver", "data", "lambda", "seed")
RESULTS = ("status", "passes", "primal", "gap", "time_s")     # with the test metrics


def overrides_of(value):
    """``{key: value}`` of a run's recorded overrides (a YAML list of ``key=value``), the
    run-control keys left out (:func:`runlog.setting_words`); values as YAML reads them."""
    if not isinstance(value, str):
        return {}
    settings = {}
    for word in runlog.setting_words(value):
        _, sep, text = word.partition("=")
        if sep:
            key = runlog.override_key(word)
            try:
                settings[key] = yaml.safe_load(text)
            except yaml.YAMLError:
                settings[key] = text
    return settings


def settings(runs):
    """``(varied, constant)`` of the runs' command-line settings: ``varied`` a DataFrame,
    one column per key whose value differs between the ``runs`` (a Series of recorded
    overrides, one per run), missing where a run did not set it; ``constant`` the
    ``{key: value}`` that every run set alike."""
    table = pd.DataFrame([overrides_of(value) for value in runs], index=runs.index)
    varied, constant = {}, {}
    for key in table.columns:
        values = table[key].map(repr)            # lists and dicts compare too
        if values.nunique(dropna=False) > 1 or table[key].isna().any():
            varied[key] = table[key].astype(object).where(table[key].notna(), None)
        else:
            value = table[key].iloc[0]
            constant[key] = value.item() if hasattr(value, "item") else value
    return pd.DataFrame(varied, index=runs.index), constant


def load_logs(*roots):
    """Every row of every run log under the ``roots`` (:func:`ssvmbench.run.runlog.load_logs`'s
    tidy table: one row per run, iterate and checkpoint) with one more column per setting
    that varies across the runs (``solver.passes``, ``data.subset``, ...: the overrides the
    runs were given; ``solver``, ``data``, ``lambda`` and ``seed`` are there already)."""
    table = runlog.load_logs(*_existing(roots))
    per_run = table.drop_duplicates("run").set_index("run")["overrides"]
    varied, _ = settings(per_run)
    varied = varied.drop(columns=[key for key in varied if key in table])
    return table.join(varied, on="run")


def _existing(roots):
    """``roots`` checked: each one exists (one line naming the first that does not)."""
    if not roots:
        raise UserError("give a run folder, a sweep folder or a traces.parquet")
    for root in roots:
        if not Path(root).exists():
            raise UserError(f"{root}: no such file or folder; give a run or sweep folder "
                            "(results/runs/..., results/sweeps/...) or a traces.parquet")
    return [str(root) for root in roots]


def table(*roots, iterate=None):
    """One row per run under the ``roots``: the settings that vary across them, ``status``
    (finished, interrupted, failed, diverged, skipped, running, or killed: a log that says
    running but that no process writes), ``passes`` done, and at the last checkpoint of
    ``iterate`` (default: each run's first, ``raw``) its ``primal``, ``gap`` (with a dual),
    every ``test_*`` metric logged, the columns its solver shows (``Solver.shows``: SAP's
    ``nnz``, ``l1``, ``rho1``) and the solver's ``time_s``; ``run`` is the log. The
    settings every run shares are ``table.attrs["constant"]`` (``{key: value}``)."""
    roots = _existing(roots)
    rows, logged = _with_rows(roots, iterate)
    empty = [_without_rows(path) for root in roots if not traces.is_traces(root)
             for path in runlog.find_logs(root) if str(path) not in logged]
    frames = [frame for frame in (rows, pd.DataFrame([r for r in empty if r is not None]))
              if len(frame)]
    if not frames:
        raise UserError(f"no run logs (*.h5) or traces (*.parquet) under {', '.join(roots)}; "
                        "run `ssvmbench run ...` first or check the path")
    runs = pd.concat(frames, ignore_index=True)
    runs = runs.sort_values("run", kind="stable").reset_index(drop=True)
    runs["status"] = [_live(status, run) for status, run in zip(runs["status"], runs["run"])]
    varied, constant = settings(runs["overrides"])
    varied = varied.drop(columns=[key for key in RESOLVED if key in varied])
    resolved = [key for key in RESOLVED if key in runs and runs[key].astype(str).nunique() > 1]
    metrics = sorted(column for column in runs if column.startswith("test_")
                     and column != "test_metric" and runs[column].notna().any())
    shows = [column for column in result_columns.shown(runs["solver"].dropna().unique())
             if column not in varied]           # a varied rho1 is its column already
    runs = runs.assign(**result_columns.values(runs, shows)) if shows else runs
    columns = [*resolved, *varied.columns, "status", "passes", "primal", "gap", *metrics,
               *shows, "time_s", "run"]
    result = pd.concat([varied, runs.drop(columns=list(varied), errors="ignore")], axis=1)
    result = result.reindex(columns=columns)
    result.attrs["constant"] = constant
    return result


def _with_rows(roots, iterate=None):
    """``(last checkpoints, runs read)``: the last checkpoint of each run's first iterate
    (or of ``iterate``; a run without it has none), and the paths of every run with rows.
    An ``iterate`` no run logged is one line naming those they did."""
    try:
        rows = runlog.load_logs(*roots)
    except runlog.NoLogs:                  # no rows at all: the logs without rows may remain
        return pd.DataFrame(), set()
    logged = set(rows["run"])
    if iterate is not None and iterate not in set(rows["iterate"]):
        raise UserError(f"--iterate {iterate}: no run under {', '.join(roots)} logged it; "
                        f"their iterates: {', '.join(rows['iterate'].unique())}")
    chosen = (rows.groupby("run", sort=False)["iterate"].transform("first")
              if iterate is None else iterate)
    last = rows[rows["iterate"] == chosen].groupby("run", sort=False).tail(1)
    return last.assign(passes=last["effective_pass"]).reset_index(drop=True), logged


def _without_rows(path):
    """The attributes of a log with no checkpoint (skipped, or failed or stopped before
    one), as a row without results; None if it does not read."""
    try:
        _, attrs = runlog.read_log(path)
    except (OSError, KeyError, ValueError, RuntimeError):
        return None
    return {**{key: attrs.get(key) for key in runlog.METADATA}, "passes": 0.0,
            "run": str(path)}


def _live(status, run):
    """``status``, with a log that says ``running`` but that no process holds (HDF5 locks a
    log being written) called ``killed``."""
    if status != "running" or not Path(run).is_file():
        return status
    try:
        with h5py.File(run, "r"):
            return "killed"
    except (BlockingIOError, OSError):
        return status


def text(result, root=None):
    """The table as the terminal shows it: the constant settings on one line, then one
    line per run (the run's log relative to ``root`` only when the settings shown do not
    tell the runs apart)."""
    constant = result.attrs.get("constant", {})
    shown = result.drop(columns="run")
    keys = [c for c in shown.columns if c not in RESULTS and not c.startswith("test_")
            and c not in result_columns.COLUMNS]
    told = pd.Series([repr(tuple(row)) for row in shown[keys].itertuples(index=False)])
    if told.duplicated().any():
        shown = shown.assign(run=[_relative(run, root) for run in result["run"]])
    formats = {"passes": "{:.4g}", "primal": "{:.6g}", "gap": "{:.3g}", "time_s": "{:.3g}",
               **{column: f"{{:{spec}}}" for column, (_, _, spec)
                  in result_columns.COLUMNS.items()}}
    cells = shown.astype(object).copy()
    for column in shown.columns:
        pattern = formats.get(column, "{:.4g}" if column.startswith("test_") else None)
        cells[column] = [_cell(value, pattern) for value in shown[column]]
    lines = []
    if constant:
        lines.append("settings of every run: "
                     + ", ".join(f"{key}={_cell(value)}" for key, value in constant.items()))
    labels = {column: label for column, (label, _, _) in result_columns.COLUMNS.items()}
    lines.append(cells.rename(columns={"time_s": "time (s)", **labels}).to_string(index=False))
    return "\n".join(lines)


def _cell(value, pattern=None):
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if pattern and isinstance(value, (int, float)) and not isinstance(value, bool):
        return pattern.format(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _relative(run, root):
    try:
        return str(Path(run).relative_to(root)) if root else run
    except ValueError:
        return run


def configure_parser(parser):
    parser.add_argument("logs", nargs="+", metavar="DIR",
                        help="run folders, sweep folders or traces files (traces.parquet), "
                             "as for `ssvmbench plot`")
    parser.add_argument("--iterate", metavar="NAME",
                        help="the iterate whose last checkpoint is shown, e.g. wavg "
                             "(default: each run's first, raw)")
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    parser.add_argument("--parquet", metavar="FILE", help="also write the table as Parquet")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing --csv / --parquet file (refused otherwise)")


def main(args):
    exports = {path: kind for kind, path in (("csv", args.csv), ("parquet", args.parquet))
               if path}
    for path in exports:
        if Path(path).exists() and not args.overwrite:
            raise UserError(f"{path} exists; give another file or --overwrite to replace it")
    result = table(*args.logs, iterate=args.iterate)
    root = args.logs[0] if len(args.logs) == 1 and Path(args.logs[0]).is_dir() else None
    print(text(result, root))
    for path, kind in exports.items():
        export(result, path, kind)
        print(f"wrote {path}")
    return 0


def export(result, path, kind):
    """Write the table (with the settings every run shares as columns too) atomically as
    ``kind`` (csv or parquet)."""
    full = result.assign(**{key: [value] * len(result)
                            for key, value in result.attrs.get("constant", {}).items()
                            if key not in result})
    full.attrs = {}                                    # not into the Parquet metadata
    for column in full.columns[full.dtypes == object]:      # one Parquet type per column
        present = full[column].dropna()
        numeric = pd.to_numeric(present, errors="coerce").notna().all() and not any(
            isinstance(value, (str, bool)) for value in present)
        full[column] = pd.to_numeric(full[column]) if numeric else full[column].map(
            lambda value: None if value is None or value is pd.NA else str(value))
    if kind == "csv":
        write_atomically(path, lambda out: out.write(full.to_csv(index=False).encode()))
    else:
        write_atomically(path, lambda out: full.to_parquet(out, index=False))
