"""``ssvmbench report DIR``: the reproduction report of ``ssvmbench reproduce``'s output.

For every preset whose figures are in ``DIR/<preset>`` (all presets found, or those named),
``DIR/report.md`` shows the paper's claim, our figures and tables, and the preset's
``checks`` (:mod:`ssvmbench.papers.claims`) computed on the same rows and centre lines as the
figures: the traces ``plot`` wrote beside them (``DIR/<preset>/traces.parquet``), so that the
report of a committed reproduction is re-derived without its run logs; ``DIR/checks.csv``
lists the checks' results, and ``DIR/report.html`` shows the same as one interactive page
(:mod:`ssvmbench.papers.report_page`).

Methods added beside the papers' (``reproduce --with``: rows whose ``added`` column names
them) are drawn in the figures and compared with the papers' methods
(:mod:`ssvmbench.papers.comparison`; ``DIR/comparisons.csv``), apart from the checks: the checks,
their tally and the preset's deviations read the papers' runs only, so that an added curve
changes no verdict.
"""

import argparse
import datetime
import shlex
from pathlib import Path

import pandas as pd

from ssvmbench.batch.launchers import SLURM_STARTUP_S
from ssvmbench.common import messages
from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_text
from ssvmbench.papers import claims, comparison, presets, report_page
from ssvmbench.papers.presets import load_names
from ssvmbench.plotting import figures
from ssvmbench.plotting import options as plot_options
from ssvmbench.plotting.curves import (BANDS, PANEL, add_suboptimality, added_labels, added_rows,
                                       aggregate, check_panels, curve_labels,
                                       loose_references_counted)
from ssvmbench.plotting.names import curves_table, figure_names, settings_apart
from ssvmbench.run import traces
from ssvmbench.run.provenance import git_revision
from ssvmbench.run.runlog import load_logs


def configure_parser(parser):
    parser.add_argument("out", metavar="DIR",
                        help="the --out directory of `ssvmbench reproduce` (logs in DIR/logs)")
    parser.add_argument("--presets", nargs="+", metavar="PRESET",
                        help="report these presets or papers only (default: every preset "
                             "with figures in DIR)")


