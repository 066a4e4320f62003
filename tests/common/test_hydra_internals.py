"""Hydra's and OmegaConf's private calls (ssvmbench.common.hydra_internals): checked against
the installed versions, each call doing what ssvmbench relies on, and named nowhere else."""

import re
from pathlib import Path

from omegaconf import OmegaConf

from ssvmbench.common import hydra_internals
from ssvmbench.run.compose import parse_overrides

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_hydra_and_omegaconf_were_checked():
    """Fails loudly on a version nobody read these calls against."""
    unchecked = hydra_internals.unchecked_versions()
    assert not unchecked, (
        f"{', '.join(unchecked)}: ssvmbench's private Hydra/OmegaConf calls "
        "(ssvmbench/common/hydra_internals.py) were not checked against this version; read "
        "them against its sources, run the tests, then add it to CHECKED")


def test_no_other_module_names_hydras_private_parts():
    private = re.compile(r"hydra\._internal|\._get_node\(|\._set_value\(|\._is_interpolation\(|"
                         r"\._value\(\)|_parse_overrides_and_create_caching_repo|"
                         r"_apply_overrides_to_config|\._is_missing\(|\._get_full_key\(")
    sources = [*(ROOT / "ssvmbench").rglob("*.py"), *(ROOT / "hydra_plugins").rglob("*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in sources
                 if p.name != "hydra_internals.py" and private.search(p.read_text())]
    assert not offenders


def test_a_sweep_expands_as_hydras_basic_sweeper_does():
    combinations = hydra_internals.sweep_combinations(parse_overrides(["a=1,2", "b=x,y"]))
    assert combinations == [["a=1", "b=x"], ["a=1", "b=y"], ["a=2", "b=x"], ["a=2", "b=y"]]


def test_a_jobs_folder_name_is_hydras_override_dirname():
    overrides = parse_overrides(["seed=3", "solver=bcfw", "hydra.run.dir=x"])
    assert hydra_internals.overrides_dirname(overrides, ["hydra.run.dir"], ",", "=") == \
        "seed=3,solver=bcfw"


def test_overrides_apply_in_place_and_nodes_read_and_set_back():
    cfg = OmegaConf.create({"solver": {"passes": 5, "name": "bcfw"}, "lam": "${x}", "x": 1,
                            "gone": "???"})
    hydra_internals.apply_overrides(parse_overrides(["solver.passes=7"]), cfg)
    node = hydra_internals.child(cfg.solver, "passes")
    assert hydra_internals.value(node) == 7
    hydra_internals.set_value(node, 5)
    assert cfg.solver.passes == 5
    assert hydra_internals.is_interpolation(hydra_internals.child(cfg, "lam"))
    assert not hydra_internals.is_interpolation(node)
    assert hydra_internals.is_missing(hydra_internals.child(cfg, "gone"))
    assert hydra_internals.full_key(cfg.solver, "passes") == "solver.passes"


def test_the_batch_sweeper_extends_hydras_basic_sweeper():
    from hydra_plugins.ssvmbench_launchers.launchers import BatchSweeper

    assert issubclass(BatchSweeper, hydra_internals.basic_sweeper())
