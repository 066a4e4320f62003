"""1-slack cutting plane: the constraint it adds, weak duality of the master problem, the
optimum it reaches, its stopping rule and its best iterate."""

import itertools

import numpy as np
import pytest

from ssvmbench.data.synthetic import random_chains
from ssvmbench.errors import UserError
from ssvmbench.solvers import make_solver
from ssvmbench.tasks.chain import ChainTask

from reference import phi_dense

TASK = ChainTask(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
LAM = 0.05


def primal(task, lam, w):
    return 0.5 * lam * w @ w + task.evaluate(w)[0]


def test_added_constraint_is_the_most_violated_joint_labeling():
    """SVMstruct's 1-slack constraint at w, by enumerating every labeling of tiny chains:
    a = 1/n sum_i (phi(y_i) - phi(y*_i)), b = 1/n sum_i L_i(y*_i), b - <w, a> = H(w)."""
    task = ChainTask(random_chains(5, 3, 4, lengths=(1, 3), seed=2))
    solver = make_solver("cutting_plane", task, 0.1, {"epsilon": 0.0}, 0)
    solver.w = np.random.default_rng(0).normal(size=task.d)
    a, b = np.zeros(task.d), 0.0
    ds = task.dataset
    for i in range(task.n):
        gold = ds.labels[ds.offsets[i]:ds.offsets[i + 1]]
        best = max(itertools.product(range(3), repeat=len(gold)),
                   key=lambda y: np.mean(np.array(y) != gold)
                   - solver.w @ (phi_dense(task, i, gold) - phi_dense(task, i, y)))
        a += (phi_dense(task, i, gold) - phi_dense(task, i, best)) / task.n
        b += np.mean(np.array(best) != gold) / task.n
    solver.advance(task.n)
    assert solver.A[1] == pytest.approx(a) and solver.b[1] == pytest.approx(b)
    assert solver.b[1] - solver.A[1] @ solver.w == pytest.approx(b - a @ solver.w)


def test_master_dual_below_primal_and_reaches_the_bcfw_optimum():
    """Every iterate: primal >= master dual (a point of the BCFW dual); at SVMstruct's
    epsilon -> 0 both meet BCFW's optimum (the 1-slack and n-slack problems are the same,
    Joachims et al. 2009 Theorem 1)."""
    solver = make_solver("cutting_plane", TASK, LAM, {"epsilon": 1e-9}, 0)
    duals = []
    for passes in range(1, 200):
        solver.run_until(passes * TASK.n)
        _, w, dual = solver.iterates()[0]
        assert primal(TASK, LAM, w) - dual >= -1e-12
        duals.append(dual)
        if solver.converged:
            break
    assert solver.converged and np.all(np.diff(duals) >= -1e-9)
    bcfw = make_solver("bcfw", TASK, LAM, {"iterates": ["raw"]}, 0)
    bcfw.run_until(3000 * TASK.n)
    bcfw_primal = primal(TASK, LAM, bcfw.current()[0])
    assert primal(TASK, LAM, solver.w) == pytest.approx(duals[-1], abs=1e-7)
    assert bcfw.iterates()[0][2] <= duals[-1] + 1e-9 <= bcfw_primal + 1e-9
    assert solver.m < solver.steps + 1            # idle constraints were dropped


def test_svmstruct_epsilon_bounds_the_gap_at_the_stop():
    """Stop when H(w) <= xi + epsilon; then primal - dual = H(w) - xi <= epsilon."""
    solver = make_solver("cutting_plane", TASK, LAM, {}, 0)
    solver.run_until(10 ** 6)
    assert solver.converged and solver.oracle_calls < 50 * TASK.n
    _, w, dual = solver.iterates()[0]
    assert 0 <= primal(TASK, LAM, w) - dual <= 0.1


@pytest.mark.parametrize("name", ["cutting_plane", "fw"])
def test_best_iterate_is_the_lower_envelope(name):
    """``best``: the lowest primal among the iterates the batch solver has evaluated."""
    solver = make_solver(name, TASK, 0.001, {"iterates": ["raw", "best"]}, 0)
    seen, best = [], []
    for passes in range(1, 30):
        seen.append(primal(TASK, 0.001, solver.w))
        solver.run_until(passes * TASK.n)
        best.append(primal(TASK, 0.001, solver.iterates()[1][1]))
        assert solver.iterates()[1][0] == "best"
        assert best[-1] == pytest.approx(min(seen))
    assert np.all(np.diff(best) <= 1e-12)
    assert name == "fw" or not np.all(np.diff(seen) <= 0)   # the raw primal is not monotone


def test_averaged_iterates_refused():
    with pytest.raises(UserError, match="choose from"):
        make_solver("cutting_plane", TASK, LAM, {"iterates": ["raw", "wavg"]}, 0)