@loose_references_counted()
def main(args):
    out = Path(args.out)
    names = presets.expand(args.presets) if args.presets else [
        name for name in presets.available() if (out / name).is_dir()] + sorted(
        str(copy) for copy in out.glob(f"*/{presets.PRESET_COPY}")
        if copy.parent.name not in presets.available())
    stale = [name for name in names if not _traces(name, out).is_file()]
    names = [name for name in names if name not in stale]
    if not names:
        raise UserError(f"no preset figures with their {traces.NAME} under {out}; run "
                        f"`ssvmbench reproduce PRESET --out {out}` first")
    sections, pages, rows, runs, sized, compared, contents = [], [], [], [], {}, [], []
    loaded = []
    for name in names:
        preset = presets.load(name)
        df = load_logs(_traces(name, out))
        check_panels(df)
        options, drawn = plotted(preset, df)
        loaded.append((name, preset, df, options, drawn,
                       check_preset(preset, options, drawn[~added_rows(drawn)])))
    judged = iter(claims.across_presets([pair for *_, verdicts in loaded for pair in verdicts]))
    for name, preset, df, options, drawn, verdicts in loaded:
        verdicts = [next(judged) for _ in verdicts]
        runs.append(df.drop_duplicates("run"))
        lines, table = compare_added(preset, options, drawn)
        compared.append(table.assign(preset=presets.figure_dir(name),
                                     item=f"{preset['paper']} {preset['item']}"))
        figure_rows, named = _named(name, preset, df)
        checks = [{"preset": presets.figure_dir(name),
                   "item": f"{preset['paper']} {preset['item']}",
                   "check": claims.describe(check), "result": verdict.word,
                   "detail": verdict.detail, "quote": " ".join(check["quote"].split()),
                   "why": " ".join(check["why"].split()),
                   "deviation": check.get("not_comparable", ""),
                   "other_reading": _other_reading(check, verdict), "paper": preset["paper"],
                   "named": claims.describe(paper_named(check, named))}
                  for check, verdict in verdicts]
        rows += checks
        contents.append((presets.figure_dir(name), preset["paper"], preset["item"]))
        sized[name] = _deviations(name, preset, df[~added_rows(df)])
        compute = compute_time(runs[-1])
        extra = _added_compute(df)
        sections.append(_section(name, preset, out, verdicts, compute, sized[name],
                                 _curves(figure_rows, named))
                        + _comparison_section(lines, table, extra))
        pages.append(report_page.section(
            preset, out / presets.figure_dir(name), options, drawn,
            [(check["y"], row) for (check, _), row in zip(verdicts, checks)], sized[name],
            _compute(*compute), lines, extra))
    shown = pd.DataFrame(rows, columns=[*CHECKS, "paper", "named"])
    table = shown[CHECKS]
    write_text(out / "checks.csv", table.to_csv(index=False))
    comparisons = pd.concat(compared, ignore_index=True)
    if len(comparisons):
        write_text(out / COMPARISONS, comparisons[["preset", "item", *comparison.TABLE]]
                   .to_csv(index=False))
    else:
        (out / COMPARISONS).unlink(missing_ok=True)     # no added method: none to compare
    total = compute_time(pd.concat(runs).drop_duplicates("run"))
    small = sorted({presets.figure_dir(name) for name, deviations in sized.items()
                    if "size" in deviations})
    title, notes = f"Reproduction report: {out}", _notes(out, table, total, small, stale)
    if len(comparisons):
        methods = "; ".join(sorted(set().union(*(figures.added_methods(r) for r in runs))))
        notes += [f"**Added methods** ({methods}): drawn in every figure where they ran and "
                  f"compared with the papers' methods beside each figure ({COMPARISONS}); "
                  "the checks and their tally read the papers' runs only.", ""]
    write_text(out / "report.md", "\n".join([f"# {title}", "", *notes, _summary(shown), ""])
               + "\n".join(sections))
    write_text(out / "report.html", report_page.page(title, notes, shown, contents, pages))
    print(out / "report.md")
    print(out / "checks.csv")
    if len(comparisons):
        print(out / COMPARISONS)
    print(out / "report.html")
    return 0


COMPARISONS = "comparisons.csv"   # the added methods against the papers' (comparison.TABLE)
CHECKS = ["preset", "item", "check", "result", "detail", "quote", "why", "deviation",
          "other_reading"]      # the columns of checks.csv
# the fields of a check that name curves (with some numbers, which stay as they are)
CURVE_FIELDS = set().union(*claims.KINDS.values())


def paper_named(check, named):
    """The ``check`` with the curve labels in its fields replaced by their names in the
    figures (``named``: ``{label: name}``; a label not in it stays); labels of one name
    (curves of different panels) told apart as in a panel's legend
    (:func:`~ssvmbench.plotting.names.settings_apart`)."""
    fields = CURVE_FIELDS & set(check)
    labels = set(_strings([check[key] for key in fields]))
    own = {label: named.get(label, label) for label in labels}
    for name in set(own.values()):
        same = sorted(label for label in labels if own[label] == name)
        if len(same) > 1:
            own.update({label: f"{name} {apart}" for label, apart in
                        settings_apart(same).items()})

    def rename(value):
        if isinstance(value, str):
            return own[value]
        return [rename(v) for v in value] if isinstance(value, (list, tuple)) else value
    return {**check, **{key: rename(check[key]) for key in fields}}


def _strings(value):
    """The strings in ``value``, a string or nested lists (and numbers)."""
    if isinstance(value, str):
        return [value]
    return [s for v in value for s in _strings(v)] if isinstance(value, (list, tuple)) else []


