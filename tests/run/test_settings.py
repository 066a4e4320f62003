"""A run's configuration is read once into a typed record (ssvmbench.run.settings.read): the
runner, the solver's builder and the provenance take it; λ is resolved once with the data
and the oracle is built once."""

import dataclasses

import pytest

from ssvmbench import api
from ssvmbench.common.errors import UserError
from ssvmbench.run import runner, settings
from ssvmbench.tasks import oracle

OVERRIDES = ["solver=svrg", "data=ocr", "+data.subset=0.02", "solver.passes=1",
             "lambda=1/n", "oracle=topk", "oracle.mu=2", "+oracle.ties=casimir"]


def test_the_record_holds_each_setting_once_typed():
    record = settings.read(api.config(OVERRIDES))
    assert (record.solver, record.data, record.passes, record.seed) == ("svrg", "ocr", 1.0, 0)
    assert record.oracle == oracle.Oracle("topk", 5, 2.0, "casimir")
    assert record.data_options["subset"] == 0.02 and "name" not in record.data_options
    assert {"name", "passes"}.isdisjoint(record.solver_options)
    assert record.objective.at(50) == pytest.approx((1 / 50, 0.0))
    assert record.objective.spec == "1/n"
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.seed = 1


def test_sap_parameters_map_to_lambda_and_l1():
    record = settings.read(api.config(["solver=sap", "data=ocr", "C=0.1", "rho1=0.9"]))
    lam, l1 = record.objective.at(100)
    assert (lam, l1) == pytest.approx((0.1 / (0.1 * 100), 0.9 / (0.1 * 100)))
    assert record.objective.spec == "C=0.1 rho1=0.9 rho2=None"


def test_a_run_resolves_lambda_once_and_builds_its_oracle_once(data_root, tmp_path,
                                                              monkeypatch):
    """Before, λ was resolved twice per run (the check, then with n) and the oracle built
    three times (the check, the warm-up's solver, the run's solver)."""
    resolved, built = [], []
    resolve = settings.resolve_lambda
    monkeypatch.setattr(settings, "resolve_lambda",
                        lambda spec, n, *a, **k: resolved.append(n) or resolve(spec, n, *a, **k))
    init = oracle.Oracle.__post_init__
    monkeypatch.setattr(oracle.Oracle, "__post_init__",
                        lambda self: built.append(self) or init(self))
    (tmp_path / "run").mkdir()
    runner.run(api.config(OVERRIDES), tmp_path / "run")
    with_the_data = [n for n in resolved if n != 1]     # n = 1: the syntax check
    assert len(with_the_data) == 2 and len(set(with_the_data)) == 1   # λ and l1, once
    assert len([o for o in built if o.name == "topk"]) == 1


def test_a_bad_setting_is_one_line_before_any_data():
    with pytest.raises(UserError, match="stop.gap"):
        settings.read(api.config(["solver=bcfw", "data=ocr", "stop.gap=-1"]))
