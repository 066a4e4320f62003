"""Interactive figures in one self-contained HTML page, for ``plot --html`` and ``report``.

:func:`figure` draws the panels ``plot`` draws, from the same aggregated rows
(:func:`~ssvmbench.plotting.curves.aggregate`), as a Plotly figure: per curve its centre line
and its band over seeds (one legend entry for both: clicking it hides the curve), a hover
naming the pass, value, seeds, oracle calls and seconds, log / linear switches of the y and
x axes and a choice of x axis. :func:`page` wraps figures in a page that embeds plotly.js
once (the basic bundle vendored in ``vendor/``, ``scripts/update_plotly_js.sh``), so that it
works offline and makes no network request, and draws each figure when it nears the
viewport (the others one at a time while the browser is idle).
"""

import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import yaml
from matplotlib.colors import to_hex, to_rgba
from plotly.subplots import make_subplots

from ssvmbench.plotting.curves import BANDS
from ssvmbench.plotting.ticks import plotly_dtick

MAX_POINTS = 40         # checkpoints drawn per curve (log-spaced; the checks use them all)
PANEL_HEIGHT = 300      # pixels per row of panels
DASHES = {"-": "solid", "--": "dash", ":": "dot", "-.": "dashdot"}
# hover fields beside the value: (column, label, format); the x columns a page may switch to
HOVER = [("effective_pass", "pass", ".4g"), ("seeds", "seeds", "d"),
         ("oracle_calls", "oracle calls", ",.0f"), ("time_s", "seconds", ".3g")]
CONFIG = {"displaylogo": False, "responsive": True}
PLOTLY_JS = Path(__file__).with_name("vendor") / "plotly-basic.min.js"
GRID = "#e5e8ee"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1500px;
       padding: 0 1em; color: #222; line-height: 1.4; }
