"""Issue 33: sweep figures that read: a colour per curve, text inside the figure, log ticks in
one style with at least two labels, and the paper's names of the methods."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from ssvmbench.cli import main
from ssvmbench.common.errors import UserError
from ssvmbench.papers import presets
from ssvmbench.papers.presets import load_names
from ssvmbench.papers.report import _plot_options
from ssvmbench.plotting import figures
from ssvmbench.plotting.curves import add_suboptimality, aggregate, curve_labels
from ssvmbench.plotting.names import figure_names, paper_names, settings_apart
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.plotting.ticks import log_ticks
from ssvmbench.run.runlog import load_logs

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "reproduction"
LONG = ["sc_svrg-average-extrapolation-expo-lr=0.02-topk-K5-mu2-ties=casimir",
        "sc_svrg-const-average-prev_iterate-L=32-topk-K5-mu1-ties=casimir",
        "svrg-average-lr=0.02-topk-K5-mu1-ties=casimir", "sgd-gamma0=0.02-t0=150000-wavg",
        "sgd-pegasos-wavg", "bcfw-wavg"]


def stats(methods, panels=(0.01,), variant="v", low=0.2, high=0.8):
    """``aggregate``'s table: per panel (lambda) and method a curve over passes 1..8."""
    rows = [{"data": "ocr", "data_variant": variant, "regularization": lam, "method": m,
             "effective_pass": p, "n": 100, "reference": "best dual",
             **dict.fromkeys(["median", "min", "max", "mean"],
                             low + (high - low) * (k + 1) / (len(methods) + 1) / p),
             "std": 0.0}
            for lam in panels for k, m in enumerate(methods) for p in (1.0, 2.0, 4.0, 8.0)]
    return pd.DataFrame(rows)


def draw(table, y="test_metric", names=None, log_y=False):
    labels = table["method"].unique()
    names = names or {}
    fig = figures.draw(table, "effective_pass", figures.FIGURES[y][0], log_y,
                           curve_styles(labels, names), names=names)
    fig.draw_without_rendering()
    return fig


def outside(fig):
    """The texts drawn (visible, not empty; tick labels of ticks in view) whose extent leaves
    the figure."""
    ticks = [tick for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks()
             if ax.get_visible() and tick.get_visible()
             and min(axis.get_view_interval()) <= tick.get_loc() <= max(axis.get_view_interval())]
    labels = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
              for tick in axis.get_major_ticks() + axis.get_minor_ticks()
              for t in (tick.label1, tick.label2)}
    texts = [t for t in fig.findobj(Text) if id(t) not in labels and all(
        a.get_visible() for a in (t, getattr(t, "axes", None) or t) if a is not None)]
    texts += [t for tick in ticks for t in (tick.label1, tick.label2)]
    box = fig.bbox
    return [t.get_text() for t in texts
            if t.get_visible() and t.get_text() and (
                (e := t.get_window_extent()).x0 < box.x0 - 1 or e.x1 > box.x1 + 1
                or e.y0 < box.y0 - 1 or e.y1 > box.y1 + 1)]


def colours(ax):
    return [line.get_color() for line in ax.get_lines()]


def test_variants_of_one_solver_have_distinct_colours_in_a_panel():
    """The rho1 variants of SAP and the K variants of SC-SVRG: every line of a panel in
    its own colour (the solver's marker kept)."""
    variants = ["sap-rho1=0.1", "sap-rho1=0.3", "sap-rho1=0.5", "sap-rho1=0.9",
                "sc_svrg-K2", "sc_svrg-K5", "sc_svrg-K10", "l1_subgradient-rho1=0.9"]
    fig = draw(stats(variants, panels=(0.01, 0.1)))
    for ax in fig.axes:
        if ax.get_visible():
            assert len(ax.get_lines()) == len(variants)
            assert len(set(colours(ax))) == len(variants)
            markers = {line.get_label(): line.get_marker() for line in ax.get_lines()}
            assert len({markers[v] for v in variants[:4]}) == 1


@pytest.mark.parametrize("panels", [(0.01,), (0.1, 0.01, 0.001)])
def test_every_text_fits_the_figure(panels):
    """The long test_metric label, long curve labels and a long data variant: nothing
    clipped in a one-panel or a three-panel figure (the legend wraps and takes fewer
    columns)."""
    variant = "conll2000: the first 0.38 of train (3396 of 8936 sentences), SAP's templates"
    fig = draw(pd.concat([stats(LONG, panels, variant=variant), stats(LONG, variant="v")]))
    assert outside(fig) == [] and variant[:20] in fig.axes[0].get_title()
    assert "test metric" in fig.axes[0].get_ylabel()
    fig = draw(stats(LONG, panels), y="suboptimality", log_y=True)
    assert outside(fig) == []


