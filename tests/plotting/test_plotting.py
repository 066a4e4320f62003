"""Plot data (suboptimality reference, aggregation over seeds, summary) and the plot command."""

import shutil

import numpy as np
import pandas as pd
import pytest
from helpers.logs import write_logs

from ssvmbench.cli import main
from ssvmbench.common.errors import UserError
from ssvmbench.papers.presets import paper_table
from ssvmbench.plotting.curves import add_suboptimality, aggregate, method_label
from ssvmbench.plotting.sap_tables import best_within, latex
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.run.runlog import load_logs


def table(**columns):
    base = dict(data="ocr", data_variant="v", method="bcfw", iterate="raw", effective_pass=1.0)
    n = len(next(iter(columns.values())))
    return pd.DataFrame({**{k: [v] * n for k, v in base.items()}, **columns})


def test_method_label():
    assert method_label("bcfw", "raw") == "bcfw"
    assert method_label("ssg", "wavg") == "ssg-wavg"


def test_suboptimality_uses_the_best_dual_of_the_group():
    df = table(**{"lambda": [0.1, 0.1, 0.1, 1 / 3, 1 / 3],
                  "primal": [1.0, 0.8, 0.9, 0.5, 0.7],
                  "dual": [0.6, 0.7, np.nan, np.nan, np.nan]})
    out = add_suboptimality(df)
    assert out["suboptimality"].round(6).tolist()[:3] == [0.3, 0.1, 0.2]
    assert out["suboptimality"].min() > 0
    # issue 32: no dual, no reference (the best primal would send its own curve to 1e-12)
    assert out["suboptimality"].iloc[3:].isna().all()
    assert out["reference"].tolist() == ["best dual"] * 3 + ["none"] * 2
    given = add_suboptimality(df, {("ocr", 0.333333333): 0.25})
    assert given["suboptimality"].iloc[3:].tolist() == pytest.approx([0.25, 0.45])
    assert given["reference"].iloc[3] == "given optimum"
    assert given["reference"].iloc[0] == "best dual"
    other_data = add_suboptimality(df.assign(data=["ocr"] * 3 + ["conll"] * 2))
    assert other_data["reference"].tolist() == out["reference"].tolist()


def test_aggregate_over_seeds():
    df = table(**{"lambda": [0.1] * 5, "primal": [1.0, 2.0, 4.0, 8.0, 9.0],
                  "seed": [0, 1, 2, 0, 1], "iterate": ["raw"] * 3 + ["wavg"] * 2,
                  "time_s": [1.0, 3.0, 2.0, 5.0, 7.0], "run": ["a", "b", "c", "a", "b"]})
    stats = aggregate(df, "primal", x="time_s").set_index("method")
    assert stats.loc["bcfw", ["median", "min", "max", "time_s"]].tolist() == [2.0, 1.0, 4.0, 2.0]
    assert stats.loc["bcfw-wavg", ["median", "min", "max"]].tolist() == [8.5, 8.0, 9.0]
    assert stats.loc["bcfw-wavg", ["mean", "std"]].tolist() == [8.5, pytest.approx(0.5 ** 0.5)]
    assert "time_s" not in aggregate(df, "primal")
    other_rate = df.assign(seed=[0, 1, 2, 0, 0], run=["a", "b", "c", "a", "d"])
    with pytest.raises(UserError, match="several runs of bcfw-wavg with seed 0"):
        aggregate(other_rate, "primal")


