"""Figures and tables from the rows of run logs: BCFW Figures 1-3 style panels (one per
dataset, variant and λ; a line and a band over seeds per method) drawn with matplotlib or as
interactive Plotly figures, and the Markdown tables beside them. The library under
``ssvmbench plot`` (:mod:`ssvmbench.cli.plot`), ``reproduce`` and ``report``."""

import math
import textwrap

import pandas as pd
from matplotlib.figure import Figure

from ssvmbench.common.errors import UserError
from ssvmbench.plotting import html
from ssvmbench.plotting.curves import (ADDED, BANDS, DERIVED, OBJECTIVE, PANEL, added_labels,
                                       added_rows, aggregate, curve_labels, with_bands)
from ssvmbench.plotting.layout import LABEL_WIDTH, TITLE_WIDTH, legend_below, wrap
from ssvmbench.plotting.names import figure_names
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.plotting.ticks import log_ticks
from ssvmbench.tasks.metrics import registered as registered_metrics

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


def added_methods(df):
    """The labels of the methods added beside the others (:data:`ADDED`), in order."""
    return sorted(set(df.loc[added_rows(df), ADDED].astype(str))) if ADDED in df else []


def lambda_label(lam, n=None):
    """``λ`` as the papers write it: ``0.01``, or ``1/n``, ``0.1/n`` when it is a round
    multiple of ``1/n`` and not round itself (BCFW Figure 1, Casimir Figure 2)."""
    def round_number(value):
        return value > 0 and math.isclose(value, float(f"{value:.1g}"), rel_tol=1e-9)
    if n and not round_number(lam) and round_number(lam * n):
        c = float(f"{lam * n:.1g}")
        return f"{c:g}/n" if c != 1 else "1/n"
    return f"{lam:.3g}"


def draw(stats, x, ylabel, log_y, styles, band="minmax", names=None):
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
    """``{y: Plotly figure}``: the figures ``ssvmbench plot`` draws from the rows ``df``
    (:func:`ssvmbench.plotting.html.figure`), curves named by ``mapping`` (a preset's
    ``names``, checked by :func:`~ssvmbench.plotting.names.check_names`), switchable to every x axis
    of :data:`X_LABELS` the rows hold; the figures' ids are ``PREFIX-Y``."""
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