def test_without_wrapping_the_long_label_is_clipped():
    """The check above can fail: the same label on one line leaves a one-panel figure."""
    fig = Figure(figsize=(4.5, 3.6), layout="constrained")
    fig.subplots().set_ylabel(figures.FIGURES["test_metric"][0])
    fig.draw_without_rendering()
    assert outside(fig)


def tick_labels(axis):
    """The non-empty tick labels of ``axis`` inside its view."""
    low, high = sorted(axis.get_view_interval())
    return [tick.label1.get_text() for tick in axis.get_major_ticks() + axis.get_minor_ticks()
            if tick.label1.get_visible() and tick.label1.get_text()
            and low * (1 - 1e-9) <= tick.get_loc() <= high * (1 + 1e-9)]


@pytest.mark.parametrize("limits", [(1e-7, 1e3), (1.1, 25), (1.5, 9), (3, 8), (0.2, 0.9),
                                    (1000, 4100), (0.95, 1.8), (1.02, 1.3)])
def test_log_axes_label_at_least_two_ticks_in_one_style(limits):
    """Decades as 10^k, between them c x 10^k, plain numbers only where the range is less
    than a factor of two (no 1..9 x 10^k tick fits twice); never fewer than two labels."""
    fig = Figure(figsize=(4.5, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.plot([1, 2], limits)
    ax.set_yscale("log")
    log_ticks(ax.yaxis)
    ax.set_ylim(*limits)
    fig.draw_without_rendering()
    labels = tick_labels(ax.yaxis)
    assert len(labels) >= 2, labels
    if limits[1] / limits[0] >= 2.5:
        assert all(label.startswith("$") and "10^{" in label for label in labels), labels
    else:
        assert all(not label.startswith("$") for label in labels), labels


def test_names_from_patterns_keep_the_varied_settings_apart():
    names = {"sgd-gamma0={g}-t0=150000-wavg": "SGD",
             "sc_svrg-lr=0.02-topk-K{K}-mu2": "SC-SVRG-adapt K={K}",
             "sap-rho1={rho1}": "SAP"}
    labels = ["sgd-gamma0=0.02-t0=150000-wavg", "sgd-gamma0=0.04-t0=150000-wavg",
              "sc_svrg-lr=0.02-topk-K5-mu2", "sc_svrg-lr=0.02-topk-K10-mu2",
              "sap-rho1=0.1", "sap-rho1=0.9", "bcfw-wavg"]
    panels = [set(labels[:1] + labels[2:]), set(labels[1:])]   # the SGDs in different panels
    named = paper_names(labels, names, panels)
    assert named == {"sgd-gamma0=0.02-t0=150000-wavg": "SGD",
                     "sgd-gamma0=0.04-t0=150000-wavg": "SGD",
                     "sc_svrg-lr=0.02-topk-K5-mu2": "SC-SVRG-adapt K=5",
                     "sc_svrg-lr=0.02-topk-K10-mu2": "SC-SVRG-adapt K=10",
                     "sap-rho1=0.1": "SAP rho1=0.1", "sap-rho1=0.9": "SAP rho1=0.9",
                     "bcfw-wavg": "bcfw-wavg"}
    assert settings_apart(["cutting_plane-epsilon=1e-08-best", "cutting_plane-best"]) == {
        "cutting_plane-epsilon=1e-08-best": "epsilon=1e-08", "cutting_plane-best":
        "cutting_plane-best"}
    styles = curve_styles(labels, named)              # one name, one legend entry, one look
    assert styles["sgd-gamma0=0.02-t0=150000-wavg"] == styles["sgd-gamma0=0.04-t0=150000-wavg"]
    assert len({styles[label]["color"] for label in labels[1:]}) == len(labels) - 1


def test_bad_names_are_one_line_each(tmp_path):
    bad = tmp_path / "names.yaml"
    bad.write_text("sap-rho1={rho1}: SAP C={C}\n")
    with pytest.raises(UserError, match=r"uses \{C\}, which its pattern 'sap-rho1=\{rho1\}'"):
        load_names(str(bad))
    bad.write_text("sap-rho1={x}-C={x}: SAP\n")
    with pytest.raises(UserError, match="uses a {key} twice"):
        load_names(str(bad))
    bad.write_text("- sap\n")
    with pytest.raises(UserError, match="names must map curve labels"):
        load_names(str(bad))
    with pytest.raises(UserError, match="no such file"):
        load_names(str(tmp_path / "missing.yaml"))
    with pytest.raises(UserError, match="unknown preset 'bcfw_figure9'"):
        load_names("bcfw_figure9")
    assert load_names("casimir_figure3b_ner")      # a preset's names


def test_plot_names_the_curves_and_lists_what_is_behind_each_name(tmp_path, capsys):
    """``plot --names FILE``: the legend says the names, summary.md maps each name to our
    curve labels, their runs and the settings they share; a bad file writes nothing."""
    from helpers.logs import write_logs
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    names = tmp_path / "names.yaml"
    names.write_text("bcfw: BCFW\nbcfw-wavg: BCFW-wavg\nssg: SSG\n")
    out = tmp_path / "figures"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--names", str(names),
                 "--format", "svg"]) == 0
    svg = (out / "test_error.svg").read_text()
    assert all(f"<!-- {name} -->" in svg for name in ("BCFW", "BCFW-wavg", "SSG"))
    assert "<!-- bcfw -->" not in svg
    table = (out / "summary.md").read_text().splitlines()
    assert table[4:7] == ["| BCFW | bcfw | 3 (2 seeds) |  |",
                          "| BCFW-wavg | bcfw-wavg | 3 (2 seeds) |  |",
                          "| SSG | ssg | 2 (2 seeds) |  |"]
    names.write_text("bcfw: [BCFW]\n")
    assert main(["plot", str(tmp_path / "logs"), "-o", str(tmp_path / "new"),
                 "--names", str(names)]) == 2
    assert "give text on both sides" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def _plotted(name):
    """The committed traces of preset ``name`` as its figures plot them."""
    options = _plot_options(presets.load(name))
    df = add_suboptimality(load_logs(COMMITTED / name / "traces.parquet"))
    return figures.only(df, options.methods) if options.methods else df, options


