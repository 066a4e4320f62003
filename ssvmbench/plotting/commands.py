"""``ssvmbench plot DIR -o OUTDIR``: BCFW Figures 1-3 style panels, a summary table and the
per-pass traces they are drawn from (:mod:`ssvmbench.traces`)."""

import math
import os
import textwrap
import warnings
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from ssvmbench import traces
from ssvmbench.errors import UserError
from ssvmbench.files import write_atomically, write_text
from ssvmbench.metrics import registered as registered_metrics
from ssvmbench.plotting import html
from ssvmbench.plotting.curves import (ADDED, BANDS, DERIVED, NO_REFERENCE, OBJECTIVE, PANEL,
                                      add_suboptimality, added_labels, added_rows, aggregate,
                                      check_panels, curve_labels,
                                      loose_references_counted, provenance, summary,
                                      with_bands)
from ssvmbench.plotting.layout import LABEL_WIDTH, TITLE_WIDTH, legend_below, wrap
from ssvmbench.plotting.names import curves_table, figure_names
from ssvmbench.presets import load_names
from ssvmbench.plotting.sap_tables import best_within, latex
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.plotting.ticks import log_ticks
from ssvmbench.runlog import load_logs

HTML = "figures.html"   # --html: the figures as one interactive page
X_LABELS = {"effective_pass": "effective passes", "oracle_calls": "oracle calls",
            "time_s": "solver time (s)"}
# column -> (axis label, log scale); `--y` picks the figures (default: BCFW Figures 1-3)
FIGURES = {"suboptimality": ("primal suboptimality", True),
           "primal": ("primal objective", True),
           "gap": ("duality gap", True), "test_error": ("test error (task loss)", False),
           "test_metric": ("test metric (the data's default: accuracy / F1 / AP / 1 - AER)",
                           False),
           **{m.column: (m.label, False) for m in registered_metrics().values()},
           # log: the L2 SSVM's millions of non-zeros beside SAP's thousands (SAP Figures 1-3)
           "nnz": ("non-zero weights (#NZ)", True),
           "nnz_percent": ("non-zero weights (% of d, %NZ)", True)}
# the test error's name where the task loss has one (BCFW Appendix F: AER for word alignment)
TEST_ERROR_NAMES = {"alignment": "test AER"}
# the suboptimality figure's title: what its reference is (curves.add_suboptimality's kinds)
REFERENCES = {"best dual": "the best dual objective in these logs at that λ (the curves "
                           "flatten at its gap)",
              "given optimum": "the optimum given with --optimum"}


def configure_parser(parser):
    parser.add_argument("logs", nargs="+", metavar="DIR",
                        help="directories searched for run logs (*.h5), or traces files "
                             "(a figure folder's traces.parquet, which plot writes)")
    parser.add_argument("-o", "--out", metavar="OUTDIR",
                        help="output directory (created if needed; default: DIR/figures for "
                             "the first DIR, or the folder of a traces file)")
    parser.add_argument("--format", nargs="+", choices=["png", "pdf", "svg"],
                        default=["png", "pdf"], help="figure formats (default: png pdf)")
    parser.add_argument("--x", choices=list(X_LABELS), default="effective_pass",
                        help="x axis (default: effective_pass)")
    parser.add_argument("--optimum", metavar="FILE.csv",
                        help="known optima F* (CSV with columns data,lambda,value) to use "
                             "instead of the best dual objective seen")
    parser.add_argument("--y", nargs="+", choices=list(FIGURES),
                        default=["suboptimality", "test_error"],
                        help="one figure per column (default: suboptimality test_error)")
    parser.add_argument("--band", choices=list(BANDS), default="minmax",
                        help="line and band over seeds: median with min-max (BCFW) or mean "
                             "with one standard deviation (Casimir)")
    parser.add_argument("--best-within", type=float, metavar="PASSES",
                        help="also write best_within.md / .tex: per run the best value of the "
                             "first test metric in --y (e.g. test_accuracy) within the first "
                             "PASSES passes, its #NZ and %%NZ, with the SAP paper's numbers "
                             "where they exist (SAP Tables II-IV)")
    parser.add_argument("--methods", nargs="+", metavar="CURVE",
                        help="plot only these curves, e.g. bcfw bcfw-wavg ssg fw (the "
                             "suboptimality reference still uses every log)")
    parser.add_argument("--names", metavar="PRESET|FILE.yaml",
                        help="name the curves by a preset's names (the paper's: "
                             "SC-SVRG-adapt, not sc_svrg-average-...) or by a YAML file "
                             "mapping curve labels or patterns ({K} matches any text) to "
                             "names; summary.md lists the curves behind each name")
    parser.add_argument("--added", nargs="+", action="append", metavar=("LABEL", "DIR"),
                        help="draw the runs under DIR... (or a traces file) as the method "
                             "LABEL added beside the others: its own colour, its label as "
                             "its name, always drawn (whatever --methods says), and no say "
                             "in the suboptimality reference; repeatable "
                             "(`ssvmbench reproduce --with` uses it)")
    parser.add_argument("--html", action="store_true",
                        help=f"also write OUTDIR/{HTML}: the figures as one interactive page "
                             "(hover, click-to-hide legend, log / linear and x-axis switches, "
                             "each run's config) that works offline")


