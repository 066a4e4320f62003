"""1-slack cutting plane: the constraint it adds, weak duality of the master problem, the
optimum it reaches, its stopping rule and its best iterate; the constraint cache (SVMstruct
``-w 4``) and the labeling kernels it uses on every task, and the master QP solver."""

import itertools

import numpy as np
import pytest
from helpers.reference import phi_dense
from scipy.optimize import minimize

from ssvmbench.common.errors import UserError
from ssvmbench.data.alignment import synthetic_alignment
from ssvmbench.data.scenes import load_scenes
from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.solvers.cutting_plane import simplex_qp
from ssvmbench.tasks import chain, kernels, make_task
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.oracle import Oracle

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


def test_svmstruct_c_is_one_over_lambda():
    """SVMstruct's master problem in its own primal form (Joachims et al. 2009, OP4 on the
    working set): min 1/2 ||w||^2 + C xi s.t. xi >= b_j - <a_j, w>; with C = 1/lambda its
    solution is the solver's w, and its value is the master dual / lambda."""
    solver = make_solver("cutting_plane", TASK, LAM, {"epsilon": 1e-9, "cache_size": 0}, 0)
    for _ in range(12):
        solver.advance(TASK.n)
    A, b, C, d = solver.A[:solver.m], solver.b[:solver.m], 1.0 / LAM, TASK.d
    result = minimize(lambda z: 0.5 * z[:d] @ z[:d] + C * z[d], np.zeros(d + 1),
                      jac=lambda z: np.append(z[:d], C), method="SLSQP",
                      constraints={"type": "ineq", "fun": lambda z: z[d] - b + A @ z[:d],
                                   "jac": lambda z: np.hstack([A, np.ones((len(b), 1))])},
                      options={"ftol": 1e-11, "maxiter": 2000})
    assert result.success
    np.testing.assert_allclose(result.x[:d], solver.w, atol=1e-5)
    assert result.fun == pytest.approx(solver.iterates()[0][2] / LAM, rel=1e-6)


def test_svmstruct_epsilon_bounds_the_gap_at_the_stop():
    """Stop when H(w) <= xi + epsilon; then primal - dual = H(w) - xi <= epsilon."""
    solver = make_solver("cutting_plane", TASK, LAM, {}, 0)
    solver.run_until(10 ** 6)
    assert solver.converged and solver.oracle_calls < 50 * TASK.n
    _, w, dual = solver.iterates()[0]
    assert 0 <= primal(TASK, LAM, w) - dual <= 0.1


@pytest.mark.parametrize("name", ["cutting_plane", "fw"])
def test_best_iterate_is_the_lower_envelope(name):
    """``best``: the lowest primal among the iterates where the batch solver called the
    oracle (the cutting plane's cached iterations evaluate no primal)."""
    solver = make_solver(name, TASK, 0.001, {"iterates": ["raw", "best"]}, 0)
    seen, best = [], []
    advance = solver.advance

    def recording(budget):
        w = solver.w.copy()
        calls = advance(budget)
        if calls:
            seen.append(primal(TASK, 0.001, w))
        return calls

    solver.advance = recording
    for passes in range(1, 30):
        solver.run_until(passes * TASK.n)
        best.append(primal(TASK, 0.001, solver.iterates()[1][1]))
        assert solver.iterates()[1][0] == "best"
        assert best[-1] == pytest.approx(min(seen))
    assert np.all(np.diff(best) <= 1e-12)
    assert name == "fw" or not np.all(np.diff(seen) <= 0)   # the raw primal is not monotone


def chain_hinge(task, w, i, y):
    """``L_i(y) - <w, phi(y_i) - phi(y)>`` from the reference feature map."""
    ds = task.dataset
    gold = ds.labels[ds.offsets[i]:ds.offsets[i + 1]]
    return np.mean(np.asarray(y) != gold) - w @ (phi_dense(task, i, gold) - phi_dense(task, i, y))


TASKS = {"chain": TASK,
         "boxes": make_task(load_scenes(n_train=12, n_test=2, size=40, seed=1).train),
         "matching": make_task(synthetic_alignment(n_train=12, n_test=2, seed=1).train)}


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_labeling_kernels_match_the_max_oracle(kind):
    """At the max oracle's argmax ``y*``, ``labeling_hinge`` is the oracle's value ``H_i(w)``
    and ``add_labeling`` adds the oracle's gradient ``phi(y*) - phi(y_i)``."""
    task = TASKS[kind]
    U, _, y, R, E = chain.buffers(task.max_len, task.n_labels)
    bufs = Oracle().buffers(task.max_len, task.n_labels)
    for seed in range(3):
        w = np.random.default_rng(seed).normal(size=task.d)
        for i in range(task.n):
            T = kernels.scores(w, 1.0, task.dims, task.data, i, U)
            value = kernels.example_oracle(0, 1, 0.0, w, 1.0, task.dims, task.data,
                                           task.normalized, i, U, T, bufs, y, R, E)
            grad, mine = np.zeros(task.d), np.zeros(task.d)
            kernels.add_direction(grad, 0.5, task.dims, task.data, task.data[0][i], T, R, E,
                                  np.empty((0, 0)), np.empty(0))
            kernels.add_labeling(mine, 0.5, task.dims, task.data, i, T, y)
            assert kernels.labeling_hinge(w, task.dims, task.data, task.normalized, i, T,
                                          y) == pytest.approx(value, abs=1e-12)
            np.testing.assert_allclose(mine, grad, atol=1e-12)


