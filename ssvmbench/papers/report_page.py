"""``DIR/report.html``: ``ssvmbench report``'s page, the report's content made interactive.

At the top a scorecard: per paper its checks' verdicts counted and per figure or table one
coloured mark per check, linking to its section; beside the page a contents bar that stays
in view, with a filter that shows only the checks of some verdicts (and the sections that
have any). Per preset its paper's claim, its figures drawn as ``plot`` draws them
(:func:`ssvmbench.plotting.figures.interactive`, from the same rows the checks read), beside
each figure the checks of its y column (the rows of ``checks.csv``: verdict, quoted
sentence, the check and why its reading is fair, the detail, the deviation it names), the
preset's deviations from the paper, its compute and, one click away, each run's
configuration. :mod:`ssvmbench.papers.report` computes all of it; this module only lays it out.
"""

import os
import re
from html import escape

from ssvmbench.plotting import figures, html
from ssvmbench.plotting.curves import provenance


def section(preset, folder, options, df, checks, deviations, compute, compared=(),
            added_compute=""):
    """One preset's ``<section>`` (id ``preset-FOLDER``): ``options`` its parsed plot
    options, ``df`` the rows its figures draw, ``checks`` ``[(y column, checks.csv row)]``,
    ``deviations`` ``{id: text}``, ``compute`` a sentence; ``compared``: ``[(y column,
    line)]``, how the added methods compare (:func:`ssvmbench.papers.report.compare_added`), shown
    beside their figure above its checks, ``added_compute`` their runs' compute."""
    name = folder.name
    drawn = figures.interactive(df, options.y, options.x, options.band, prefix=name,
                                mapping=preset.get("names") or {})
    beside = {y: [row for column, row in checks if column == y] for y in drawn}
    first = next(iter(beside))               # checks of a column not drawn: by the first one
    beside[first] += [row for column, row in checks if column not in drawn]
    parts = [f"<section id=\"preset-{name}\">",
             f"<h2>{html.markup(preset['paper'])} {html.markup(preset['item'])} "
             f"(<code>{escape(name)}</code>)</h2>",
             f"<blockquote>{html.markup(preset['claim'])}</blockquote>"]
    for y, fig in drawn.items():
        cards = "".join(f"<div class=\"comparison\"><b>Added method</b> (not a check of "
                        f"the paper): {html.markup(line)}</div>\n"
                        for column, line in compared if column == y)
        cards += "\n".join(_check(row) for row in beside[y]) or (
            "<p>No automatic check of this figure: the claim is read off it.</p>")
        parts.append(f"<div class=\"row\"><div class=\"plot\"><h3>"
                     f"{html.markup(figures.FIGURES[y][0])}</h3>\n{html.figure_html(fig)}"
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


# the verdicts in the order a tally lists them; any other word (a new kind of result) after
# them, in the neutral colour of an unknown verdict
ORDER = ("reproduced", "not reproduced", "not comparable here", "n/a", "evidence: holds",
         "evidence: fails")


def tally(results):
    """``[(verdict, count)]`` of the ``results`` (verdict words), in :data:`ORDER`, other
    words after them alphabetically, verdicts that no check has left out."""
    counts = results.value_counts()
    words = sorted(counts.index, key=lambda word: (ORDER.index(word) if word in ORDER
                                                   else len(ORDER), word))
    return [(word, int(counts[word])) for word in words]


def _slug(word):
    """A verdict as a CSS class: ``v-not-comparable-here``, ``v-n-a``."""
    return "v-" + re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")


def _check(row):
    """One check's card: verdict, the paper's sentence, the check (in the papers' curve
    names; checks.csv's text in ``data-check``) and why this reading is fair, its detail,
    the deviation it names and what the other natural reading of the words gives."""
    word = row["result"]
    deviation = (f"<p><b>Deviation named:</b> {html.markup(row['deviation'])}</p>"
                 if row["deviation"] else "")
    if row["other_reading"]:
        deviation += f"<p><b>The other reading:</b> {html.markup(row['other_reading'])}</p>"
    return (f"<div class=\"check\" data-preset=\"{escape(row['preset'])}\" "
            f"data-verdict=\"{escape(word)}\" data-check=\"{escape(row['check'])}\">"
            f"<span class=\"verdict {_slug(word)}\">{escape(word)}</span>"
            f"<blockquote>\"{html.markup(row['quote'])}\"</blockquote>"
            f"<p class=\"check-text\"><b>Check:</b> {html.markup(row['named'])}</p>"
            f"<p><b>Why this reading:</b> {html.markup(row['why'])}</p>"
            f"<p><b>Detail:</b> {html.markup(row['detail'])}</p>{deviation}</div>")


def _counts(results):
    """The tally of ``results`` as coloured badges."""
    return " ".join(f"<span class=\"verdict {_slug(word)}\" data-verdict=\"{escape(word)}\">"
                    f"<b class=\"count\">{count}</b> {escape(word)}</span>"
                    for word, count in tally(results))


def _marks(rows):
    """One coloured mark per check (``rows``), its verdict and check as its tooltip."""
    return "".join(f"<span class=\"mark {_slug(row.result)}\" data-verdict=\""
                   f"{escape(row.result)}\" title=\"{escape(row.result)}: "
                   f"{escape(row.named)}\"></span>" for row in rows.itertuples()
                   ) or "<span class=\"mark none\" title=\"no automatic check\"></span>"


def scorecard(checks, contents):
    """The scorecard: per paper (in ``contents``' order, ``[(folder, paper, item)]``) its
    verdicts counted, then per figure or table its marks, linking to its section."""
    rows = []
    for paper in dict.fromkeys(p for _, p, _ in contents):
        ours = checks[checks["paper"] == paper]
        items = " ".join(f"<a class=\"item\" href=\"#preset-{escape(folder)}\">"
                         f"{html.markup(item)} {_marks(ours[ours['preset'] == folder])}</a>"
                         for folder, p, item in contents if p == paper)
        rows.append(f"<tr data-paper=\"{escape(paper)}\"><th>{html.markup(paper)}</th>"
                    f"<td class=\"tally\">{_counts(ours['result'])}</td>"
                    f"<td class=\"items\">{items}</td></tr>")
    return ("<section id=\"scorecard\"><h2>Which claims hold</h2>\n<table class=\"scorecard\">"
            "<tr><th>paper</th><th>checks</th><th>figures and tables (a mark per check)"
            f"</th></tr>{''.join(rows)}</table>\n<p>All papers: {_counts(checks['result'])}"
            "</p></section>")


def contents_bar(checks, contents):
    """The side bar: a filter by verdict (a checkbox per verdict, and a shortcut to the
    checks that do not hold here) and the contents, per paper its figures and tables."""
    boxes = "".join(f"<label><input type=\"checkbox\" class=\"show\" value=\"{escape(word)}\" "
                    f"checked> <span class=\"mark {_slug(word)}\"></span> {escape(word)} "
                    f"({count})</label>" for word, count in tally(checks["result"]))
    papers = []
    for paper in dict.fromkeys(p for _, p, _ in contents):
        links = "".join(f"<li><a href=\"#preset-{escape(folder)}\">{html.markup(item)}</a> "
                        f"{_marks(checks[checks['preset'] == folder])}</li>"
                        for folder, p, item in contents if p == paper)
        papers.append(f"<li>{html.markup(paper)}<ul>{links}</ul></li>")
    return ("<nav id=\"contents\"><div class=\"filter\"><b>Show checks</b>"
            f"{boxes}<button type=\"button\" data-only=\"not reproduced|not comparable here\">"
            "not reproduced or not comparable only</button><button type=\"button\" "
            "data-only=\"\">every check</button></div><b>Contents</b><ul>"
            "<li><a href=\"#scorecard\">Which claims hold</a></li>"
            f"{''.join(papers)}<li><a href=\"#summary\">Every check in one table</a></li>"
            "</ul></nav>")


def page(title, notes, checks, contents, sections):
    """The page: ``title``, the scorecard and contents bar of the ``checks`` (checks.csv's
    rows with the columns ``paper`` and ``named``, the check in the papers' curve names)
    and the presets ``contents`` (``[(folder, paper, item)]``), the report's opening
    ``notes`` (Markdown paragraphs) and the table of every check folded, then the
    ``sections``."""
    head = "".join(f"<p>{html.markup(note)}</p>\n" for note in notes if note)
    rows = "".join(f"<tr data-verdict=\"{escape(row.result)}\"><td><a href=\"#preset-"
                   f"{escape(row.preset)}\">{escape(row.preset)}</a></td><td>"
                   f"{escape(row.item)}</td><td>{html.markup(row.named)}</td><td><span "
                   f"class=\"verdict {_slug(row.result)}\">{escape(row.result)}</span></td></tr>"
                   for row in checks.itertuples(index=False))
    note = (f"<p>The curves are drawn at up to {html.MAX_POINTS} checkpoints each; the checks "
            "read every checkpoint.</p>")
    folded = (f"<details class=\"notes\"><summary>How this report was made: provenance, the "
              f"reading of the checks, compute</summary>{head}{note}</details>\n"
              f"<details id=\"summary\"><summary>Every check in one table ({len(checks)} "
              "rows)</summary><table><tr><th>preset</th><th>item</th><th>check</th>"
              f"<th>result</th></tr>{rows}</table></details>")
    main = "\n".join([scorecard(checks, contents), folded, *sections])
    return html.page(title, f"<div class=\"layout\">{contents_bar(checks, contents)}\n"
                            f"<main>{main}</main></div>", STYLE, SCRIPT)


STYLE = """
.layout { display: grid; grid-template-columns: 230px minmax(0, 1fr); gap: 1.5em; }
#contents { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto;
            font-size: 0.85em; padding: 0.5em 0; }
#contents ul { padding-left: 1em; margin: 0.2em 0; }
#contents label { display: block; }
#contents button { margin: 0.2em 0.2em 0.2em 0; font-size: 0.95em; }
.filter { border-bottom: 1px solid #ddd; padding-bottom: 0.5em; margin-bottom: 0.5em; }
@media (max-width: 900px) { .layout { grid-template-columns: minmax(0, 1fr); }
                            #contents { position: static; max-height: none; } }
[hidden] { display: none !important; }
table.scorecard td, table.scorecard th { vertical-align: middle; }
.scorecard .item { display: inline-block; margin: 0.15em 0.6em 0.15em 0; white-space: nowrap; }
.mark { display: inline-block; width: 0.75em; height: 0.75em; border-radius: 2px;
        margin-right: 1px; vertical-align: middle; background: #8793a8; }
.mark.none { background: none; border: 1px solid #999; }
.mark.v-reproduced { background: #2e9e44; }
.mark.v-not-reproduced { background: #d23c3c; }
.mark.v-not-comparable-here { background: #e0a526; }
.mark.v-n-a { background: #bbb; }
.mark.v-evidence-holds, .mark.v-evidence-fails { background: #5b84b1; }
.verdict { background: #dfe4ee; white-space: nowrap; }
.verdict.v-reproduced { background: #d8f0d8; }
.verdict.v-not-reproduced { background: #f6d5d5; }
.verdict.v-not-comparable-here { background: #f8e9c4; }
.verdict.v-n-a { background: #eee; }
.verdict.v-evidence-holds, .verdict.v-evidence-fails { background: #dde7f3; }
"""

# the filter: checks of the unticked verdicts hidden, and the figures and sections (and
# contents entries) left without a check shown; every box ticked shows everything
SCRIPT = """
function filterChecks() {
  const boxes = [...document.querySelectorAll("#contents input.show")];
  const shown = new Set(boxes.filter(box => box.checked).map(box => box.value));
  const all = boxes.every(box => box.checked);
  document.querySelectorAll("main [data-verdict]").forEach(
    element => { element.hidden = !shown.has(element.dataset.verdict); });
  document.querySelectorAll("#scorecard [data-verdict]").forEach(
    element => { element.hidden = false; });
  document.querySelectorAll("main .row, main section[id^='preset-']").forEach(element => {
    element.hidden = !all && !element.querySelector(".check:not([hidden])");
  });
  document.querySelectorAll("#contents li > a[href^='#preset-']").forEach(link => {
    link.parentElement.hidden = document.querySelector(link.hash).hidden;
  });
}
document.querySelectorAll("#contents input.show").forEach(
  box => box.addEventListener("change", filterChecks));
document.querySelectorAll("#contents button[data-only]").forEach(button =>
  button.addEventListener("click", () => {
    const only = button.dataset.only ? button.dataset.only.split("|") : null;
    document.querySelectorAll("#contents input.show").forEach(
      box => { box.checked = !only || only.includes(box.value); });
    filterChecks();
  }));
"""