def compare_added(preset, options, drawn):
    """``([(y, line)], table)``: per figure (``y`` of the plot options) and curve of an
    added method its :func:`~ssvmbench.papers.comparison.headline`, and the measures against every
    paper curve of the figure (:data:`~ssvmbench.papers.comparison.TABLE`), on the rows ``drawn``
    (:func:`plotted`) and the figure's centre lines and bands."""
    labels = added_labels(drawn)
    lines, tables = [], []
    if not labels:
        return lines, pd.DataFrame(columns=comparison.TABLE)
    center = BANDS[options.band][0]
    for y in options.y:
        stats = aggregate(drawn, y)
        quantity, log_scale = figures.FIGURES[y]
        pairs = comparison.pairs(stats, y, labels, center, log_scale)
        named = figure_names([stats], preset.get("names") or {}, labels)
        for label in sorted(set(pairs["method"])):
            lines.append((y, comparison.headline(pairs, y, quantity, label, named, _panel_name,
                                                 log_scale)))
        tables.append(comparison.table(pairs, y, named, _panel_name, log_scale))
    return lines, pd.concat(tables, ignore_index=True)


def _panel_name(row):
    """A panel's name in a comparison: ``ocr, λ=0.01`` (``1/n`` where the figure says so)."""
    return f"{row['data']}, λ={figures.lambda_label(row['regularization'], row['n'])}"


def _added_compute(df):
    """The compute sentence of the added methods' runs, or ``""`` without any."""
    runs = df[added_rows(df)].drop_duplicates("run")
    if runs.empty:
        return ""
    count, total, longest = compute_time(runs)
    return (f"{count} runs of the added methods, {messages.duration(total)} of run time, "
            f"longest {messages.duration(longest)}")


def _comparison_section(lines, table, compute):
    """Markdown: how the added methods compare (headlines, the measures' table, compute)."""
    if not lines:
        return ""
    parts = ["", "### The added methods against the paper's", "",
             "Apart from the checks above, which read the paper's runs only: per figure, the "
             "added curve against the best paper method of each panel at the end, then "
             "against every paper curve (measures: docs/guide/compare.md).", ""]
    parts += [f"- {line}" for _, line in lines]
    parts += ["", figures.markdown(table.drop(columns=["versus_curve", "ours_end",
                                                           "theirs_end"])),
              f"Compute: {compute}.", ""]
    return "\n".join(parts)


def _traces(name, out):
    """The traces file the preset's figures were drawn from (``ssvmbench plot`` writes it)."""
    return out / presets.figure_dir(name) / traces.NAME


def plotted(preset, df):
    """The preset's plot options and the rows of ``df`` (its logs) that its figures draw:
    its curves only, with their suboptimality."""
    options = _plot_options(preset)
    df = add_suboptimality(df, figures.read_optimum(options.optimum))
    if options.methods:
        df = figures.only(df, options.methods)
    return options, df


def check_preset(preset, options, df):
    """``[(check, Verdict)]`` of the preset's checks on the rows ``df`` its figures draw
    (:func:`plotted`: same optimum and curves), on their centre lines (median or mean, per
    the plot ``options``)."""
    center = BANDS[options.band][0]
    stats = {}

    def verdict_of(check):
        key = (check["y"], check.get("best_of"))
        if key not in stats:
            stats[key] = _stats(df, *key, center)
        return claims.evaluate(check, stats[key], center)

    verdicts = []
    for check in preset["checks"] or []:
        verdict = verdict_of(check)
        if "alternative" in check:
            verdict.other = verdict_of(claims.reading(check))
        verdicts.append((check, verdict))
    return verdicts


def _other_reading(check, verdict):
    """What the check's alternative reading gives, in words (``""`` without one)."""
    if verdict.other is None:
        return ""
    other = claims.reading(check)
    return (f"{' '.join(other['why'].split())} ({claims.describe(other)}): "
            f"{verdict.other.word}, {verdict.other.detail}")


def _stats(df, y, best_of, center):
    """:func:`aggregate`'s table of ``y``, with the ``center`` of ``best_of`` as the column
    ``best_of`` when a check picks its checkpoint by that column."""
    table = aggregate(df, y)
    if best_of is None:
        return table
    keys = PANEL + ["method", "effective_pass"]
    other = aggregate(df, best_of)[keys + [center]].rename(columns={center: "best_of"})
    return table.merge(other, on=keys, how="left")


