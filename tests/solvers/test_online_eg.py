"""Online EG: its iterates are the log-parameterized distributions they claim to be (interior
of the simplices), the dual only increases, and it reaches the structural SVM optimum."""

import itertools

import numpy as np
import pytest
from helpers.reference import phi_dense

from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import kernels
from ssvmbench.tasks.chain_task import ChainTask

LAM = 0.05


def distribution(solver, i):
    """``{y: alpha_i(y)}`` from the potentials ``theta_i``, by enumeration."""
    task = solver.task
    L = task.n_labels
    t0, t1 = task.dataset.offsets[i], task.dataset.offsets[i + 1]
    pair = solver.blocks.theta_pairs[i]
    logits = {}
    for y in itertools.product(range(L), repeat=t1 - t0):
        s = sum(solver.blocks.theta[t0 + t, y[t]] for t in range(len(y)))
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
    assert solver.blocks.w == pytest.approx(w, abs=1e-10)
    assert solver.blocks.ell[0] == pytest.approx(ell, abs=1e-12)
    assert (passes == 0) == np.all(solver.blocks.theta == 0)


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


def test_marginal_kernels_against_enumeration():
    """part_marginals: ``E_p phi(x_i, y)`` for ``p(y) ~ exp(<(V, v), parts(y)>)`` (the token
    marginals and bigram sums), ``E_p L_i`` and the direction from the stored marginals
    (here gold_marginals, the point mass on ``y_i``); store_marginals keeps them;
    part_scores the loss-augmented part scores."""
    task = ChainTask(random_chains(5, 3, 3, lengths=(1, 4), seed=2), "hamming")
    L, F = task.n_labels, task.dims[0]
    n_pot, n_marg = task.marginal_sizes()
    rng = np.random.default_rng(3)
    U, _, _, R, E, _ = kernels.scratch(task.dims, task.data, task.max_len)
    _, _, _, D, Ed, _ = kernels.scratch(task.dims, task.data, task.max_len)
    work = kernels.marginals_scratch(task.dims, task.data, task.max_len)
    rows, pairs = np.empty((task.max_len, L)), np.empty(n_marg)
    for i in range(task.n):
        t0, T = task.data.offsets[i], task.data.offsets[i + 1] - task.data.offsets[i]
        gold = task.dataset.labels[t0:t0 + T]
        V, v = rng.normal(size=(task.max_len, L)), rng.normal(size=n_pot)
        w_parts = np.concatenate([np.zeros(F * L), v])   # (V, v) as scores: U = V
        p = {}
        for y in itertools.product(range(L), repeat=T):
            p[y] = np.exp(sum(V[t, y[t]] for t in range(T)) + w_parts @ phi_dense(task, i, y))
        z = sum(p.values())
        kernels.gold_marginals(task.data, i, T, rows, pairs)
        value = kernels.part_marginals(task.dims, task.data, False, i, T, V, v, work, rows,
                                       pairs, R, E, D, Ed)
        token = sum(q / z * np.eye(L)[list(y)] for y, q in p.items())
        np.testing.assert_allclose(R[:T], token, atol=1e-12)
        bigrams = sum(q / z * phi_dense(task, i, y)[F * L:F * L + L * L] for y, q in p.items())
        np.testing.assert_allclose(E[1][:L * L], bigrams, atol=1e-12)
        loss = sum(q / z * np.sum(np.array(y) != gold) for y, q in p.items())
        assert kernels.expected_loss(task.data, False, i, T, R) == pytest.approx(loss)
        assert value == pytest.approx(loss)
        mean_phi = sum(q / z * phi_dense(task, i, y) for y, q in p.items())
        after = np.zeros(task.d)
        kernels.add_direction(after, 1.0, task.dims, task.data, t0, T, D, Ed,
                              np.empty((0, 0)), np.empty(0))
        np.testing.assert_allclose(after, mean_phi - phi_dense(task, i, gold), atol=1e-12)
        kernels.store_marginals(task.data, T, R, E, rows, pairs)
        np.testing.assert_array_equal(rows[:T], R[:T])
        np.testing.assert_allclose(pairs, bigrams, atol=1e-12)
        w = rng.normal(size=task.d)
        T = kernels.scores(w, 1.0, task.dims, task.data, i, U)
        G, g = np.empty((task.max_len, L)), np.empty(n_pot)
        kernels.part_scores(w, task.dims, task.data, False, i, U, T, G, g)
        np.testing.assert_allclose(G[:T], U[:T] + (np.arange(L) != gold[:, None]))
        np.testing.assert_array_equal(g, w[F * L:])
