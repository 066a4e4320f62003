"""The test kit for task plugins (ssvmbench.plugin_kit.testing): it passes on every registered task
(the built-ins and the installed example plugins), fails, on the check concerned, on tasks broken on
purpose here (an oracle that returns the second-best labeling, scores that ignore ``ws``, a dual
step that leaves the lazy averages out), and runs from ``check-solver --task``."""


import numba as nb
import numpy as np
import pytest
from helpers.cli import ssvmbench
from helpers.example_plugins import require_example
from helpers.kit import broken

from ssvmbench.plugin_kit.testing import check_task, task_checks
from ssvmbench.tasks import registered


@pytest.mark.parametrize("kind", sorted(registered()))
def test_the_kit_passes_on_every_registered_task(kind):
    names = [name for name, _ in check_task(registered()[kind])]
    assert "max oracle: value, labeling and direction against brute force" in names


@pytest.fixture(scope="module")
def multiclass():
    """The example plugin's task class (examples/multiclass, which CI installs)."""
    require_example("multiclass")
    return registered()["multiclass"]


@nb.njit
def second_best_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """The multiclass max oracle returning the second-best loss-augmented label."""
    L, gold = dims[1], data.labels[i]
    z = np.empty(L)
    for l in range(L):
        z[l] = U[0, l] + (0.0 if l == gold else 1.0)
    second = np.argsort(z)[-2]
    y[0] = second
    E[2][0] = 0
    R[0, :] = 0.0
    R[0, second] += 1.0
    R[0, gold] -= 1.0
    return z[second] - U[0, gold]


def failures(cls):
    return {name: failure for name, failure in task_checks(cls) if failure}


def test_an_oracle_returning_the_second_best_labeling_fails(multiclass, register):
    cls = register(broken(multiclass, example_oracle=second_best_oracle))
    failed = failures(cls)
    assert "brute-force maximum" in failed[
        "max oracle: value, labeling and direction against brute force"]
    with pytest.raises(AssertionError, match="max oracle"):
        check_task(cls)


def test_scores_ignoring_ws_fail(multiclass, register):
    score = multiclass.kernels["scores"]

    @nb.njit
    def unscaled(w, ws, dims, data, i, out):
        return score(w, 1.0, dims, data, i, out)

    failed = failures(register(broken(multiclass, scores=unscaled)))
    assert list(failed) == ["ws: scores and oracles at (w / ws, ws) equal those at (w, 1)"]


def test_a_dual_step_without_its_lazy_average_fails(multiclass, register):
    move = multiclass.kernels["move_marginals"]

    @nb.njit
    def unrecorded(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C):
        return move(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C[:0])

    failed = failures(register(broken(multiclass, move_marginals=unrecorded)))
    assert "lazy averages" in failed[
        "the factored dual against an explicit alpha (A alpha, averages)"]


def test_a_task_without_an_enumeration_is_told_what_to_add(multiclass):
    class Silent(broken(multiclass)):
        def labelings(self, i, limit):
            raise NotImplementedError("the broken task does not enumerate its labelings")

    [(check, failure)] = task_checks(Silent)
    assert "Task.labelings" in check and "does not enumerate" in failure


def test_check_solver_runs_the_kit_with_or_without_a_solver(tmp_path):
    out = ssvmbench("check-solver", "--task", "chain", cwd=tmp_path).stdout
    assert "task chain: every check passed" in out and "solver" not in out
    out = ssvmbench("check-solver", "ssg", "--task", "boxes", cwd=tmp_path).stdout
    assert "task boxes: every check passed" in out and "solver ssg: every check passed" in out
    assert "chain " not in out                  # the solver is checked on that task only
    refused = ssvmbench("check-solver", cwd=tmp_path, check=False)
    assert refused.returncode != 0 and "--task" in refused.stderr