def test_labeling_hinge_of_any_chain_labeling():
    """``labeling_hinge`` for arbitrary labelings against the reference feature map."""
    rng = np.random.default_rng(3)
    w = rng.normal(size=TASK.d)
    ds = TASK.dataset
    for i in range(TASK.n):
        T = ds.offsets[i + 1] - ds.offsets[i]
        for _ in range(4):
            y = rng.integers(0, TASK.n_labels, size=T).astype(np.int32)
            assert kernels.labeling_hinge(w, TASK.dims, TASK.data, True, i, T, y) == \
                pytest.approx(chain_hinge(TASK, w, i, y), abs=1e-12)


def test_cached_iteration_builds_the_constraint_from_the_cache_without_oracle_calls():
    """SVMstruct ``-w 4``: a cached iteration adds the 1-slack constraint of the most
    violated of ``y_i`` and each example's cached labelings (those the most violated within
    the last ``inactive_window`` iterations), calling no oracle."""
    solver = make_solver("cutting_plane", TASK, LAM, {"epsilon": 1e-9}, 0)
    ds = TASK.dataset
    while solver.steps < 60:                      # past the window: some slots are evicted
        solver.advance(TASK.n)
    for _ in range(200):
        w, cache, age = solver.w.copy(), solver.cache.copy(), solver.age.copy()
        a, viol = np.zeros(TASK.d), 0.0
        for i in range(TASK.n):
            t0, t1 = ds.offsets[i], ds.offsets[i + 1]
            gold = ds.labels[t0:t1]
            kept = [cache[k, t0:t1] for k in range(cache.shape[0])   # used in the window
                    if age[i, k] >= max(0, solver.steps - 50)]
            y = max([gold] + kept, key=lambda y: chain_hinge(TASK, w, i, y))
            a += (phi_dense(TASK, i, gold) - phi_dense(TASK, i, y)) / TASK.n
            viol += chain_hinge(TASK, w, i, y) / TASK.n
        if solver.advance(TASK.n) == 0 and np.any((age >= 0) & (age < solver.steps - 51)):
            break
    else:
        pytest.fail("no cached iteration")
    row = np.flatnonzero(np.all(np.isclose(solver.A[:solver.m], a, atol=1e-12), axis=1))
    assert len(row) == 1 and solver.b[row[0]] - a @ w == pytest.approx(viol, abs=1e-12)


def test_cache_reaches_the_same_optimum_with_fewer_oracle_calls():
    """With and without the cache (``cache_size=0``: SVMstruct ``-w 3``) the solver reaches
    the same optimum; the cache saves oracle passes."""
    runs = {}
    for size in (0, 5):
        solver = make_solver("cutting_plane", TASK, LAM, {"epsilon": 1e-7, "cache_size": size},
                             0)
        solver.run_until(10 ** 6)
        assert solver.converged
        runs[size] = (primal(TASK, LAM, solver.w), solver.oracle_calls)
    assert runs[5][0] == pytest.approx(runs[0][0], abs=1e-6)
    assert runs[5][1] < runs[0][1]


@pytest.mark.parametrize("size", [-1, 2.5])
def test_cache_size_must_be_a_whole_number(size):
    with pytest.raises(UserError, match="cache_size"):
        make_solver("cutting_plane", TASK, LAM, {"cache_size": size}, 0)


def test_master_qp_solution_satisfies_the_kkt_conditions():
    """The master solver on random simplex QPs, some with affinely dependent constraints
    (a singular H): x in the simplex, and the gradient ``Hx + c`` equals its minimum ``nu``
    on the support of x and is >= nu elsewhere (the optimality conditions); the same inputs
    give the same bits."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        m, d = rng.integers(1, 60), rng.integers(1, 80)
        A = rng.normal(size=(m, d))
        if trial % 3 == 0 and m > 3:
            A[m // 2], A[1] = A[0], (A[2] + A[3]) / 2
        H, c = A @ A.T / 10 ** rng.uniform(-3, 0), -rng.random(m)
        x = simplex_qp(H, c, np.eye(m)[0])
        assert x.min() >= 0 and x.sum() == pytest.approx(1)
        grad = H @ x + c
        scale = np.abs(H).max() + np.abs(c).max()
        nu = grad[x > 0].min()
        assert grad[x > 0].max() - nu <= 1e-7 * scale and grad.min() >= nu - 1e-7 * scale
        assert np.array_equal(x, simplex_qp(H.copy(), c.copy(), np.eye(m)[0]))


def test_averaged_iterates_refused():
    with pytest.raises(UserError, match="choose from"):
        make_solver("cutting_plane", TASK, LAM, {"iterates": ["raw", "wavg"]}, 0)