def compute_time(runs):
    """``(number of runs, sum of their run times, longest run time)`` in seconds, one row
    per run: its log's ``run_s`` (the time it ran, pauses of a continued run left out), or
    for logs without it ``finished - started`` (an unfinished run counts 0)."""
    started = pd.to_datetime(runs["started"], errors="coerce", utc=True)
    finished = pd.to_datetime(runs["finished"], errors="coerce", utc=True)
    seconds = (finished - started).dt.total_seconds()
    if "run_s" in runs:
        ran = pd.to_numeric(runs["run_s"], errors="coerce").where(finished.notna())
        seconds = ran.fillna(seconds)
    return len(runs), float(seconds.fillna(0).sum()), float(seconds.max())


def _named(name, preset, df):
    """The rows of ``df`` the preset's figures draw and ``{curve label: its name in the
    figures}`` (the preset's ``names``, curves of a panel kept apart)."""
    options = _plot_options(preset)
    plotted = figures.only(df, options.methods) if options.methods else df
    named = figure_names([aggregate(plotted, "primal")], load_names(name))
    return plotted, named


def _curves(plotted, named):
    """Markdown: the names the preset's figures give its curves and what is behind each
    (:func:`~ssvmbench.plotting.names.curves_table`)."""
    return figures.markdown(curves_table(plotted.assign(method=curve_labels(plotted)),
                                              named))


def _plot_options(preset):
    """The preset's plot options as ``ssvmbench plot`` parses them (optimum, curves, band;
    ``{passes}`` only sets the tables' range, not read here)."""
    parser = argparse.ArgumentParser()
    plot_options.configure_parser(parser)
    options = preset["plot"].replace("{passes}", "1")
    return parser.parse_args(["LOGS", "-o", "OUT", *shlex.split(options)])


def _compute(runs, total, longest):
    """Measured compute and the wall time it implies on 2 cores and on a cluster (the
    longest run and a task's start-up, :data:`~ssvmbench.batch.launchers.SLURM_STARTUP_S`)."""
    duration = messages.duration
    cluster = longest + SLURM_STARTUP_S
    return (f"{runs} runs, {duration(total)} of run time in all (their logs' start to finish, "
            "less any pause of a continued run), "
            f"longest run {duration(longest)}: about {duration(total / 2)} on 2 cores with "
            f"`hydra/launcher=local hydra.launcher.n_jobs=2`, about {duration(cluster)} on a "
            f"cluster with {runs} or more cores (`hydra/launcher=slurm`: the longest run and "
            f"{SLURM_STARTUP_S:.0f} s of a task's start-up), plus queueing.")


def _summary(shown):
    """Markdown: per paper its tally of verdicts, then the table of every check's verdict,
    the checks in the papers' curve names (``shown``: the checks with ``paper`` and
    ``named``)."""
    lines = [f"- **{paper}**: " + " / ".join(f"{count} {word}" for word, count in
                                             report_page.tally(group["result"]))
             for paper, group in shown.groupby("paper", sort=False)]
    table = shown[["preset", "item", "named", "result"]].rename(columns={"named": "check"})
    return "\n".join(["Verdicts per paper:", "", *lines, "", figures.markdown(table)])