@loose_references_counted()
def main(args):
    mapping = load_names(args.names) if args.names else {}
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
        fig = _figure(stats[y], args.x, ylabel, log_y, styles, args.band, names)
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
        best = best_within(df, args.best_within, (metrics or ["test_metric"])[0])
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
    for path in written:
        print(path)
    return 0


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


def added_methods(df):
    """The labels of the methods added beside the others (:data:`ADDED`), in order."""
    return sorted(set(df.loc[added_rows(df), ADDED].astype(str))) if ADDED in df else []


def default_out(first):
    """Where figures go without ``-o``: ``FIRST/figures`` (the folder the runs' ``next:``
    line names), or beside a traces file; refused if that folder holds files that are not an
    earlier plot's (no ``traces.parquet``)."""
    first = Path(first)
    out = first.parent if traces.is_traces(first) else first / "figures"
    if out.is_dir() and any(out.iterdir()) and not (out / traces.NAME).exists():
        raise UserError(f"{out} holds files that plot did not write; give -o OUTDIR")
    return out


def lambda_label(lam, n=None):
    """``λ`` as the papers write it: ``0.01``, or ``1/n``, ``0.1/n`` when it is a round
    multiple of ``1/n`` and not round itself (BCFW Figure 1, Casimir Figure 2)."""
    def round_number(value):
        return value > 0 and math.isclose(value, float(f"{value:.1g}"), rel_tol=1e-9)
    if n and not round_number(lam) and round_number(lam * n):
        c = float(f"{lam * n:.1g}")
        return f"{c:g}/n" if c != 1 else "1/n"
    return f"{lam:.3g}"


