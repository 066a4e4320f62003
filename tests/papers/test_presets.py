"""Experiment presets (configs/experiment/): every preset is valid, a sweep name means the
same runs in every preset, and the smoke sizes run end to end through ``ssvmbench run -m``
and ``ssvmbench plot``, resuming when run again, and ``ssvmbench report`` checks their claims."""

import argparse
import re
import shlex
import shutil
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.cli import command, ssvmbench

from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import duration
from ssvmbench.papers import presets as presets_module
from ssvmbench.papers import reproduce as reproduce_module
from ssvmbench.papers.presets import available, commands, expand, load
from ssvmbench.plotting import options as plot_options

PRESETS = available()


def test_presets_cover_every_figure_and_table_of_the_three_papers():
    items = {(load(name)["paper"], load(name)["item"]) for name in PRESETS}
    assert items == {("BCFW", f"Figure {k}") for k in ("1a-c", "1d-e", "1f", 2, 3, 4, 5)} | {
        ("Casimir", f"Figure {k}") for k in ("2a", "2b", "3a", "3b")} | {
        ("SAP", k) for k in ("Figure 1", "Figure 2 / Table III", "Table II", "Figure 3",
                             "Table IV", "Figure 3 (CoNLL-2000 at the POS sample's size)")}


def test_a_sweep_name_is_the_same_sweep_in_every_preset():
    seen = defaultdict(set)
    for name in PRESETS:
        for sweep, overrides in load(name)["sweeps"].items():
            seen[sweep].add(" ".join(overrides.split()))
    assert all(len(variants) == 1 for variants in seen.values()), seen


@pytest.mark.parametrize("name", PRESETS)
def test_preset_commands(name):
    """Full size: the paper's seeds in every seeded sweep; smoke: two seeds, the data
    subset; the plot options parse."""
    preset = load(name)
    for size in ("full", "smoke"):
        steps = commands(name, size, "OUT")
        spec = preset["sizes"][size]
        seeds = ",".join(map(str, range(spec["seeds"])))
        for step in steps[:-1]:
            assert step[:2] == ["run", "-m"]
            assert len([w for w in step if w.startswith("solver.passes=")]) == 1
            assert any(word.startswith("hydra.sweep.dir=OUT/logs/") for word in step)
            assert not any("{" in word for word in step)
            if any(word.startswith("seed=") for word in step):
                assert f"seed={seeds}" in step
        if size == "smoke":
            assert spec["seeds"] <= 2 and spec["passes"] <= 2 and all(
                word in step for step in steps[:-1] for word in shlex.split(spec["overrides"]))
        parser = argparse.ArgumentParser()
        plot_options.configure_parser(parser)
        args = parser.parse_args(steps[-1][1:])
        assert args.out == f"OUT/{name}" and len(args.logs) == len(preset["sweeps"])


def test_overrides_replace_the_sweeps_value_of_the_same_key():
    """Casimir Figure 2b on the real VOC 2007 features instead of the synthetic scenes."""
    extra = ["data=voc", "data.object_class=cat", "hydra/launcher=joblib"]
    for step in commands("casimir_figure2b_voc", "full", "OUT", extra)[:-1]:
        assert "data=voc_synthetic" not in step and step.count("data=voc") == 1
        assert step[-4:-1] == extra and step[-1].startswith("hydra.sweep.dir=")
    smoke = commands("bcfw_figure2_ocr", "smoke", "OUT", ["+data.subset=0.5", "seed=3"])[0]
    assert "+data.subset=0.05" not in smoke and "+data.subset=0.5" in smoke
    assert "seed=0,1" not in smoke and "seed=3" in smoke


def test_a_sweeps_own_passes_hold_at_full_size_only():
    """SAP Table II validates the L1 radius over 100 passes at full size; a smoke run keeps
    its few passes for every sweep."""
    full = commands("sap_table2", "full", "OUT")[0]
    smoke = commands("sap_table2", "smoke", "OUT")[0]
    assert full[-1].endswith("l1_validation") and "solver.passes=100" in full
    assert "solver.passes=100" not in smoke and "solver.passes=1" in smoke


def test_unknown_preset_and_size_are_refused():
    with pytest.raises(UserError, match="bcfw_figure2_ocr"):
        commands("bcfw_figure9", "full", "OUT")
    with pytest.raises(UserError, match="sizes"):
        commands(PRESETS[0], "huge", "OUT")