COMMITTED_PRESETS = sorted(path.parent.name for path in COMMITTED.glob("*/traces.parquet")
                           if path.parent.name in presets.available())


@pytest.mark.parametrize("name", presets.available())
def test_every_curve_a_preset_checks_or_selects_has_the_papers_name(name):
    """Each preset names the curves its checks and --methods name (the paper's names), and
    each name pattern names a curve."""
    preset = presets.load(name)
    names = load_names(name)
    curves = set(_plot_options(preset).methods or [])
    for check in preset["checks"] or []:
        curves |= {c for key in ("curves", "lower", "upper") for c in check.get(key) or []}
    assert {c: paper_names([c], names)[c] for c in curves if paper_names([c], names)[c] == c
            } == {}


@pytest.mark.parametrize("name", COMMITTED_PRESETS)
def test_the_committed_figures_name_every_curve_and_every_name_is_used(name):
    df, options = _plotted(name)
    labels = set(curve_labels(df))
    names = load_names(name)
    named = paper_names(labels, names)
    assert [label for label in labels if named[label] == label] == []
    unused = [pattern for pattern in names
              if not any(paper_names([label], {pattern: "x"})[label] == "x" for label in labels)]
    assert unused == []


def test_casimir_figure2a_redrawn_from_its_traces_reads():
    """The figure the issue names: SGD and SGD with Pegasos' step in different colours,
    the paper's names in the legend, nothing clipped (the legend overflowed)."""
    df, options = _plotted("casimir_figure2a_ner")
    tables = {y: aggregate(df, y, options.x) for y in options.y}
    named = figure_names(tables.values(), load_names("casimir_figure2a_ner"))
    styles = curve_styles(list(named), named)
    for y, table in tables.items():
        fig = figures.draw(table, options.x, *figures.FIGURES[y], styles, options.band,
                               named)
        fig.draw_without_rendering()
        assert outside(fig) == []
        legend = [text.get_text() for text in fig.legends[0].get_texts()]
        assert legend == ["BCFW-wavg", "SGD Pegasos step (extra)", "SGD", "SVRG",
                          "SC-SVRG-const", "SC-SVRG-adapt"]
        for ax in fig.axes:
            assert len(set(colours(ax))) == len(ax.get_lines()) == 6
        lines = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines()}
        assert lines["SGD"] != lines["SGD Pegasos step (extra)"]
    assert np.isfinite(tables[options.y[0]]["mean"]).any()


def test_the_report_lists_the_curves_behind_each_name(tmp_path, capsys):
    """Under each figure of the report, the table of names: the paper's name, our curve
    label (the checks name it), its runs and settings."""
    import shutil
    shutil.copytree(COMMITTED / "casimir_figure2a_ner", tmp_path / "casimir_figure2a_ner")
    assert main(["report", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert ("| SC-SVRG-adapt | sc_svrg-average-extrapolation-expo-lr=0.02-topk-K5-mu2-ties=casimir"
            " | 30 (10 seeds) | solver=sc_svrg solver.lr=0.02 solver.decay_rule=expo ") in report
    assert "| SGD | sgd-gamma0=0.02-t0=150000-wavg | 10 (10 seeds) |" in report
    assert "reuse_stale" not in report            # how the Pegasos runs were run, not what
    assert "| SGD | sgd-gamma0=0.04-t0=150000-wavg | 20 (10 seeds) |" in report
    capsys.readouterr()
