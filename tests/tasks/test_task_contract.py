"""Task plugins under the same contract as solver plugins (issue 43): one line naming the
plugin for a task that raises or breaks its contract, compatibility decided from the
declarations of both (kernels and oracles), messages that list what the registries hold, a
data type owned by one task only, a test metric checked before training, and check-solver
going on past a broken task. The multiclass example plugin (examples/multiclass, installed by
the README's test command) is the base of the broken tasks built here."""

import argparse
import dataclasses
import importlib

import pytest
from helpers.example_plugins import require_example

from ssvmbench import tasks
from ssvmbench.common import plugins
from ssvmbench.common.errors import Incompatible, PluginError, UserError
from ssvmbench.data.sequences import SplitData
from ssvmbench.plugin_kit import conformance
from ssvmbench.run.monitor import measure
from ssvmbench.run.runner import blame_plugin
from ssvmbench.solvers import check_compatible, lacks, make_solver, runs_on, solver_class
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.metrics import check_split_metric
from ssvmbench.tasks.oracle import Oracle

require_example("multiclass")
multiclass = importlib.import_module("ssvmbench_multiclass.task")
MulticlassTask = multiclass.MulticlassTask


class MaxOnly(MulticlassTask):
    """A correct task plugin that offers the max oracle only."""
    kind = "max_only"
    oracles = ("max",)


def test_a_solver_runs_on_a_task_only_if_they_share_an_oracle():
    sc_svrg, bcfw = solver_class("sc_svrg"), solver_class("bcfw")
    assert runs_on(bcfw, MaxOnly) and not runs_on(sc_svrg, MaxOnly)
    assert lacks(sc_svrg, MaxOnly) == ("the solver calls oracle=topk|exp, the task offers "
                                       "oracle=max")
    task = MaxOnly.tiny()
    with pytest.raises(Incompatible, match="not on max_only tasks .*offers oracle=max"):
        make_solver("sc_svrg", task, 0.1, {}, 0, Oracle("topk", 3, 0.5))


def only_tasks(monkeypatch, **classes):
    """check-solver's registry of tasks: ``classes`` only (fewer kernels to compile)."""
    monkeypatch.setattr(conformance, "registered", lambda: classes)
    monkeypatch.setattr("ssvmbench.solvers.registered_tasks", lambda: classes)


def test_check_solver_says_which_tasks_it_leaves_out_and_why(monkeypatch, capsys):
    only_tasks(monkeypatch, max_only=MaxOnly, multiclass=MulticlassTask)
    parser = argparse.ArgumentParser()
    conformance.configure_parser(parser)
    assert conformance.main(parser.parse_args(["sc_svrg"])) == 0   # passes where it runs
    out = capsys.readouterr().out
    assert ("max_only      n/a  not run: the solver calls oracle=topk|exp, the task offers "
            "oracle=max") in out
    assert "multiclass    ok   builds with its defaults" in out and "every check passed" in out


def test_an_oracle_refusal_lists_the_solvers_the_registry_holds(monkeypatch):
    class TopkBCFW(solver_class("sgd")):
        name = "topk_plugin"
    monkeypatch.setitem(__import__("ssvmbench.solvers", fromlist=["x"]).registered(),
                        "topk_plugin", TopkBCFW)
    with pytest.raises(Incompatible, match=r"goes with solvers .*topk_plugin"):
        check_compatible(solver_class("bcfw"), ChainTask.tiny(), Oracle("topk", 3, 0.5))


class BrokenInit(MulticlassTask):
    kind = "broken_init"

    def __init__(self, ds, loss="zero_one"):
        raise ValueError("bad feature matrix")


def test_a_task_plugin_that_raises_when_built_is_one_line_naming_it(monkeypatch):
    dataset_type = type("BrokenDataset", (multiclass.MulticlassDataset,), {})
    broken = type("BrokenInitTask", (BrokenInit,), {"dataset_type": dataset_type,
                                                    "__module__": __name__})
    monkeypatch.setitem(tasks.registered(), "broken_init", broken)
    data = multiclass.random_multiclass(12, 5, 4, seed=0)
    data = dataset_type(**{f.name: getattr(data, f.name) for f in dataclasses.fields(data)})
    with pytest.raises(PluginError) as err:
        tasks.make_task(data, "zero_one")
    assert str(err.value) == (
        "task broken_init (plugin test_task_contract:BrokenInitTask, entry point "
        "ssvmbench.tasks) raised ValueError: bad feature matrix (its traceback is in the run's "
        "app.log; SSVMBENCH_DEBUG=1 shows it here)")


def test_a_task_that_returns_too_few_predictions_is_named():
    class Short(MulticlassTask):
        kind = "short"

        def evaluate(self, w, with_hinge=True):
            hinge, loss, predictions = super().evaluate(w, with_hinge)
            return hinge, loss, predictions[:-1]
    task = Short.tiny()
    solver = make_solver("bcfw", task, 0.1, {}, 0)
    solver.run_until(task.n)
    with pytest.raises(PluginError, match=r"^task short \(plugin test_task_contract:.*Short, "
                                          r"entry point ssvmbench.tasks\) raised "):
        with blame_plugin("bcfw", Short):          # the runner's, around the measurements
            measure(solver, task, task)


def test_a_task_declaring_another_tasks_data_type_is_refused_when_it_loads(monkeypatch):
    class Impostor(MulticlassTask):
        kind = "impostor"
        data_type = ChainTask.data_type
    monkeypatch.setattr(plugins, "load", lambda *args: {"impostor": Impostor})
    with pytest.raises(UserError, match=r"task impostor \(plugin .*\) declares data_type "
                                        r"ChainData, which task chain owns"):
        tasks.registered.__wrapped__()


def test_a_test_metric_that_cannot_apply_is_refused_before_training():
    data = multiclass.random_multiclass(12, 5, 4, seed=0)
    split = SplitData(train=data, test=data, variant="v", source="s", checksum="c",
                      metric="chunk_f1")
    with pytest.raises(UserError, match=r"names the test metric 'chunk_f1', which does not "
                                        r"apply to its test split \(task multiclass"):
        check_split_metric(split, "task multiclass")


def test_check_solver_reports_a_broken_task_and_checks_the_others(monkeypatch, capsys):
    class NoTiny(MulticlassTask):
        kind = "no_tiny"

        @classmethod
        def tiny(cls):
            raise RuntimeError("tiny instance missing")
    only_tasks(monkeypatch, no_tiny=NoTiny, multiclass=MulticlassTask)
    parser = argparse.ArgumentParser()
    conformance.configure_parser(parser)
    assert conformance.main(parser.parse_args(["ssg"])) == 1
    out = capsys.readouterr().out
    assert ("no_tiny       FAIL the task's tiny instance builds: RuntimeError: tiny instance "
            "missing") in out
    assert "multiclass    ok   builds with its defaults" in out          # the others: checked
    assert out.strip().endswith("solver ssg: 1 check(s) failed")