def _notes(out, table, total, small, stale):
    """The report's opening paragraphs (Markdown lines, each followed by an empty one):
    presets left out or smaller than the papers', provenance, verdict counts, compute."""
    counts = table["result"].value_counts()
    verdicts = ", ".join(f"{counts.get(word, 0)} {word}" for word in
                         (*claims.WORDS.values(), claims.NOT_COMPARABLE))
    evidence = int(sum(counts.get(word, 0) for word in set(claims.EVIDENCE.values()) - {"n/a"}))
    if evidence:
        verdicts += (f"; apart from these, {evidence} check{'s' * (evidence > 1)} of the "
                     "project's own explanations of a deviation (\"evidence: holds\" or "
                     "\"fails\"), which say nothing about the papers")
    lines = []
    if stale:
        folders = ", ".join(presets.figure_dir(name) for name in stale)
        lines += [f"**Not in this report** ({len(stale)} presets: {folders}): their folders hold "
                  f"no {traces.NAME}, so their checks cannot be derived; `ssvmbench reproduce "
                  f"PRESET --out {out}` writes it (finished runs are kept).", ""]
    if small:
        lines += [f"**Smaller than the papers' runs** ({len(small)} of "
                  f"{table['preset'].nunique()} presets: {', '.join(small)}; fewer passes or "
                  "training data, listed as "
                  "\"size\" under each): their checks test the pipeline and say nothing about "
                  "the papers.", ""]
    lines += [f"Written by `ssvmbench report` on {datetime.date.today()} at git revision "
              f"{git_revision()[:12]}. Each section quotes the paper's claim, shows our figures "
              "(median over seeds with min-max band, or mean +- one standard deviation where "
              "the paper shows that) and checks the claim on the plotted lines.", "",
              f"Checks: {verdicts}. Each check quotes the sentence it tests and says why its "
              "reading of the words is fair; \"not comparable here\" names the deviation from "
              "the paper (listed under each figure) that makes the comparison moot; n/a: a "
              "curve or the pass range is missing from the logs.", "",
              "Compute: " + _compute(*total), ""]
    return lines


def _cell(text):
    """Text for one Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _deviations(name, preset, df):
    """The preset's deviations from the paper, plus the seeds when its logs hold fewer per
    curve than the full size runs (the paper's number; deterministic methods run one)."""
    deviations = dict(preset["deviations"] or {})
    ran = int(df.groupby("method")["seed"].nunique().max())
    full = preset["sizes"]["full"]["seeds"]
    if ran < full:
        deviations["seeds"] = (f"{ran} random run{'s' * (ran > 1)} per curve here, {full} in "
                               f"the paper (`ssvmbench reproduce {name} --size full` runs them "
                               "all; finished runs are kept)")
    size = presets.smaller_than_full(preset, df)
    if size:
        deviations["size"] = (f"{size}: a run of the pipeline, not of the paper's setting "
                              f"(`ssvmbench reproduce {name} --size full`)")
    return deviations


def _section(name, preset, out, verdicts, compute, deviations, curves):
    folder = presets.figure_dir(name)
    lines = [f"## {preset['paper']} {preset['item']} (`{folder}`)", "",
             "> " + " ".join(preset["claim"].split()), ""]
    lines += [f"![{png.stem}]({folder}/{png.name})"
              for png in sorted((out / folder).glob("*.png"))]
    lines += ["", "The curves: their names in the figures, our curve labels (which the checks "
              "name), their runs and the settings these share:", "", curves]
    if deviations:
        lines += ["What still differs from the paper:", ""]
        lines += [f"- **{key}**: {' '.join(str(text).split())}"
                  for key, text in deviations.items()]
        lines.append("")
    for table in ("best_within.md",):
        if (out / folder / table).is_file():
            lines += [f"Table ({table}, LaTeX in best_within.tex):", "",
                      (out / folder / table).read_text()]
    if verdicts:
        lines += ["| the paper says | check (why this reading) | result | detail |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| \"{_cell(check['quote'])}\" | {_cell(claims.describe(check))} "
                  f"({_cell(check['why'])}) | **{verdict.word}** | {_cell(verdict.detail)}"
                  + (f"; deviation: {check['not_comparable']}" if not verdict.comparable
                     else "")
                  + (f"; the other reading, {_cell(_other_reading(check, verdict))}"
                     if verdict.other else "") + " |"
                  for check, verdict in verdicts]
    else:
        lines.append("No automatic check: the claim is read off the figure or table.")
    lines += ["", f"Runs: [{folder}/provenance.csv]({folder}/provenance.csv) lists every log "
              "behind these figures (overrides, seed, git revision, dataset checksum).", "",
              "Compute: " + _compute(*compute), ""]
    return "\n".join(lines)
