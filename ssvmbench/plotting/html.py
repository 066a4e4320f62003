"""Interactive figures in one self-contained HTML page, for ``plot --html`` and ``report``.

:func:`figure` draws the panels ``plot`` draws, from the same aggregated rows
(:func:`~ssvmbench.plotting.curves.aggregate`), as a Plotly figure: per curve its centre line
and its band over seeds (one legend entry for both: clicking it hides the curve), a hover
naming the pass, value, seeds, oracle calls and seconds, a linear / log switch of the y axes
and a choice of x axis. :func:`page` wraps figures in a page that embeds plotly.js once, so
that it works offline and makes no network request.
"""

import html
import math
import re

import numpy as np
import plotly.graph_objects as go
from matplotlib.colors import to_hex, to_rgba
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from ssvmbench.plotting.curves import BANDS

MAX_POINTS = 40         # checkpoints drawn per curve (log-spaced; the checks use them all)
PANEL_HEIGHT = 300      # pixels per row of panels
DASHES = {"-": "solid", "--": "dash", ":": "dot", "-.": "dashdot"}
# hover fields beside the value: (column, label, format); the x columns a page may switch to
HOVER = [("effective_pass", "pass", ".4g"), ("seeds", "seeds", "d"),
         ("oracle_calls", "oracle calls", ",.0f"), ("time_s", "seconds", ".3g")]
CONFIG = {"displaylogo": False, "responsive": True}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1500px;
       padding: 0 1em; color: #222; line-height: 1.4; }
