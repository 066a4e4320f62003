"""A plot's folder: from the run logs under the DIRs of the plot options, the figures (one
per ``--y``), ``summary.md`` / ``.csv``, ``provenance.csv``, SAP's best-within tables, the
interactive page and the per-pass traces they are all drawn from (:mod:`ssvmbench.run.traces`).
What ``ssvmbench plot`` (:mod:`ssvmbench.cli.plot`) and ``reproduce``'s plot steps write."""

import os
import warnings
from pathlib import Path

import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_atomically, write_text
from ssvmbench.plotting import html
from ssvmbench.plotting.curves import (ADDED, NO_REFERENCE, add_suboptimality, added_labels,
                                       aggregate, check_panels, curve_labels,
                                       loose_references_counted, provenance, summary)
from ssvmbench.plotting.figures import (FIGURES, HTML, added_methods, draw, interactive, markdown,
                                        only, read_optimum)
from ssvmbench.plotting.names import curves_table, figure_names
from ssvmbench.plotting.sap_tables import best_within, latex
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.run import traces
from ssvmbench.run.runlog import load_logs


@loose_references_counted()
def write(args, mapping, paper_rows):
    """Write the figures, tables and traces of the plot ``args`` (the plot options,
    :mod:`ssvmbench.plotting.options`) and return their paths: curves named by ``mapping``
    (``{label or pattern: name}``, :mod:`ssvmbench.plotting.names`), SAP's tables beside
    ``paper_rows`` (:func:`~ssvmbench.plotting.sap_tables.best_within`)."""
    logged = with_added(load_logs(*args.logs), args.added or [])
    check_panels(logged)
    df = add_suboptimality(logged, read_optimum(args.optimum))
    if args.methods:
        df = only(df, args.methods)
    out = Path(args.out) if args.out else default_out(args.logs[0])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the output directory {out} ({err}); choose another -o")
    traces.write(logged, out / traces.NAME)
    if "suboptimality" in args.y:
        for (data, lam), _ in df[df["reference"] == NO_REFERENCE].groupby(["data", "lambda"]):
            warnings.warn(f"{data}, lambda={lam:g}: no dual objective in these logs, so no "
                          "suboptimality curve; plot --y primal, add a run with a dual (e.g. "
                          "BCFW) or give --optimum FILE.csv")
    stats = {y: aggregate(df, y, args.x) for y in args.y}
    names = figure_names(stats.values(), mapping, added_labels(df))
    styles = curve_styles(list(names), names, added_methods(df))
    written = []
    for y in args.y:
        ylabel, log_y = FIGURES[y]
        fig = draw(stats[y], args.x, ylabel, log_y, styles, args.band, names)
        for fmt in args.format:
            written.append(out / f"{y}.{fmt}")
            write_atomically(written[-1], lambda file: fig.savefig(file, dpi=150, format=fmt))
    table = _relative_runs(summary(df), out)
    written += [out / "provenance.csv", out / "summary.csv", out / "summary.md"]
    write_text(written[-3], _relative_runs(provenance(df), out).to_csv(index=False))
    write_text(written[-2], table.to_csv(index=False))
    behind = markdown(curves_table(df.assign(method=curve_labels(df)), names,
                                   added_methods(df)))
    write_text(written[-1], f"Curves (their name in the figures, the runs and the settings they "
               f"share):\n\n{behind}\nRuns (the last checkpoint of each):\n\n"
               + markdown(table.drop(columns="run")))
    if args.best_within is not None:
        metrics = [y for y in args.y if y.startswith("test_") and y != "test_error"]
        best = best_within(df, args.best_within, paper_rows,
                           (metrics or ["test_metric"])[0])
        written += [out / "best_within.md", out / "best_within.tex"]
        write_text(written[-2], markdown(best))
        write_text(written[-1], latex(best))
    if args.html:
        written.append(out / HTML)
        body = "\n".join(f"<h2>{html.markup(FIGURES[y][0])}</h2>\n{html.figure_html(fig)}"
                         for y, fig in interactive(df, args.y, args.x, args.band,
                                                 mapping=mapping).items())
        runs = _relative_runs(provenance(df), out)
        write_text(written[-1], html.page(f"ssvmbench plot {' '.join(args.logs)}",
                                          f"{body}\n<h2>Runs</h2>\n{html.runs_html(runs)}"))
    written.append(out / traces.NAME)
    return written


def with_added(logged, added):
    """The rows ``logged`` and those of each added method of ``added`` (``[[LABEL, DIR,
    ...]]``, ``plot --added``), whose ``method`` and :data:`ADDED` column are its label."""
    frames = [logged]
    for label, *sources in added:
        if not sources:
            raise UserError(f"--added {label}: give the label, then the folders of its runs")
        if label in set(logged["method"].dropna()) | set(curve_labels(logged)):
            raise UserError(f"--added {label}: a curve of the other runs has that name; "
                            "give the added method another label")
        frames.append(load_logs(*sources).assign(method=label, **{ADDED: label}))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else logged


def default_out(first):
    """Where figures go without ``-o``: ``FIRST/figures`` (the folder the runs' ``next:``
    line names), or beside a traces file; refused if that folder holds files that are not an
    earlier plot's (no ``traces.parquet``)."""
    first = Path(first)
    out = first.parent if traces.is_traces(first) else first / "figures"
    if out.is_dir() and any(out.iterdir()) and not (out / traces.NAME).exists():
        raise UserError(f"{out} holds files that plot did not write; give -o OUTDIR")
    return out


def _relative_runs(table, out):
    """``table`` with its run log paths relative to the output directory, so that tables
    stay valid when the results directory is moved or committed."""
    return table.assign(run=[os.path.relpath(run, out) for run in table["run"]])


