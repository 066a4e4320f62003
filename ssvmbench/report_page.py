"""``DIR/report.html``: ``ssvmbench report``'s page, the report's content made interactive.

Per preset its paper's claim, its figures drawn as ``plot`` draws them
(:func:`ssvmbench.plotting.commands.interactive`, from the same rows the checks read), beside
each figure the checks of its y column (the rows of ``checks.csv``: verdict, quoted
sentence, the check and why its reading is fair, the detail, the deviation it names), the
preset's deviations from the paper, its compute and, one click away, each run's
configuration. :mod:`ssvmbench.report` computes all of it; this module only lays it out.
"""

from html import escape
import os

from ssvmbench.plotting import commands as plot_command
from ssvmbench.plotting import html
from ssvmbench.plotting.curves import provenance


def section(preset, folder, options, df, checks, deviations, compute, compared=(),
            added_compute=""):
    """One preset's ``<section>`` (id ``preset-FOLDER``): ``options`` its parsed plot
    options, ``df`` the rows its figures draw, ``checks`` ``[(y column, checks.csv row)]``,
    ``deviations`` ``{id: text}``, ``compute`` a sentence; ``compared``: ``[(y column,
    line)]``, how the added methods compare (:func:`ssvmbench.report.compare_added`), shown
    beside their figure above its checks, ``added_compute`` their runs' compute."""
    name = folder.name
    figures = plot_command.interactive(df, options.y, options.x, options.band, prefix=name,
                                       mapping=preset.get("names") or {})
    beside = {y: [row for column, row in checks if column == y] for y in figures}
    first = next(iter(beside))               # checks of a column not drawn: by the first one
    beside[first] += [row for column, row in checks if column not in figures]
    parts = [f"<section id=\"preset-{name}\">",
             f"<h2>{html.markup(preset['paper'])} {html.markup(preset['item'])} "
             f"(<code>{escape(name)}</code>)</h2>",
             f"<blockquote>{html.markup(preset['claim'])}</blockquote>"]
    for y, fig in figures.items():
        cards = "".join(f"<div class=\"comparison\"><b>Added method</b> (not a check of "
                        f"the paper): {html.markup(line)}</div>\n"
                        for column, line in compared if column == y)
        cards += "\n".join(_check(row) for row in beside[y]) or (
            "<p>No automatic check of this figure: the claim is read off it.</p>")
        parts.append(f"<div class=\"row\"><div class=\"plot\"><h3>"
                     f"{html.markup(plot_command.FIGURES[y][0])}</h3>\n{html.figure_html(fig)}"
                     f"</div>\n<div class=\"checks\">\n{cards}\n</div></div>")
    if deviations:
        parts += ["<p>What still differs from the paper:</p><ul>"]
        parts += [f"<li><b>{html.markup(key)}</b>: {html.markup(text)}</li>"
                  for key, text in deviations.items()]
        parts.append("</ul>")
    if (folder / "best_within.md").is_file():
        parts.append("<details><summary>Table (best_within.md, LaTeX in best_within.tex)"
                     f"</summary><pre>{escape((folder / 'best_within.md').read_text())}"
                     "</pre></details>")
    runs = provenance(df)
    runs = runs.assign(run=[os.path.relpath(run, folder.parent) for run in runs["run"]])
    parts += [f"<h3>Runs</h3>\n<p>Each curve's runs and their configuration "
              f"(<a href=\"{name}/provenance.csv\">{name}/provenance.csv</a>):</p>",
              html.runs_html(runs), f"<p>Compute: {html.markup(compute)}</p>"]
    if added_compute:
        parts.append(f"<p>Added methods: {html.markup(added_compute)}.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _check(row):
    """One check's card: verdict, the paper's sentence, the check and why this reading is
    fair, its detail and the deviation it names."""
    word = row["result"]
    deviation = (f"<p><b>Deviation named:</b> {html.markup(row['deviation'])}</p>"
                 if row["deviation"] else "")
    return (f"<div class=\"check\" data-preset=\"{escape(row['preset'])}\">"
            f"<span class=\"verdict {word.replace(' ', '-').replace('/', '-')}\">"
            f"{escape(word)}</span>"
            f"<blockquote>\"{html.markup(row['quote'])}\"</blockquote>"
            f"<p class=\"check-text\"><b>Check:</b> {html.markup(row['check'])}</p>"
            f"<p><b>Why this reading:</b> {html.markup(row['why'])}</p>"
            f"<p><b>Detail:</b> {html.markup(row['detail'])}</p>{deviation}</div>")


def page(title, notes, table, sections):
    """The page: ``title``, the report's opening ``notes`` (Markdown paragraphs), the table
    of every check's verdict (``checks.csv``'s rows, linked to their presets) and the
    ``sections``."""
    head = "".join(f"<p>{html.markup(note)}</p>\n" for note in notes if note)
    rows = "".join(f"<tr><td><a href=\"#preset-{escape(row.preset)}\">"
                   f"{escape(row.preset)}</a></td><td>{escape(row.item)}</td>"
                   f"<td>{html.markup(row.check)}</td><td>{escape(row.result)}</td></tr>"
                   for row in table.itertuples(index=False))
    summary = ("<table><tr><th>preset</th><th>item</th><th>check</th><th>result</th></tr>"
               f"{rows}</table>")
    note = (f"<p>The curves are drawn at up to {html.MAX_POINTS} checkpoints each; the checks "
            "read every checkpoint.</p>")
    return html.page(title, "\n".join([head + summary + note, *sections]))
