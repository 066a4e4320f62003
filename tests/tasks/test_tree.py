"""The task plugin examples/tree: node labelling on trees (pairwise parent-child weights, an
exact max-product and sum-product oracles) added through the entry points ``ssvmbench.tasks``,
``ssvmbench.datasets`` and ``ssvmbench.metrics`` only. The test kit passes on it and fails on
its oracle with the pairwise weights left unscaled by ``ws``; ``check-solver bcfw --task
tree`` passes; BCFW's duality gap closes; the generated data and its metric; a command-line
run."""


import numba as nb
import numpy as np
import pytest
from helpers.cli import ssvmbench
from helpers.example_plugins import require_example
from helpers.kit import broken

from ssvmbench.plugin_kit.testing import check_task, task_checks
from ssvmbench.run.runlog import read_log
from ssvmbench.solvers import make_solver
from ssvmbench.solvers.objective import Objective
from ssvmbench.tasks import make_task, registered


@pytest.fixture(scope="module")
def tree():
    """The plugin's modules (examples/tree, which CI installs)."""
    require_example("tree")
    from ssvmbench_tree import dataset, metrics, task
    assert registered()["tree"] is task.TreeTask
    return task, dataset, metrics


def test_the_kit_passes_on_the_tree_task(tree):
    task, _, _ = tree
    assert len(check_task(task.TreeTask)) == 9      # max and exp; no top-K


def test_pairwise_weights_not_scaled_by_ws_fail_the_kit(tree, register):  # noqa: F811
    task, _, _ = tree
    max_product, set_difference, score = task.max_product, task.set_difference, task.tree_score
    unit, original = task.loss_unit, task.example_oracle

    @nb.njit
    def unscaled(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
        if kind != 0:
            return original(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E)
        gold = data.labels[data.offsets[i]:data.offsets[i] + T]
        top = max_product(w, 1.0, dims, data, i, U, T, unit(normalized, T), bufs[0], y)
        set_difference(data, i, T, y, R, E)
        return top - score(w, 1.0, dims, data, i, U, T, gold)

    cls = register(broken(task.TreeTask, example_oracle=unscaled))
    failed = [name for name, failure in task_checks(cls) if failure]
    assert failed == ["ws: scores and oracles at (w / ws, ws) equal those at (w, 1)"]


def test_check_solver_bcfw_on_the_tree_task(tree, tmp_path):
    out = ssvmbench("check-solver", "bcfw", "--task", "tree", cwd=tmp_path).stdout
    assert "task tree: every check passed" in out and "solver bcfw: every check passed" in out


def test_bcfw_closes_the_duality_gap(tree):
    """BCFW (Algorithm 4) on 60 generated trees at lam = 0.1: the gap of its raw iterate
    falls below 1e-3 of the primal within 1000 passes (0.3 s), the dual never
    decreasing."""
    _, dataset, _ = tree
    t = make_task(dataset.random_trees(60, 3, 5, seed=1))
    lam = 0.1
    solver = make_solver("bcfw", t, lam, {"iterates": ["raw"]}, 0)
    duals = []
    for p in (10, 100, 1000):
        solver.run_until(p * t.n)
        _, w, dual = solver.iterates()[0]
        duals.append(dual)
    primal = Objective(lam).primal(w, t.evaluate(w)[0])
    assert 0 <= primal - dual < 1e-3 * primal and duals == sorted(duals)


def test_generated_trees_subsets_and_the_metric(tree):
    _, dataset, metrics = tree
    split = dataset.load_random_trees(n_train=30, n_test=10)
    assert (split.train.n, split.test.n, split.metric) == (30, 10, "node_accuracy")
    part = split.train.subset([4, 2])
    assert part.n == 2 and part.n_nodes == np.diff(split.train.offsets)[[4, 2]].sum()
    assert np.array_equal(part.labels[:np.diff(part.offsets)[0]],
                          split.train.labels[split.train.offsets[4]:split.train.offsets[5]])
    assert metrics.node_accuracy.score(part, part.labels) == 1.0
    assert metrics.node_accuracy.applies(part) and make_task(part).kind == "tree"
    with pytest.raises(ValueError, match="root"):
        dataset.TreeDataset("bad", 2, np.array([0, 2]), np.array([0, -1]), part.features[:2],
                            np.zeros(2, dtype=np.int32))


def test_a_run_from_the_command_line_logs_node_accuracy(tree, tmp_path):
    ssvmbench("run", "solver=bcfw", "data=random_trees", "data.n_train=60", "data.n_test=30",
              "solver.passes=5", f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)
    trace, attrs = read_log(tmp_path / "run" / "run.h5")
    assert attrs["test_metric"] == "node_accuracy" and attrs["n"] == 60
    assert trace["test_node_accuracy"].between(0.3, 1).all() and (trace["gap"] >= 0).all()