blockquote { border-left: 4px solid #ccc; margin: 0.5em 0; padding: 0.2em 1em; color: #444; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
code { background: #f3f3f3; padding: 0 0.2em; }
.row { display: grid; grid-template-columns: minmax(0, 3fr) minmax(320px, 2fr); gap: 1em;
       align-items: start; margin: 1em 0; }
@media (max-width: 1000px) { .row { grid-template-columns: minmax(0, 1fr); } }
.check { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 0.8em; margin-bottom: 0.6em; }
.verdict { font-weight: bold; padding: 0.1em 0.5em; border-radius: 4px; }
.verdict.reproduced { background: #d8f0d8; }
.verdict.not-reproduced { background: #f6d5d5; }
.verdict.n-a, .verdict.not-comparable-here { background: #eee; }
.comparison { border: 2px solid #333; border-radius: 6px; padding: 0.5em 0.8em;
              margin-bottom: 0.6em; background: #fafafa; }
details { margin: 0.3em 0; }
summary { cursor: pointer; }
"""


def figure(panels, xs, x, log_y, styles, band, div_id, names=None):
    """A Plotly figure of ``panels`` (``[(title, y label, rows)]``, rows of one panel of
    :func:`aggregate`'s table with :func:`with_bands`' columns, a ``seeds`` column and one
    column per x axis of ``xs``, ``{column: label}``), ``x`` shown first, y axes on a log
    scale if ``log_y``; curve colours and dashes from ``styles``
    (:func:`~ssvmbench.plotting.styles.curve_styles`); ``band`` a key of :data:`BANDS`;
    curves named by ``names``, ``{label: name}`` (:func:`~ssvmbench.plotting.names.
    figure_names`; default: the label), one legend entry per name."""
    names = names or {}
    center, low, high = BANDS[band]
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, horizontal_spacing=0.07,
                        vertical_spacing=min(0.3, 0.45 / nrows),
                        subplot_titles=[title.replace("\n", "<br>") for title, _, _ in panels])
    arrays = {column: [] for column in xs}       # per trace, its x values on each x axis
    hover = [(c, label, fmt) for c, label, fmt in HOVER if c in ("seeds", *xs)]
    shown = set()
    for i, (_, ylabel, rows) in enumerate(panels):
        cell = {"row": i // ncols + 1, "col": i % ncols + 1}
        rows = rows[(rows[x] > 0) & rows[center].notna()]
        for method, curve in rows.groupby("method"):
            curve = thin(curve)
            style, name = styles[method], names.get(method, method)
            color = to_hex(style["color"])
            edge = {"mode": "lines", "line": {"width": 0, "color": color}, "hoverinfo": "skip",
                    "showlegend": False, "legendgroup": name, "name": name}
            fig.add_trace(go.Scatter(x=_values(curve[x]), y=_values(curve[low]), **edge), **cell)
            fig.add_trace(go.Scatter(x=_values(curve[x]), y=_values(curve[high]), fill="tonexty",
                                     fillcolor=_transparent(color), **edge), **cell)
            fig.add_trace(go.Scatter(
                x=_values(curve[x]), y=_values(curve[center]), mode="lines", name=name,
                legendgroup=name, showlegend=name not in shown,
                line={"color": color, "dash": dash(style.get("linestyle", "-")),
                      "width": 2 * style.get("linewidth", 1.5) / 1.5},
                customdata=np.column_stack([_values(curve[c]) for c, _, _ in hover]).tolist(),
                hovertemplate=f"<b>{html.escape(name)}</b><br>{html.escape(ylabel)} "
                              "%{y:.4g}" + "".join(f"<br>{label} %{{customdata[{k}]:{fmt}}}"
                                                   for k, (_, label, fmt) in enumerate(hover))
                              + "<extra></extra>"), **cell)
            shown.add(name)
            for column in xs:
                arrays[column] += [_values(curve[column])] * 3
        if cell["col"] == 1 or ylabel != panels[i - 1][1]:    # not repeated along a row
            fig.update_yaxes(title_text=ylabel, title_font_size=11, **cell)
    axes = [("" if k == 1 else str(k)) for k in range(1, nrows * ncols + 1)]
    # decades only on x (passes, calls, seconds span several): no crowded 2 and 5 labels
    fig.update_xaxes(type="log", title_text=xs[x], exponentformat="power", dtick=1)
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    menus = [_menu([("log y", "relayout", [{f"yaxis{a}.type": "log" for a in axes}]),
                    ("linear y", "relayout", [{f"yaxis{a}.type": "linear" for a in axes}])],
                   0 if log_y else 1, 0.0)]
    if len(xs) > 1:
        order = [x] + [c for c in xs if c != x]
        menus.append(_menu([(xs[c], "update", [{"x": arrays[c]},
                                                 {f"xaxis{a}.title.text": xs[c] for a in axes}])
                            for c in order], 0, 0.25))
    fig.update_layout(height=PANEL_HEIGHT * nrows + 120, updatemenus=menus,
                      margin={"t": 90, "l": 60, "r": 20, "b": 40}, template="plotly_white",
                      legend={"orientation": "h", "yanchor": "top", "x": 0,
                              "y": -90 / (PANEL_HEIGHT * nrows)}, hovermode="closest")
    fig.layout.meta = {"id": div_id}
    return fig


def _menu(buttons, active, x):
    """An updatemenus row of ``buttons`` (``(label, method, args)``) above the panels."""
    return {"type": "buttons", "direction": "right", "active": active, "x": x, "y": 1.0,
            "xanchor": "left", "yanchor": "bottom", "pad": {"b": 35}, "showactive": True,
            "buttons": [{"label": label, "method": method, "args": args}
                        for label, method, args in buttons]}


def thin(curve, points=MAX_POINTS):
    """At most ``points`` rows of a curve, log-spaced in its order (dense early, where
    the log x axis spreads the checkpoints), first and last kept."""
    if len(curve) <= points:
        return curve
    index = np.unique(np.round(np.geomspace(1, len(curve), points)).astype(int) - 1)
    return curve.iloc[index]


def _values(column):
    """A column as a list of floats to 4 significant digits (NaN as None): the page's
    numbers, short in its JSON."""
    return [None if not np.isfinite(v) else float(f"{v:.4g}")
            for v in column.astype(float)]


def _transparent(color):
    r, g, b, _ = to_rgba(color)
    return f"rgba({r * 255:.0f},{g * 255:.0f},{b * 255:.0f},0.2)"


def dash(linestyle):
    """A matplotlib line style (``"--"``, ``(0, (5, 1, 1, 1))``) as a Plotly dash."""
    if isinstance(linestyle, str):
        return DASHES.get(linestyle, "solid")
    _, pattern = linestyle
    return ",".join(f"{2 * length:g}px" for length in pattern)


def figure_html(fig):
    """The figure as a ``<div>`` (id: its ``meta.id``) drawn by the page's plotly.js."""
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=fig.layout.meta["id"],
                       config=CONFIG)


def runs_html(runs):
    """Each curve's runs one click away: per ``method`` a ``<details>`` with a table of its
    runs' configuration (the rows of :func:`~ssvmbench.plotting.curves.provenance`)."""
    blocks = []
    for method, group in runs.groupby("method", sort=True):
        group = group.dropna(axis=1, how="all")
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in group.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
                       + "</tr>" for row in group.itertuples(index=False))
        blocks.append(f"<details><summary>{html.escape(str(method))}: {len(group)} "
                      f"run{'s' * (len(group) > 1)}</summary><table><tr>{head}</tr>{body}"
                      "</table></details>")
    return "\n".join(blocks)


def _cell(value):
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def markup(text):
    """Report text (Markdown's ``code`` and **bold** only) as escaped HTML."""
    text = html.escape(" ".join(str(text).split()))
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def page(title, body):
    """A complete HTML page: ``body`` (HTML) under an ``<h1>`` of ``title``, with plotly.js
    embedded once (no CDN, no network request)."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n"
            f"<script type=\"text/javascript\">{get_plotlyjs()}</script>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n")