def test_best_within_recovers_C_rho1_and_the_paper_row():
    """Best test accuracy among checkpoints <= PASSES per run (SAP Table III), C and rho1
    mapped back from (lambda, l1) = (rho2, rho1) / (C n), the paper's row alongside."""
    n = 7200
    sap = dict(data="pos", method="sap", run="a", n=n, d=1000, seed=0,
               **{"lambda": 0.1 / (0.1 * n), "l1": 0.9 / (0.1 * n)})
    rows = [dict(sap, effective_pass=p, test_accuracy=acc, nnz=nz, time_s=p, data_variant="v")
            for p, acc, nz in ((1, 0.5, 10), (2, 0.9, 20), (3, 0.95, 30))]
    rows.append(dict(sap, run="b", method="bcfw", effective_pass=1, test_accuracy=0.8, nnz=999,
                     time_s=1, data_variant="v", l1=np.nan, **{"lambda": 1 / (0.1 * n)}))
    table = best_within(pd.DataFrame(rows).assign(iterate="raw"), 2, paper_table())
    assert table["method"].tolist() == ["bcfw", "sap"]
    bcfw, ours = table.to_dict("records")
    assert (ours["best_pass"], ours["accuracy_%"], ours["nnz"], ours["nnz_%"]) == (2, 90, 20, 2)
    assert (ours["C"], ours["rho1"]) == pytest.approx((0.1, 0.9))
    assert ours["paper"] == "Table II: 3089 NZ, 94.17 %; Table IV: 3967 NZ, 94.57 %"
    assert (bcfw["C"], bcfw["rho1"], bcfw["paper"]) == (0.1, 0.0, "")
    held_out = pd.DataFrame(rows).assign(iterate="raw", data_variant="v; validation: 0.2")
    assert set(best_within(held_out, 2, paper_table())["paper"]) == {""}   # not its test set
    assert latex(table).count(r"\\") == 3


def test_elastic_net_curves_share_the_panel_of_their_C():
    """SAP at rho1 = 0.9 and 0.7 and the L2 SSVM (l1 = 0) at the same C: one panel
    (lambda + l1 = 1/(C n)), three curves named by rho1; suboptimality per objective."""
    total = 0.01
    df = table(**{"method": ["sap", "sap", "bcfw"], "seed": [0, 0, 0], "run": ["a", "b", "c"],
                  "lambda": [0.1 * total, 0.3 * total, total], "l1": [0.9 * total, 0.7 * total, 0],
                  "primal": [3.0, 2.0, 1.0], "dual": [np.nan, np.nan, 0.5]})
    stats = aggregate(df, "primal")
    assert stats["regularization"].tolist() == pytest.approx([total] * 3)
    assert sorted(stats["method"]) == ["bcfw", "sap-rho1=0.7", "sap-rho1=0.9"]
    assert add_suboptimality(df)["reference"].tolist() == ["none"] * 2 + ["best dual"]


def test_plot_command_writes_figures_and_summary(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    out = tmp_path / "figures" / "new"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out)]) == 0
    names = ("suboptimality.png", "suboptimality.pdf", "test_error.png", "test_error.pdf",
             "provenance.csv", "summary.csv", "summary.md", "traces.parquet")
    assert sorted(capsys.readouterr().out.split()) == sorted(str(out / n) for n in names)
    for name in names:
        assert (out / name).stat().st_size > 100
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 2 * 2 + 2 + 2
    assert sorted(zip(summary["lambda"], summary["method"], summary["seed"])) == sorted(
        [(0.01, m, s) for m in ("bcfw", "bcfw-wavg", "ssg") for s in (0, 1)]
        + [(0.001, "bcfw", 0), (0.001, "bcfw-wavg", 0)])
    assert (summary["effective_pass"] == 4).all() and (summary["status"] == "finished").all()
    assert summary["seconds_per_pass"].round(6).eq(0.1).all()
    markdown = (out / "summary.md").read_text().splitlines()
    assert markdown[2] == "| in the figure | our curve | runs | settings |"
    assert markdown[4:7] == ["| bcfw | bcfw | 3 (2 seeds) |  |",      # no overrides logged
                             "| bcfw-wavg | bcfw-wavg | 3 (2 seeds) |  |",
                             "| ssg | ssg | 2 (2 seeds) |  |"]
    runs = markdown.index("Runs (the last checkpoint of each):")
    assert markdown[runs + 2].startswith("| data | lambda | solver | method | iterate |")
    assert len(markdown) == runs + 4 + len(summary)
    runs = pd.read_csv(out / "provenance.csv")
    assert len(runs) == 5 and set(runs["git_revision"]) == {"abc123"}
    assert set(runs["dataset_checksum"]) == {"d0d0"} and runs["run"].is_unique


