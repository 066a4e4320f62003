"""``ssvmbench plot DIR -o OUTDIR``: BCFW Figures 1-3 style panels, a summary table and the
per-pass traces they are drawn from (:mod:`ssvmbench.traces`)."""

import math
import os
import textwrap
import warnings
from pathlib import Path

import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure

from ssvmbench import traces
from ssvmbench.errors import UserError
from ssvmbench.metrics import registered as registered_metrics
from ssvmbench.plotting.curves import (BANDS, NO_REFERENCE, PANEL, add_suboptimality,
                                      aggregate, check_panels, curve_labels, provenance,
                                      summary, with_bands)
from ssvmbench.plotting.sap_tables import best_within, latex
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.runlog import load_logs

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


def main(args):
    logged = load_logs(*args.logs)
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
    styles = curve_styles(stats[args.y[0]]["method"].unique())
    written = []
    for y in args.y:
        ylabel, log_y = FIGURES[y]
        fig = _figure(stats[y], args.x, ylabel, log_y, styles, args.band)
        for fmt in args.format:
            written.append(out / f"{y}.{fmt}")
            fig.savefig(written[-1], dpi=150)
    table = _relative_runs(summary(df), out)
    written += [out / "provenance.csv", out / "summary.csv", out / "summary.md"]
    _relative_runs(provenance(df), out).to_csv(written[-3], index=False)
    table.to_csv(written[-2], index=False)
    written[-1].write_text(markdown(table.drop(columns="run")))
    if args.best_within is not None:
        metrics = [y for y in args.y if y.startswith("test_") and y != "test_error"]
        best = best_within(df, args.best_within, (metrics or ["test_metric"])[0])
        written += [out / "best_within.md", out / "best_within.tex"]
        written[-2].write_text(markdown(best))
        written[-1].write_text(latex(best))
    written.append(out / traces.NAME)
    for path in written:
        print(path)
    return 0


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


def _figure(stats, x, ylabel, log_y, styles, band="minmax"):
    """One panel per (data, variant, λ); per method a line and a band over seeds (median
    and min–max, or mean and one standard deviation)."""
    stats = with_bands(stats)
    center, low, high = BANDS[band]
    panels = sorted(stats.groupby(PANEL, dropna=False),  # λ decreasing, as in BCFW Figure 1
                    key=lambda item: (str(item[0][0]), str(item[0][1]), -item[0][2]))
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(4.5 * ncols, 3.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    show_variant = (len(stats[["data", "data_variant"]].drop_duplicates())
                    > stats["data"].nunique(dropna=False))
    for ax, ((data, variant, lam), panel) in zip(axes, panels):
        panel = panel[(panel[x] > 0) & panel[center].notna()]
        for method, curve in panel.groupby("method"):
            ax.plot(curve[x], curve[center], label=method, **styles[method])
            ax.fill_between(curve[x], curve[low], curve[high], color=styles[method]["color"],
                            alpha=0.2, linewidth=0)
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        if log_y:            # minor ticks as plain numbers ("2", "0.3"), not "2×10⁰"
            ax.yaxis.set_minor_formatter(ticker.LogFormatter(minor_thresholds=(1, 0.4)))
        ax.xaxis.set_minor_formatter(ticker.LogFormatter(minor_thresholds=(1, 0.4)))
        elastic = panel["method"].str.contains("-rho1=").any()
        n = panel["n"].iloc[0] if "n" in panel and len(panel) else None
        title = (f"{data}, {'λ+λ₁' if elastic else 'λ'}={lambda_label(lam, n)}"
                 + (f"\n{textwrap.fill(str(variant), 60)}" if show_variant else ""))
        if str(variant).startswith("SYNTHETIC"):     # generated data says so (scenes.py)
            title += "\nSYNTHETIC data, not the paper's"
        if data == "alignment" and n:                # data/alignment.py: not BCFW's training set
            title += f"\nn = {n} gold pairs, not BCFW's 5,000"
        ax.set_title(title, fontsize="medium")
        named = TEST_ERROR_NAMES.get(data) if ylabel == FIGURES["test_error"][0] else None
        ax.set(xlabel=X_LABELS[x], ylabel=named or ylabel)
        ax.grid(True, alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    handles = {}                                     # one legend below the panels, not on them
    for ax in axes[:len(panels)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="outside lower center",
                   ncols=min(4, len(handles)), fontsize="small")
    if ylabel == FIGURES["suboptimality"][0]:
        kinds = [REFERENCES[kind] for kind in REFERENCES if kind in set(stats["reference"])]
        title = "primal suboptimality: the primal minus " + " or ".join(kinds)
        fig.suptitle(textwrap.fill(title, 60 * ncols), fontsize="small")
    return fig


def _relative_runs(table, out):
    """``table`` with its run log paths relative to the output directory, so that tables
    stay valid when the results directory is moved or committed."""
    return table.assign(run=[os.path.relpath(run, out) for run in table["run"]])


def only(df, methods):
    """The rows of the curves named in ``methods``; unknown names are refused."""
    labels = pd.Series(curve_labels(df), index=df.index)
    unknown = sorted(set(methods) - set(labels))
    if unknown:
        raise UserError(f"--methods: no curve named {unknown} in the logs; "
                        f"available: {sorted(labels.unique())}")
    return df[labels.isin(methods)]


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