def _figure(stats, x, ylabel, log_y, styles, band="minmax", names=None):
    """One panel per (data, variant, λ); per method a line and a band over seeds (median
    and min–max, or mean and one standard deviation), named by ``names`` (``{label:
    name}``, :func:`~ssvmbench.plotting.names.paper_names`; default: the label)."""
    names = names or {}
    stats = with_bands(stats)
    center, low, high = BANDS[band]
    panels = sorted_panels(stats)
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(4.5 * ncols, 3.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    show_variant = shows_variant(stats)
    for ax, ((data, variant, lam), panel) in zip(axes, panels):
        panel = panel[(panel[x] > 0) & panel[center].notna()]
        for method, curve in panel.groupby("method"):
            ax.plot(curve[x], curve[center], label=names.get(method, method), **styles[method])
            ax.fill_between(curve[x], curve[low], curve[high], color=styles[method]["color"],
                            alpha=0.2, linewidth=0)
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        if log_y:
            ax.set_yscale("log")
            log_ticks(ax.yaxis)
        ax.set_title(panel_title((data, variant, lam), panel, show_variant), fontsize="medium")
        ax.set(xlabel=X_LABELS[x], ylabel=wrap(panel_ylabel(ylabel, data), LABEL_WIDTH))
        ax.grid(True, alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    if ylabel == FIGURES["suboptimality"][0]:
        kinds = [REFERENCES[kind] for kind in REFERENCES if kind in set(stats["reference"])]
        title = "primal suboptimality: the primal minus " + " or ".join(kinds)
        fig.suptitle(textwrap.fill(title, 60 * ncols), fontsize="small")
    handles = {}                                     # one legend below the panels, not on them
    for ax in axes[:len(panels)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    order = list(dict.fromkeys(names.get(label, label) for label in styles))   # by solver
    handles = dict(sorted(handles.items(), key=lambda item: order.index(item[0])
                          if item[0] in order else len(order)))
    if handles:
        legend_below(fig, list(handles.values()), list(handles))
    return fig


def interactive(df, ys, x, band, prefix="figure", mapping=None):
    """``{y: Plotly figure}``: the figures :func:`main` draws from the rows ``df``
    (:func:`ssvmbench.plotting.html.figure`), curves named by ``mapping`` (a preset's
    ``names``, :func:`~ssvmbench.plotting.names.load_names`), switchable to every x axis of
    :data:`X_LABELS` the rows hold; the figures' ids are ``PREFIX-Y``."""
    xs = {column: label for column, label in X_LABELS.items()
          if column == x or (column in df and (df[column] > 0).any())}
    stats = {}
    for y in ys:
        values = df.assign(**{y: DERIVED[y](df)}) if y in DERIVED else df
        seeds = values.groupby(OBJECTIVE + ["method", "iterate", "effective_pass"],
                               dropna=False)[y].transform("count")     # seeds per point
        stats[y] = aggregate(df.assign(seeds=seeds), y, "seeds")
        for column in xs:
            if column != "effective_pass":
                stats[y][column] = aggregate(df, y, column)[column]
    names = figure_names(stats.values(), mapping or {}, added_labels(df))
    styles = curve_styles(list(names), names, added_methods(df))
    figures = {}
    for y in ys:
        ylabel, log_y = FIGURES[y]
        show_variant = shows_variant(stats[y])
        panels = [(panel_title(key, rows, show_variant), panel_ylabel(ylabel, key[0]),
                   with_bands(rows)) for key, rows in sorted_panels(stats[y])]
        figures[y] = html.figure(panels, xs, x, log_y, styles, band, f"{prefix}-{y}", names)
    return figures


def sorted_panels(stats):
    """``[(panel key, rows)]`` of :func:`aggregate`'s table, λ decreasing per dataset and
    variant, as in BCFW Figure 1."""
    return sorted(stats.groupby(PANEL, dropna=False),
                  key=lambda item: (str(item[0][0]), str(item[0][1]), -item[0][2]))


def shows_variant(stats):
    """Whether panel titles name the data variant (some dataset has several)."""
    return (len(stats[["data", "data_variant"]].drop_duplicates())
            > stats["data"].nunique(dropna=False))


def panel_title(key, panel, show_variant):
    """A panel's title (lines joined by newlines): dataset and λ (λ+λ₁ for elastic-net
    curves), the variant if ``show_variant``, and what differs from the paper's data."""
    data, variant, lam = key
    elastic = panel["method"].str.contains("-rho1=").any()
    n = panel["n"].iloc[0] if "n" in panel and len(panel) else None
    title = (f"{data}, {'λ+λ₁' if elastic else 'λ'}={lambda_label(lam, n)}"
             + (f"\n{wrap(variant, TITLE_WIDTH)}" if show_variant else ""))
    if str(variant).startswith("SYNTHETIC"):     # generated data says so (scenes.py)
        title += "\nSYNTHETIC data, not the paper's"
    if data == "alignment" and n:                # data/alignment.py: not BCFW's training set
        title += f"\nn = {n} gold pairs, not BCFW's 5,000"
    return title


def panel_ylabel(ylabel, data):
    """A panel's y label: the figure's, or the test error's name for that dataset."""
    named = TEST_ERROR_NAMES.get(data) if ylabel == FIGURES["test_error"][0] else None
    return named or ylabel


def _relative_runs(table, out):
    """``table`` with its run log paths relative to the output directory, so that tables
    stay valid when the results directory is moved or committed."""
    return table.assign(run=[os.path.relpath(run, out) for run in table["run"]])


def only(df, methods):
    """The rows of the curves named in ``methods`` and of every added method
    (:func:`~ssvmbench.plotting.curves.added_rows`); unknown names are refused."""
    labels = pd.Series(curve_labels(df), index=df.index)
    unknown = sorted(set(methods) - set(labels))
    if unknown:
        raise UserError(f"--methods: no curve named {unknown} in the logs; "
                        f"available: {sorted(labels.unique())}")
    return df[labels.isin(methods) | added_rows(df)]


def read_optimum(path):
    """``{(data, lambda): value}`` from the ``--optimum`` CSV, or None."""
    if path is None:
        return None
    try:
        table = pd.read_csv(path)
        return {(str(data), float(lam)): float(value) for data, lam, value
                in zip(table["data"], table["lambda"], table["value"])}
    except (OSError, KeyError, ValueError) as err:
        raise UserError(f"--optimum {path}: give a readable CSV with columns data,lambda,value "
                        f"and numeric lambda and value ({type(err).__name__}: {err})") from None


def markdown(table):
    """A GitHub Markdown table (numbers to 4 significant digits, missing values empty)."""
    def cell(value):
        if pd.isna(value):
            return ""
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value).replace("|", "\\|")
    lines = ["| " + " | ".join(table.columns) + " |", "|" + " --- |" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"
