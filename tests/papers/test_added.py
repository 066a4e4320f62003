"""Methods added to the papers' figures (issue 42): ``reproduce --with``, ``--from``, the
left-out sweeps, the unchanged paper checks and the comparison measures."""

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.cli import ssvmbench

from ssvmbench.common.errors import UserError
from ssvmbench.papers import added, comparison, presets, reproduce
from ssvmbench.plotting.curves import add_suboptimality
from ssvmbench.plotting.styles import ADDED_COLORS, curve_styles

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "reproduction"


def curve(method, passes, values, spread=0.0, data="ocr", reg=0.01):
    """Hand-built rows of aggregate()'s table: one curve with a band of +-``spread``."""
    values = np.asarray(values, float)
    return pd.DataFrame({"data": data, "data_variant": "v", "regularization": reg, "n": 100,
                         "method": method, "effective_pass": passes, "median": values,
                         "min": values - spread, "max": values + spread, "mean": values,
                         "std": spread})


PASSES = [1.0, 2.0, 4.0, 8.0]


def test_the_measures_on_curves_whose_answer_is_known():
    theirs = curve("bcfw", PASSES, [10, 5, 2.5, 1.25], spread=0.1)
    ours = curve("mine", PASSES, [5, 2.5, 1.25, 0.625], spread=0.1)      # half everywhere
    close = curve("close", PASSES, [10, 5, 2.5, 1.2], spread=0.5)        # inside the bands
    slow = curve("slow", PASSES, [20, 10, 5, 2.5], spread=0.1)           # double everywhere
    rows = comparison.pairs(pd.concat([theirs, ours, close, slow]), "suboptimality",
                            {"mine", "close", "slow"})
    mine, near, late = (rows[rows["method"] == m].iloc[0] for m in ("mine", "close", "slow"))
    assert (mine["checkpoints"], mine["better"], mine["worse"]) == (4, 4, 0)
    assert mine["reaches_at"] == 4.0 and mine["their_last"] == 8.0    # 1.25 at pass 4
    assert mine["relative"] == pytest.approx(0.5)
    assert (near["better"], near["worse"]) == (0, 0)     # bands overlap: neither
    assert near["reaches_at"] == 8.0 and near["relative"] == pytest.approx(1.2 / 1.25)
    assert (late["better"], late["worse"]) == (0, 4) and np.isnan(late["reaches_at"])
    assert set(rows["versus"]) == {"bcfw"}               # added curves are not compared
    line = comparison.headline(rows, "suboptimality", "suboptimality", "mine", {"bcfw": "BCFW"},
                               lambda row: f"{row['data']}, λ={row['regularization']:g}")
    assert line == ("mine in suboptimality, against the best paper method of each panel at the "
                    "end (ends better in 1 of 1 panels): ocr, λ=0.01: 0.5x BCFW, reaches its "
                    "final value (pass 8) at pass 4; beyond the seed bands better at 4 of 4 "
                    "checkpoints, worse at 0.")
    never = comparison.headline(rows, "suboptimality", "suboptimality", "slow", {}, str)
    assert "never reaches its final value" in never and "worse at 4" in never


def test_a_growing_metric_is_better_upwards_and_compared_as_a_difference():
    theirs = curve("sap", PASSES, [0.80, 0.85, 0.88, 0.90])
    ours = curve("mine", PASSES, [0.86, 0.90, 0.91, 0.92])
    other = curve("l2", [1.0, 2.0], [0.7, 0.95])                      # best at its end
    rows = comparison.pairs(pd.concat([theirs, ours, other]), "test_accuracy", {"mine"},
                            log_scale=False)
    sap = rows[rows["versus"] == "sap"].iloc[0]
    assert (sap["better"], sap["worse"], sap["reaches_at"]) == (4, 0, 2.0)
    assert sap["relative"] == pytest.approx(0.02)
    l2 = rows[rows["versus"] == "l2"].iloc[0]           # compared inside its range only
    assert l2["checkpoints"] == 2 and l2["reaches_at"] != l2["reaches_at"]   # never: NaN
    best = comparison.best_at_end(rows, "test_accuracy")
    assert best["versus"].tolist() == ["l2"]              # 0.95 beats 0.90
    assert comparison.relative_text(0.02, False) == "+0.02"


