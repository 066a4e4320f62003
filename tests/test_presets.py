"""Experiment presets (configs/experiment/): every preset is valid, a sweep name means the
same runs in every preset, and the smoke sizes run end to end through ``ssvmbench run -m``
and ``ssvmbench plot``, resuming when run again."""

import argparse
import shlex
from collections import defaultdict

import pytest

from ssvmbench.errors import UserError
from ssvmbench.plotting import commands as plot_command
from ssvmbench.presets import available, commands, expand, load

from test_cli import ssvmbench

PRESETS = available()


def test_presets_cover_the_bcfw_figures():
    items = {load(name)["item"] for name in PRESETS if load(name)["paper"] == "BCFW"}
    assert items >= {"Figure 1a-c", "Figure 1d-e", "Figure 1f", "Figure 2", "Figure 3",
                     "Figure 4", "Figure 5"}


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
            assert step[:2] == ["run", "-m"] and f"solver.passes={spec['passes']}" in step
            assert any(word.startswith("hydra.sweep.dir=OUT/logs/") for word in step)
            assert not any("{" in word for word in step)
            if any(word.startswith("seed=") for word in step):
                assert f"seed={seeds}" in step
        if size == "smoke":
            assert spec["seeds"] == 2 and all(
                word in step for step in steps[:-1] for word in shlex.split(spec["overrides"]))
        parser = argparse.ArgumentParser()
        plot_command.configure_parser(parser)
        args = parser.parse_args(steps[-1][1:])
        assert args.out == f"OUT/{name}" and len(args.logs) == len(preset["sweeps"])


def test_unknown_preset_and_size_are_refused():
    with pytest.raises(UserError, match="bcfw_figure2_ocr"):
        commands("bcfw_figure9", "full", "OUT")
    with pytest.raises(UserError, match="sizes"):
        commands(PRESETS[0], "huge", "OUT")


def test_smoke_presets_end_to_end_and_resume(data_root, conll2000_root, hansards_root, tmp_path):
    """Every preset at its smoke size, two jobs at a time; then one preset again: it runs
    nothing (its runs, shared with Figures 1a-c and 3, are finished) and redraws its
    figures."""
    out = tmp_path / "smoke"
    options = ("--size", "smoke", "--out", str(out), "--overrides", "hydra/launcher=joblib",
               "hydra.launcher.n_jobs=2")
    ssvmbench("reproduce", *PRESETS, *options, cwd=tmp_path, timeout=1800)
    logs = sorted((out / "logs").rglob("run.h5"))
    for name in PRESETS:
        for figure in ("suboptimality.png", "suboptimality.pdf", "summary.md"):
            assert (out / name / figure).stat().st_size > 0
    figure = out / "bcfw_figure2_ocr" / "suboptimality.png"
    figure.unlink()
    again = ssvmbench("reproduce", "bcfw_figure2_ocr", *options, cwd=tmp_path).stdout
    shared = [log for log in logs if log.parts[-3] in load("bcfw_figure2_ocr")["sweeps"]]
    assert len(shared) == 2 * 3 * 2 + 2 * 3 + 2 * 3        # BCFW, SSG; predefined; FW
    assert again.count("finished already, skipped") == len(shared)
    assert sorted((out / "logs").rglob("run.h5")) == logs and figure.exists()


def test_a_paper_prefix_stands_for_its_presets():
    assert expand(["bcfw"]) == [name for name in PRESETS if name.startswith("bcfw_")]
    assert expand(["bcfw_figure2_ocr", "bcfw"])[0] == "bcfw_figure2_ocr"
    with pytest.raises(UserError, match="paper prefix"):
        expand(["bcf"])