def test_smoke_presets_end_to_end_and_resume(data_root, conll2000_root, conll2003_root,
                                              treebank_root, brown_root, hansards_root,
                                              tmp_path):
    """Every preset at its smoke size, through the three scripts/reproduce_*.sh (one batch
    each, one worker); then one preset again: it runs nothing (its runs, shared with Figures
    1a-c and 3, are finished) and redraws its figures."""
    out = tmp_path / "smoke"
    options = ("--size", "smoke", "--out", str(out))
    for paper in sorted({name.split("_")[0] for name in PRESETS}):   # bcfw, casimir, sap
        script = Path(__file__).resolve().parents[2] / "scripts" / f"reproduce_{paper}.sh"
        command(["bash", str(script), "smoke", "--out", str(out)], cwd=tmp_path, timeout=1800)
    logs = sorted((out / "logs").rglob("run.h5"))
    for name in PRESETS:
        figures = list((out / name).glob("*.png"))
        assert figures and len(list((out / name).glob("*.pdf"))) == len(figures)
        for table in ("summary.md", "provenance.csv"):
            assert (out / name / table).stat().st_size > 0
    report = (out / "report.md").read_text()
    assert all(f"(`{name}`)" in report for name in PRESETS)
    assert report.splitlines()[2].startswith(                 # a smoke report says so first
        f"**Smaller than the papers' runs** ({len(PRESETS)} of {len(PRESETS)} presets")
    assert "say nothing about the papers" in report.splitlines()[2]
    assert re.search(r"- \*\*size\*\*: [0-9.]+ effective passes \(full size: \d+\); the first "
                     r"[0-9.]+ of the training data: a run of the pipeline", report)
    checks = pd.read_csv(out / "checks.csv", keep_default_na=False)   # "n/a" stays a word
    assert len(checks) == sum(len(load(name)["checks"]) for name in PRESETS)
    # every curve a check names exists (smoke runs may stop before a check's pass range)
    assert not checks["detail"].str.startswith("no curve").any(), checks
    assert set(checks["result"]) <= {"reproduced", "not reproduced", "not comparable here",
                                      "n/a", "evidence: holds", "evidence: fails"}
    assert (checks["quote"].str.len() > 0).all() and (checks["why"].str.len() > 0).all()
    assert "What still differs from the paper:" in report
    assert "- **seeds**: 2 random runs per curve here, 10 in the paper" in report
    # issue 32: the figure folders alone (their traces, no logs) give the same checks
    alone = tmp_path / "without_logs"
    for name in PRESETS:
        shutil.copytree(out / name, alone / name)
    ssvmbench("report", str(alone), cwd=tmp_path)
    assert (alone / "checks.csv").read_bytes() == (out / "checks.csv").read_bytes()
    figure = out / "bcfw_figure2_ocr" / "suboptimality.png"
    figure.unlink()
    again = ssvmbench("reproduce", "bcfw_figure2_ocr", *options, cwd=tmp_path).stdout
    shared = [log for log in logs if log.parts[-3] in load("bcfw_figure2_ocr")["sweeps"]]
    assert len(shared) == 2 * 3 * 2 + 2 * 3 + 2 * 3        # BCFW, SSG; predefined; FW
    assert again.count("done before (finished already)") == len(shared)
    assert sorted((out / "logs").rglob("run.h5")) == logs and figure.exists()


@pytest.mark.parametrize("change, message", [
    ({"quote": None}, "quote"),
    ({"why": None}, "why"),
    ({"not_comparable": "weather"}, "deviations"),
])
def test_a_check_quotes_the_paper_says_why_and_names_a_real_deviation(tmp_path, monkeypatch,
                                                                        change, message):
    preset = load("sap_table2")
    preset["checks"] = [{k: v for k, v in {**preset["checks"][0], **change}.items()
                         if v is not None}]
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(preset))
    monkeypatch.setattr(presets_module, "preset_dir", lambda: tmp_path)
    with pytest.raises(UserError, match=message):
        load("mine")


def test_a_paper_prefix_stands_for_its_presets():
    assert expand(["bcfw"]) == [name for name in PRESETS if name.startswith("bcfw_")]
    assert expand(["bcfw_figure2_ocr", "bcfw"])[0] == "bcfw_figure2_ocr"
    with pytest.raises(UserError, match="paper prefix"):
        expand(["bcf"])