@pytest.mark.filterwarnings("ignore:.*the best dual in the logs")
def test_the_reference_of_the_suboptimality_ignores_added_methods():
    """An added method's better dual would lower every paper curve's suboptimality."""
    df = pd.DataFrame({"data": "ocr", "data_variant": "v", "lambda": 0.1, "l1": 0.0,
                       "primal": [1.0, 0.9, 0.8], "dual": [0.5, 0.6, 0.7],
                       "added": [None, None, "mine"]})
    out = add_suboptimality(df)
    assert out["suboptimality"].tolist() == pytest.approx([0.4, 0.3, 0.2])   # from 0.6
    alone = add_suboptimality(df[df["added"].notna()])          # only added rows: theirs
    assert alone["suboptimality"].tolist() == pytest.approx([0.1])


def test_an_added_method_has_one_colour_of_its_own():
    styles = curve_styles(["bcfw", "mine", "mine-wavg", "ssg"], added=["mine"])
    assert styles["mine"]["color"] == styles["mine-wavg"]["color"] == ADDED_COLORS[0]
    assert styles["mine"]["linestyle"] != styles["mine-wavg"]["linestyle"]
    assert styles["bcfw"]["color"] not in ADDED_COLORS
    assert list(styles)[-2:] == ["mine", "mine-wavg"]              # last in the legend


@pytest.mark.parametrize("words, message", [
    (["data=conll2000"], "solver=NAME"),
    (["solver=bcfw", "seed=3"], "seed=3 is not a method setting"),
    (["solver=bcfw", "solver.passes=5"], "solver.passes=5 is not a method setting"),
    (["solver=bcfw", "solver=ssg"], "solver=NAME"),
])
def test_a_method_is_its_solver_and_oracle_settings(words, message):
    with pytest.raises(UserError, match=re.escape(message)):
        added.methods([{"words": words, "label": None}])


def test_methods_are_labelled_apart():
    chosen = added.methods([{"words": ["solver=bcfw", "solver.sampling=permutation"],
                             "label": None}, {"words": ["solver=gap_bcfw"], "label": "gap"}])
    assert [m.label for m in chosen] == ["bcfw solver.sampling=permutation", "gap"]
    assert chosen[0].folder == "bcfw-sampling=permutation"
    with pytest.raises(UserError, match="two methods have the label 'x'"):
        added.methods([{"words": ["solver=bcfw"], "label": "x"},
                       {"words": ["solver=ssg"], "label": "x"}])
    with pytest.raises(UserError, match="names one of its own curves"):
        added.plan(["bcfw_figure2_ocr"], "smoke", "OUT",
                   added.methods([{"words": ["solver=ssg"], "label": "BCFW"}]))


def test_as_names_the_with_before_it():
    parser = argparse.ArgumentParser()
    reproduce.configure_parser(parser)
    args = parser.parse_args(["bcfw_figure2_ocr", "--with", "solver=gap_bcfw", "--as", "G",
                              "--with", "solver=ssg"])
    assert args.methods == [{"words": ["solver=gap_bcfw"], "label": "G"},
                            {"words": ["solver=ssg"], "label": None}]
    with pytest.raises(SystemExit):
        parser.parse_args(["bcfw_figure2_ocr", "--as", "G"])


def test_sweeps_of_one_name_are_one_set_of_runs():
    """Presets share runs through a sweep's name (its logs folder): two presets giving one
    name different words would each plot the other's runs (BCFW Figure 4's extra lambda in
    Figure 1d-e's figure)."""
    seen = {}
    for name in presets.available():
        for sweep, words in presets.load(name)["sweeps"].items():
            assert " ".join(seen.setdefault(sweep, words).split()) == " ".join(words.split()), \
                (name, sweep)


def test_with_sweeps_of_one_name_are_one_sweep_and_set_no_method():
    seen = {}
    for name in presets.available():
        for sweep, words in (presets.load(name).get("with") or {}).items():
            assert seen.setdefault(sweep, words) == words, (name, sweep)
            assert not any(presets.is_method_setting(w) for w in words.split())
    assert len(seen) >= 10 and all(presets.load(n).get("with") for n in presets.available())


def test_a_method_that_cannot_run_on_a_sweep_is_left_out_with_its_reason(data_root,
                                                                          treebank_root,
                                                                          conll2000_root):
    l2 = added.methods([{"words": ["solver=bcfw"], "label": "B"}])
    plan = added.plan(["sap_figure3"], "smoke", "OUT", l2)       # an elastic-net figure
    assert not plan.jobs and plan.added == {"sap_figure3": []}
    assert len(plan.skipped) == 1
    assert plan.skipped[0].startswith("skipped: B on sap_rho1 (sap_figure3, 8 of 8 runs): "
                                      "solver bcfw minimizes the L2-regularized objective")
    mixed = added.plan(["sap_figure1_ocr"], "smoke", "OUT", l2)  # rho1 = 0.7 and 0 (L2)
    assert len(mixed.jobs) == 2 and "(sap_figure1_ocr, 2 of 4 runs)" in mixed.skipped[0]
    topk = added.methods([{"words": ["solver=bcfw", "oracle=topk"], "label": "T"}])
    plan = added.plan(["bcfw_figure2_ocr"], "smoke", "OUT", topk)
    assert not plan.jobs and "takes oracle=max, not oracle=topk" in plan.skipped[0]