def test_the_traces_a_plot_writes_redraw_it_without_the_logs(tmp_path, capsys):
    """Issue 32: ``plot`` writes every row it read to traces.parquet; plotting that file,
    with the logs gone, gives the same tables and the same traces byte for byte."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    first, again = tmp_path / "figures", tmp_path / "again"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(first), "--methods", "bcfw"]) == 0
    written = load_logs(tmp_path / "logs")
    shutil.rmtree(tmp_path / "logs")
    traces = load_logs(first / "traces.parquet")
    assert len(traces) == len(written) == 3 * (2 * 2 + 2 + 2)    # every curve, not only bcfw
    def values(df):                  # a missing value as None, whatever its type said
        return df.drop(columns="run").astype(object).where(df.notna(), None)
    pd.testing.assert_frame_equal(values(traces), values(written), check_dtype=False)
    assert main(["plot", str(first / "traces.parquet"), "-o", str(again),
                 "--methods", "bcfw"]) == 0
    for name in ("summary.csv", "provenance.csv", "traces.parquet"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name
    capsys.readouterr()


def test_plot_refuses_to_mix_objectives_in_a_panel(tmp_path, capsys):
    """Logs of another task loss at the same dataset and λ would share a suboptimality
    reference with these: refused, naming both."""
    for name, loss in (("a", "normalized_hamming"), ("b", "hamming")):
        (tmp_path / name).mkdir()
        write_logs(tmp_path / name, loss)
    assert main(["plot", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "mix loss 'normalized_hamming'" in err and "'hamming'" in err
    assert not (tmp_path / "out").exists()
    assert main(["plot", str(tmp_path / "b"), "-o", str(tmp_path / "out")]) == 0


def test_a_sweep_without_a_dual_draws_no_suboptimality(tmp_path, capsys):
    """Issue 32: SSG alone has no dual, so no reference its own curves do not define: its
    suboptimality panel stays empty and the plot says what to do, in one line."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    ssg = [run for run in (tmp_path / "logs").iterdir() if run.name.startswith("ssg")]
    with pytest.warns(UserWarning, match=r"ocr, lambda=0.01: no dual objective .* --y primal"):
        assert main(["plot", *map(str, ssg), "-o", str(tmp_path / "out")]) == 0
    df = add_suboptimality(load_logs(*ssg))
    assert df["suboptimality"].isna().all() and set(df["reference"]) == {"none"}
    capsys.readouterr()


def test_plot_only_some_curves(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    out = tmp_path / "only"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--methods", "bcfw-wavg"]) == 0
    assert set(pd.read_csv(out / "summary.csv")["method"]) == {"bcfw-wavg"}
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--methods", "nope"]) == 2
    assert "available" in capsys.readouterr().err


def test_plot_options_and_bad_optimum(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    optimum = tmp_path / "optimum.csv"
    optimum.write_text("data,lambda,value\nocr,0.01,0.3\n")
    out = tmp_path / "figures"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--format", "svg",
                 "--x", "time_s", "--optimum", str(optimum)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(out / n) for n in ("suboptimality.svg", "test_error.svg",
                                              "provenance.csv", "summary.csv", "summary.md",
                                              "traces.parquet")]
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--format", "png",
                 "--y", "primal", "test_metric", "--band", "std"]) == 0
    assert capsys.readouterr().out.split()[:2] == [str(out / "primal.png"),
                                                   str(out / "test_metric.png")]
    optimum.write_text("data,lam,value\nocr,0.01,0.3\n")
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--optimum", str(optimum)]) == 2
    assert "data,lambda,value" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "empty"), "-o", str(out)]) == 2
    assert "no run logs" in capsys.readouterr().err


def test_curve_styles_give_every_curve_its_colour_and_keep_the_solvers_marker():
    """Issue 33: no two curves of a figure share a colour (variants of one solver included);
    the solver keeps its marker, the iterate its line style, and no two curves share marker
    and line style, so that they stay apart without colour; a solver's plainest curve takes
    its colour (BCFW blue)."""
    figure1 = ["bcfw", "bcfw-wavg", "ssg", "ssg-wavg", "online_eg", "fw-best",
               "cutting_plane-epsilon=1e-08-best"]
    figure2 = ["bcfw", "bcfw-predefined", "fw", "fw-predefined"]
    sap = ["sap-rho1=0.1", "sap-rho1=0.9", "l1_subgradient", "bcfw", "mystery"]
    for labels in (figure1, figure2, sap):
        styles = curve_styles(labels)
        assert len({s["color"] for s in styles.values()}) == len(labels)
        assert len({(s["marker"], str(s["linestyle"])) for s in styles.values()}) == len(labels)
        assert curve_styles(list(reversed(labels))) == styles
    one, two = curve_styles(figure1), curve_styles(figure2)
    assert one["bcfw"]["color"] == two["bcfw"]["color"] == "C0"
    assert one["bcfw"]["marker"] == one["bcfw-wavg"]["marker"] != one["ssg"]["marker"]
    assert one["bcfw-wavg"]["linestyle"] == one["ssg-wavg"]["linestyle"] != one["bcfw"]["linestyle"]
    many = curve_styles([f"svrg-K{k}" for k in range(25)])      # past the palette: no error
    assert len({s["color"] for s in many.values()}) == 20