def test_reproduce_does_not_redraw_committed_results_unless_asked(tmp_path):
    """Issue 32: an --out holding files git tracks (a checkout's committed reproduction) is
    refused before anything runs, and nothing in it changes."""
    out = tmp_path / "results"
    out.mkdir()
    (out / "report.md").write_text("committed")
    for git in (["init", "-q"], ["add", "results"],
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results"]):
        command(["git", *git], cwd=tmp_path)
    result = ssvmbench("reproduce", "bcfw_figure2_ocr", "--size", "smoke", "--out", str(out),
                       cwd=tmp_path, check=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "committed to git (e.g. report.md)" in result.stderr
    assert "--overwrite-committed" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]
    assert (out / "report.md").read_text() == "committed"


def test_report_without_figures_says_what_to_run(tmp_path):
    result = ssvmbench("report", str(tmp_path), cwd=tmp_path, check=False)
    assert result.returncode == 2 and "ssvmbench reproduce PRESET" in result.stderr


def test_reproduce_says_what_each_size_costs_and_asks_before_the_full_size(monkeypatch,
                                                                          capsys):
    """Issue 20: the list and --dry-run give runs and passes per size, and an interactive
    full-size reproduction without --size asks first (declining runs nothing)."""
    assert presets_module.sweep_runs(["solver=bcfw,ssg", "seed=0,1,2", "lambda=0.01,1/n",
                                      "solver.iterates=[raw,wavg]", "hydra.sweep.dir=a,b"]) == 12
    assert presets_module.cost("bcfw_figure2_ocr", "full") == (96, 100)
    assert presets_module.cost("bcfw_figure2_ocr", "smoke")[0] == 24
    parser = argparse.ArgumentParser()
    reproduce_module.configure_parser(parser)
    assert reproduce_module.main(parser.parse_args([])) == 0
    listed = capsys.readouterr().out
    measured = load("bcfw_figure2_ocr")["sizes"]["full"]["measured"]
    expected = presets_module.estimate("bcfw_figure2_ocr", "full")[0]
    assert expected == pytest.approx(
        96 * (measured["run_s"] / measured["runs"] + presets_module.STARTUP_S))
    assert (f"full: 96 runs of up to 100 passes, ~{duration(expected)} of run time; smoke: 24 "
            "runs") in listed
    both = ["bcfw_figure1abc_ocr", "bcfw_figure2_ocr"]        # they share the OCR sweeps
    assert presets_module._distinct_runs(both, "full")[0] < sum(
        presets_module.cost(name, "full")[0] for name in both)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    ran = []
    monkeypatch.setattr(reproduce_module, "_execute", lambda step: ran.append(step) or 0)
    assert reproduce_module.main(parser.parse_args(["bcfw_figure2_ocr"])) == 0
    assert not ran and "nothing run" in capsys.readouterr().out


def test_a_reproduction_is_one_batch_of_distinct_runs_longest_first():
    """Issue 28: every run of the presets named, a run shared by presets once, each expected
    to take its preset's measured mean; the batch goes longest first."""
    from ssvmbench.batch.jobs import longest_first

    both = ["bcfw_figure1abc_ocr", "bcfw_figure1de_conll"]
    jobs = presets_module.batch_jobs(both, "full", "OUT")
    alone = [presets_module.batch_jobs([name], "full", "OUT") for name in both]
    assert len(jobs) == len({job.run_dir for job in jobs}) == sum(map(len, alone))
    again = presets_module.batch_jobs(["bcfw_figure1abc_ocr", "bcfw_figure2_ocr"], "full", "O")
    assert len(again) == len({job.run_dir for job in again}) < sum(
        presets_module.cost(name, "full")[0] for name in ["bcfw_figure1abc_ocr",
                                                          "bcfw_figure2_ocr"])
    ordered = longest_first(jobs)
    assert [job.expected_s for job in ordered] == sorted(
        (job.expected_s for job in jobs), reverse=True)
    assert {job.expected_s for job in alone[1]} == {
        presets_module.seconds_per_run("bcfw_figure1de_conll", "full")}


def test_the_papers_table_rows_live_in_their_presets(tmp_path, monkeypatch):
    """SAP Tables II-IV as printed, read from the presets' paper_table (one place); a row
    without every field is refused."""
    rows = presets_module.paper_table()
    assert rows[("conll2000", "sap", 0.1, 0.9)] == [("II", 2313, 95.2), ("IV", 2313, 95.23)]
    assert rows[("brown", "sap", 1.0, 0.9)] == [("III", 17407, 96.7)]
    preset = load("sap_table2")
    preset["paper_table"][0].pop("nnz")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(preset))
    monkeypatch.setattr(presets_module, "preset_dir", lambda: tmp_path)
    with pytest.raises(UserError, match=r"paper_table\[0\] needs exactly"):
        load("mine")