blockquote { border-left: 4px solid #ccc; margin: 0.5em 0; padding: 0.2em 1em; color: #444; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
code { background: #f3f3f3; padding: 0 0.2em; }
pre { overflow-x: auto; }
.row { display: grid; grid-template-columns: minmax(0, 3fr) minmax(320px, 2fr); gap: 1em;
       align-items: start; margin: 1em 0; }
@media (max-width: 1000px) { .row { grid-template-columns: minmax(0, 1fr); } }
.check { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 0.8em; margin-bottom: 0.6em; }
.shared { font-size: 0.9em; margin: 0.3em 0; padding-left: 1.2em; overflow-wrap: anywhere; }
table.runs { table-layout: fixed; width: 100%; }
table.runs td { overflow-wrap: anywhere; }
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
    hover = [(c, label, fmt) for c, label, fmt in HOVER if c in ("seeds", *xs)]
    ranges = {column: [] for column in xs}       # each x axis's values > 0, for its ticks
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
                ranges[column] += [v for v in curve[column] if v > 0]
        if cell["col"] == 1 or ylabel != panels[i - 1][1]:    # not repeated along a row
            fig.update_yaxes(title_text=ylabel, title_font_size=11, **cell)
    axes = [("" if k == 1 else str(k)) for k in range(1, nrows * ncols + 1)]
    dticks = {c: plotly_dtick(min(v), max(v)) if v else 1 for c, v in ranges.items()}
    fig.update_xaxes(type="log", title_text=xs[x], exponentformat="power", dtick=dticks[x])
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    fig.update_xaxes(gridcolor=GRID, zeroline=False, linecolor="#888")
    fig.update_yaxes(gridcolor=GRID, zeroline=False, linecolor="#888")
    # the x switches are drawn by Plotly and done by the page's script (method "skip",
    # their args read by ``xButton``): the x values come from the hover's data
    # two rows above the panels: the scales (y at the left, x at the right), the x choice
    menus = [_menu([("log y", "relayout", [{f"yaxis{a}.type": "log" for a in axes}]),
                    ("linear y", "relayout", [{f"yaxis{a}.type": "linear" for a in axes}])],
                   0 if log_y else 1, 0.0),
             _menu([("log x", "skip", [{"scale": "log"}]),
                    ("linear x", "skip", [{"scale": "linear"}])], 0, 1.0, "right")]
    if len(xs) > 1:
        order = [x] + [c for c in xs if c != x]
        column = {c: k for k, (c, _, _) in enumerate(hover)}
        menus.append(_menu([(xs[c], "skip", [{"x": column[c], "title": xs[c],
                                               "dtick": dticks[c]}]) for c in order],
                           0, 0.0, row=2))
    fig.update_layout(height=PANEL_HEIGHT * nrows + 155, updatemenus=menus,
                      margin={"t": 125, "l": 60, "r": 20, "b": 40}, template=None,
                      plot_bgcolor="white", paper_bgcolor="white", font={"color": "#2a3f5f"},
                      legend={"orientation": "h", "yanchor": "top", "x": 0,
                              "y": -90 / (PANEL_HEIGHT * nrows)}, hovermode="closest")
    fig.layout.meta = {"id": div_id}
    return fig


def _menu(buttons, active, x, anchor="left", row=1):
    """An updatemenus row of ``buttons`` (``(label, method, args)``) above the panels, in
    the ``row``-th line of buttons from them, ``anchor`` its side at ``x``."""
    return {"type": "buttons", "direction": "right", "active": active, "x": x, "y": 1.0,
            "xanchor": anchor, "yanchor": "bottom", "pad": {"b": 35 * row},
            "showactive": True, "buttons": [{"label": label, "method": method, "args": args}
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
    """The figure as a ``<div>`` (id: its ``meta.id``, its height kept before it is drawn)
    and its JSON, which the page's script draws when the div nears the viewport; the
    bands' x values left out (the page takes those of the line after them)."""
    div_id = fig.layout.meta["id"]
    spec = json.loads(fig.to_json(validate=False))
    for trace in spec["data"]:
        if "customdata" not in trace:     # a band: the page gives it its line's x
            trace.pop("x", None)
    spec = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (f"<div id=\"{html.escape(div_id)}\" class=\"plotly-graph-div\" "
            f"style=\"height:{fig.layout.height}px; width:100%;\"></div>\n"
            f"<script type=\"application/json\" data-figure=\"{html.escape(div_id)}\">"
            f"{spec}</script>")


def runs_html(runs):
    """Each curve's runs one click away: per ``method`` a ``<details>`` with what its runs
    share (columns and override words, once) and a table of what differs between them
    (the rows of :func:`~ssvmbench.plotting.curves.provenance`)."""
    blocks = []
    for method, group in runs.groupby("method", sort=True):
        group = group.dropna(axis=1, how="all").drop(columns="method")
        words = [_words(text) for text in group.get("overrides", pd.Series(dtype=object))]
        common = [w for w in words[0] if all(w in other for other in words)] if words else []
        if "git_revision" in group:                      # provenance.csv has all of it
            group = group.assign(git_revision=group["git_revision"].str[:12])
        if words:
            group = group.assign(overrides=[" ".join(w for w in own if w not in common)
                                            for own in words])
        same = [c for c in group.columns if group[c].nunique(dropna=False) == 1
                and (c != "overrides" or not group[c].iloc[0])]
        shared = [(c, _cell(group[c].iloc[0])) for c in same if c != "overrides"]
        shared += [("overrides", " ".join(common))] if common else []
        items = "".join(f"<li><b>{html.escape(str(c))}</b> {html.escape(v)}</li>"
                        for c, v in shared)
        varying = group.drop(columns=same)
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in varying.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
                       + "</tr>" for row in varying.itertuples(index=False))
        table = (f"<table class=\"runs\"><tr>{head}</tr>{body}</table>"
                 if len(varying.columns) else "")
        blocks.append(f"<details><summary>{html.escape(str(method))}: {len(group)} "
                      f"run{'s' * (len(group) > 1)}</summary><ul class=\"shared\">{items}</ul>"
                      f"{table}</details>")
    return "\n".join(blocks)


def _words(overrides):
    """A run's recorded overrides (the log's YAML list) as words."""
    words = yaml.safe_load(overrides) if isinstance(overrides, str) else None
    return [str(w) for w in words] if isinstance(words, list) else [str(overrides)]


def _cell(value):
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def markup(text):
    """Report text (Markdown's ``code`` and **bold** only) as escaped HTML."""
    text = html.escape(" ".join(str(text).split()))
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


# draws each figure when it nears the viewport (one a frame, so that the first shows before
# the next is drawn), then the others one at a time while idle;
# does the x switches of :func:`figure` (log / linear, the x column from the hover's data)
SCRIPT = """
const CONFIG = %s;
function draw(div) {
  if (div.dataset.drawn) return;
  div.dataset.drawn = "1";
  const spec = JSON.parse(document.querySelector(`script[data-figure="${div.id}"]`).textContent);
  let x = null;                       // a band's x: that of the line after it
  for (const trace of [...spec.data].reverse()) { if (trace.x) x = trace.x; else trace.x = x; }
  Plotly.newPlot(div, spec.data, spec.layout, CONFIG).then(
    gd => {
      gd.xDtick = gd.layout.xaxis.dtick;
      gd.on("plotly_buttonclicked", event => xButton(gd, event.button.args[0]));
    });
}
function xAxes(gd) { return Object.keys(gd.layout).filter(key => /^xaxis\\d*$/.test(key)); }
function xButton(gd, args) {
  const layout = {};
  if (args.scale) {
    gd.xScale = args.scale;
    for (const axis of xAxes(gd)) {
      layout[`${axis}.type`] = args.scale;
      layout[`${axis}.dtick`] = args.scale === "log" ? gd.xDtick : null;
    }
    return Plotly.relayout(gd, layout);
  }
  gd.xDtick = args.dtick;
  const xs = [];
  let band = 0;
  gd.data.forEach((trace, i) => {          // bands (no hover data) take the next line's x
    if (!trace.customdata) { band += 1; return; }
    const x = trace.customdata.map(point => point[args.x]);
    for (let k = 0; k <= band; k++) xs.push(x);
    band = 0;
  });
  for (const axis of xAxes(gd)) {
    layout[`${axis}.title.text`] = args.title;
    if (gd.xScale !== "linear") layout[`${axis}.dtick`] = args.dtick;
  }
  return Plotly.update(gd, {x: xs}, layout);
}
const figures = [...document.querySelectorAll(".plotly-graph-div")];
const queue = [];                       // near the viewport: one figure per frame, in order
let draining = false;
function drain() {
  const div = queue.shift();
  draining = div !== undefined;
  if (draining) { draw(div); requestAnimationFrame(() => setTimeout(drain, 0)); }
}
const near = new IntersectionObserver(entries => {
  entries.filter(entry => entry.isIntersecting).forEach(entry => {
    near.unobserve(entry.target);
    queue.push(entry.target);
  });
  if (!draining) drain();
}, {rootMargin: "600px 0px"});
figures.forEach(div => near.observe(div));
const idle = window.requestIdleCallback || (next => setTimeout(next, 50));
function drawNext() {
  const next = figures.find(div => !div.dataset.drawn && div.offsetParent !== null);
  if (next) { draw(next); idle(drawNext); }
}
window.addEventListener("load", () => idle(drawNext));
""" % json.dumps(CONFIG)


def page(title, body, style="", script=""):
    """A complete HTML page: ``body`` (HTML) under an ``<h1>`` of ``title``, with plotly.js
    embedded once (no CDN, no network request) and the script that draws the figures;
    ``style`` and ``script``: a page's own CSS and script."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}{style}</style>\n"
            f"<script type=\"text/javascript\">{PLOTLY_JS.read_text()}</script>\n</head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n"
            f"<script>{SCRIPT}{script}</script>\n</body>\n</html>\n")
