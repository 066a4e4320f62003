"""Online EG: its iterates are the log-parameterized distributions they claim to be (interior
of the simplices), the dual only increases, and it reaches the structural SVM optimum."""

import itertools

import numpy as np
import pytest

from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks.chain_task import ChainTask

from reference import phi_dense

LAM = 0.05


def distribution(solver, i):
    """``{y: alpha_i(y)}`` from the potentials ``theta_i``, by enumeration."""
    task = solver.task
    L = task.n_labels
    t0, t1 = task.dataset.offsets[i], task.dataset.offsets[i + 1]
    pair = solver.theta_pairs[i]
    logits = {}
    for y in itertools.product(range(L), repeat=t1 - t0):
        s = sum(solver.theta[t0 + t, y[t]] for t in range(len(y)))
        s += sum(pair[y[t - 1] * L + y[t]] for t in range(1, len(y)))
        logits[y] = s + pair[L * L + y[0]] + pair[L * L + L + y[-1]]
    top = max(logits.values())
    z = sum(np.exp(v - top) for v in logits.values())
    return {y: np.exp(v - top) / z for y, v in logits.items()}


@pytest.mark.parametrize("passes", [0, 1, 3])
def test_w_is_A_alpha_of_the_log_parameterized_blocks(passes):
    """w = 1/(lam n) sum_i (phi(y_i) - E_alpha_i phi) and b^T alpha = 1/n sum_i E L_i, with
    alpha_i ~ exp(theta_i . parts(y)) enumerated; every alpha_i(y) > 0 (interior)."""
    task = ChainTask(random_chains(6, 3, 4, lengths=(1, 4), seed=5))
    solver = make_solver("online_eg", task, LAM, {}, 0)
    solver.run_until(passes * task.n)
    w, ell = np.zeros(task.d), 0.0
    labels, offsets = task.dataset.labels, task.dataset.offsets
    for i in range(task.n):
        gold = labels[offsets[i]:offsets[i + 1]]
        for y, p in distribution(solver, i).items():
            assert p > 0
            w += p * (phi_dense(task, i, gold) - phi_dense(task, i, y)) / (LAM * task.n)
            ell += p * np.mean(np.array(y) != gold) / task.n
    assert solver.w == pytest.approx(w, abs=1e-10)
    assert solver.ell[0] == pytest.approx(ell, abs=1e-12)
    assert (passes == 0) == np.all(solver.theta == 0)


def test_dual_increases_and_reaches_the_optimum():
    task = ChainTask(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
    solver = make_solver("online_eg", task, LAM, {}, 0)
    duals = []
    for passes in (1, 2, 5, 20, 100, 400):
        solver.run_until(passes * task.n)
        _, w, dual = solver.iterates()[0]
        assert 0.5 * LAM * w @ w + task.evaluate(w)[0] - dual >= -1e-12
        duals.append(dual)
    assert np.all(np.diff(duals) > 0)
    cp = make_solver("cutting_plane", task, LAM, {"epsilon": 1e-10}, 0)
    cp.run_until(10 ** 5)
    optimum = cp.iterates()[0][2]
    assert optimum - 1e-9 <= duals[-1] + 1e-4 and duals[-1] <= optimum + 1e-9


def test_each_trial_step_is_an_oracle_call():
    """Backtracking: 1 to 3 exp-oracle calls per visit in the first pass (<= 2 halvings)."""
    task = ChainTask(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
    solver = make_solver("online_eg", task, 0.5, {}, 0)
    calls = solver.advance(task.n)
    assert solver.visits <= calls <= 3 * solver.visits