def test_from_refuses_traces_of_another_size(tmp_path):
    result = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--from",
                       str(COMMITTED), "--with", "solver=gap_bcfw", "--out",
                       str(tmp_path / "out"), "--dry-run", cwd=tmp_path, check=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "traces are full-size, and --size smoke runs would not compare" in result.stderr
    missing = ssvmbench("reproduce", "bcfw_figure2_ocr", "--from", str(tmp_path),
                        "--with", "solver=gap_bcfw", "--dry-run", cwd=tmp_path, check=False)
    assert missing.returncode == 2 and "no bcfw_figure2_ocr/traces.parquet" in missing.stderr
    alone = ssvmbench("reproduce", "bcfw_figure2_ocr", "--from", str(COMMITTED), "--dry-run",
                      cwd=tmp_path, check=False)
    assert alone.returncode == 2 and "give --with" in alone.stderr


def test_full_size_from_the_committed_traces_makes_only_the_added_runs(data_root, tmp_path):
    dry = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "full", "--from",
                    str(COMMITTED), "--with", "solver=gap_bcfw", "--out", str(tmp_path / "o"),
                    "--dry-run", cwd=tmp_path).stdout
    assert "1 sweep, 30 runs of up to 100 passes" in dry     # 3 lambdas x 10 seeds
    assert "the papers' methods from the traces in" in dry
    assert re.search(r"plot \S+/bcfw_figure2_ocr/traces.parquet -o", dry)


def test_with_from_a_smoke_reproduction_keeps_the_paper_checks(data_root, tmp_path):
    """The papers' runs once, then a method beside them from their traces: only its runs
    are made (as many as --dry-run counts), its curve is in the figures, page and tables,
    it is compared, and every paper check reads as without it."""
    paper, mine = tmp_path / "paper", tmp_path / "mine"
    ssvmbench("reproduce", "bcfw_figure3_ocr", "--size", "smoke", "--out", str(paper),
              cwd=tmp_path)
    words = ["reproduce", "bcfw_figure3_ocr", "--size", "smoke", "--from", str(paper),
             "--with", "solver=bcfw", "solver.sampling=permutation", "--as", "BCFW, perm",
             "--out", str(mine)]
    dry = ssvmbench(*words, "--dry-run", cwd=tmp_path).stdout
    planned = int(re.search(r"(\d+) runs of up to", dry).group(1))
    ssvmbench(*words, cwd=tmp_path)
    made = sorted((mine / "logs").rglob("run.h5"))
    assert len(made) == planned == 3 * 2                    # 3 lambdas x 2 seeds
    assert all("added" in log.parts for log in made)
    assert (mine / "checks.csv").read_bytes() == (paper / "checks.csv").read_bytes()
    compared = pd.read_csv(mine / "comparisons.csv")
    assert set(compared["method"]) >= {"BCFW, perm"} and len(compared) > 0
    assert set(compared["figure"]) == {"suboptimality", "test_error"}
    report = (mine / "report.md").read_text()
    assert "### The added methods against the paper's" in report
    assert "- BCFW, perm in primal suboptimality, against the best paper method" in report
    page = (mine / "report.html").read_text()
    assert page.count('class="comparison"') >= 2 and "BCFW, perm" in page
    summary = (mine / "bcfw_figure3_ocr" / "summary.md").read_text()
    assert "| BCFW, perm |" in summary


def test_the_committed_example_is_re_derived_from_its_traces(tmp_path):
    """results/examples/compare_gap_bcfw: the report, its checks (equal to the committed
    reproduction's for the same preset) and the comparison come back from the traces."""
    example = COMMITTED.parent / "examples" / "compare_gap_bcfw"
    copy = tmp_path / "example"
    (copy / "bcfw_figure2_ocr").mkdir(parents=True)
    (copy / "bcfw_figure2_ocr" / "traces.parquet").write_bytes(
        (example / "bcfw_figure2_ocr" / "traces.parquet").read_bytes())
    ssvmbench("report", str(copy), cwd=tmp_path)
    for table in ("checks.csv", "comparisons.csv"):
        assert (copy / table).read_bytes() == (example / table).read_bytes(), table
    paper = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    assert pd.read_csv(example / "checks.csv", keep_default_na=False).equals(
        paper[paper["preset"] == "bcfw_figure2_ocr"].reset_index(drop=True))