def test_lambda_is_labelled_as_the_papers_write_it():
    from ssvmbench.plotting.figures import lambda_label
    assert lambda_label(1 / 6251, 6251) == "1/n"
    assert lambda_label(0.1 / 14041, 14041) == "0.1/n"
    assert lambda_label(300 / 8936, 8936) == "300/n"
    assert lambda_label(0.01, 6251) == "0.01"          # a round value stays a value
    assert lambda_label(0.00317, None) == "0.00317"
    assert lambda_label(0.0031, 1000) == "0.0031"      # 3.1/n: not a round multiple


def test_figures_name_their_reference_keep_legends_off_the_curves_and_log_ticks(tmp_path):
    """Issue 20: one legend below the panels, the suboptimality reference said on the figure,
    the test error named per task (AER only for alignment); log ticks in one style (issue
    33, tests/plotting/test_plot_figures.py)."""
    from ssvmbench.plotting import figures
    from ssvmbench.plotting.ticks import LogLabels
    from ssvmbench.run.runlog import load_logs
    write_logs(tmp_path)
    df = add_suboptimality(load_logs(tmp_path))
    styles = curve_styles(aggregate(df, "primal", "effective_pass")["method"].unique())
    for y in ("suboptimality", "test_error"):
        fig = figures.draw(aggregate(df, y, "effective_pass"), "effective_pass",
                               *figures.FIGURES[y], styles)
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in axes)
        assert isinstance(axes[0].xaxis.get_minor_formatter(), LogLabels)
        if y == "suboptimality":
            assert "best dual objective in these logs" in fig._suptitle.get_text()
        else:
            assert {ax.get_ylabel() for ax in axes} == {"test error (task loss)"}
    aligned = aggregate(df.assign(data="alignment"), "test_error", "effective_pass")
    fig = figures.draw(aligned, "effective_pass", *figures.FIGURES["test_error"], styles)
    assert {ax.get_ylabel() for ax in fig.axes if ax.get_visible()} == {"test AER"}


def test_a_loose_suboptimality_reference_is_warned_about():
    """The best dual of a few short runs sits far below the optimum, and every curve then
    flattens at that gap (issue 20): the plot says so; a tight reference is quiet."""
    import warnings
    loose = table(**{"lambda": [0.1, 0.1], "primal": [1.0, 0.9], "dual": [0.5, 0.6]})
    with pytest.warns(UserWarning, match=r"ocr, lambda=0.1: the best dual .* flatten there"):
        add_suboptimality(loose)
    tight = table(**{"lambda": [0.1, 0.1], "primal": [1.0, 0.6000001], "dual": [0.5, 0.6]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add_suboptimality(tight)


def test_a_command_warns_of_its_loose_references_once_with_their_count():
    """``report`` derives every preset's figures: one warning counting the panels (each
    once) instead of one per panel and preset; other warnings pass unchanged."""
    import warnings

    from ssvmbench.plotting.curves import loose_references_counted
    loose = table(**{"lambda": [0.1, 0.1, 0.2, 0.2], "primal": [1.0, 0.9, 1.0, 0.9],
                     "dual": [0.5, 0.6, 0.5, 0.6]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with loose_references_counted(shown=1):
            add_suboptimality(loose)
            add_suboptimality(loose)                      # a second preset, same panels
            warnings.warn("another warning")
    assert [str(w.message).split(":")[0] for w in caught] == [
        "another warning", "the best dual objective is the optimum of 2 panels whose "
        "suboptimality curves flatten there, where it is far below the best primal"]
    assert "ocr, lambda=0.1 (0.3 below); ...; run longer" in str(caught[1].message)
