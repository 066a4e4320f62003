"""Elastic-net SSVM (SAP paper): the (C, rho1, rho2) <-> (lambda, l1) mapping, SAP's weak
duality, convergence and sparsity, its lazy beta steps, and the L1 projected subgradient."""

import numpy as np
import pytest
from helpers.reference import phi_dense
from omegaconf import OmegaConf

from ssvmbench.common.errors import UserError
from ssvmbench.data.scenes import load_scenes
from ssvmbench.data.synthetic import random_chains
from ssvmbench.run.monitor import measure
from ssvmbench.run.settings import resolve_objective
from ssvmbench.solvers import make_solver
from ssvmbench.solvers.l1_subgradient import project_l1_ball
from ssvmbench.solvers.sap import SplitWeights, _catch_up, beta_powers
from ssvmbench.tasks import kernels, make_task

TASK = make_task(random_chains(30, 3, 6, lengths=(2, 5), seed=1), "hamming")


def objective(**given):
    base = {"lambda": None, "l1": None, "C": None, "rho1": None, "rho2": None}
    return OmegaConf.create({**base, **given})


def test_sap_parameters_map_to_lambda_and_l1():
    """OP5 = rho1 ||w||_1 + rho2/2 ||w||^2 + C sum_i H_i(w) equals C n times our objective;
    rho1 = 0 is the L2 SSVM with lambda = 1/(C n); rho2 defaults to 1 - rho1."""
    n = TASK.n
    lam, l1 = resolve_objective(objective(C=0.1, rho1=0.9), n)
    assert lam == pytest.approx(0.1 / (0.1 * n)) and l1 == pytest.approx(0.9 / (0.1 * n))
    assert resolve_objective(objective(C=2.0), n) == pytest.approx((1 / (2.0 * n), 0.0))
    assert resolve_objective(objective(C=1.0, rho1=0.3, rho2=2.0), n) == pytest.approx(
        (2.0 / n, 0.3 / n))
    w = np.random.default_rng(0).normal(size=TASK.d)
    hinge = TASK.evaluate(w)[0]                         # mean Hamming-loss hinge
    C, rho1, rho2 = 0.1, 0.9, 0.1
    op5 = rho1 * np.abs(w).sum() + rho2 / 2 * w @ w + C * n * hinge
    ours = 0.5 * lam * w @ w + l1 * np.abs(w).sum() + hinge
    assert op5 == pytest.approx(C * n * ours)
    assert resolve_objective(objective(), n) == (0.01, 0.0)
    assert resolve_objective(objective(**{"lambda": "1/n", "l1": "3/n"}), n) == pytest.approx(
        (1 / n, 3 / n))


@pytest.mark.parametrize("given,message", [
    ({"C": 1.0, "lambda": 0.1}, "not both"), ({"rho1": 0.5}, "go with C"),
    ({"C": 0.0}, "C > 0"), ({"C": 1.0, "rho1": 1.0}, "rho2 > 0"), ({"l1": -1}, "non-negative")])
def test_bad_objective_settings_are_refused(given, message):
    with pytest.raises(UserError, match=message):
        resolve_objective(objective(**given), 100)


@pytest.mark.parametrize("l1", [0.0, 0.02, 0.1])
def test_sap_weak_duality_and_convergence(l1):
    """Gap = primal - dual >= 0 at every checkpoint and -> 0; the optimality measure zeta_i
    (IV.16) -> 0; with l1 = 0 the optimum is BCFW's (the L2 SSVM)."""
    solver = make_solver("sap", TASK, 0.05, {}, 0, None, l1)
    gaps = []
    for passes in (1, 10, 100, 600):
        solver.run_until(passes * TASK.n)
        rows = measure(solver, TASK, TASK)
        gaps.append(rows["gap"][0])
    assert min(gaps) >= -1e-10 and gaps[-1] < 1e-4 * gaps[0]
    assert np.all(np.abs(solver.x.b) <= l1 + 1e-15)
    assert solver.sets.zeta.max() < 1e-2
    if l1 == 0:
        bcfw = make_solver("bcfw", TASK, 0.05, {}, 0)
        bcfw.run_until(3000 * TASK.n)
        best_dual = measure(bcfw, TASK, TASK)["dual"][0]
        assert rows["primal"][0] == pytest.approx(best_dual, abs=1e-3)


def test_sap_stops_when_every_zeta_is_below_theta():
    """Algorithm 2's stopping rule: all zeta_i < theta ends the run before the budget."""
    solver = make_solver("sap", TASK, 0.05, {"theta": 1e-2}, 0, None, 0.02)
    solver.run_until(5000 * TASK.n)
    assert solver.converged and solver.oracle_calls < 5000 * TASK.n
    assert solver.sets.zeta.max() < 1e-2 and solver.oracle_calls % TASK.n == 0


def test_larger_l1_gives_sparser_weights_with_the_kkt_conditions():
    """At the optimum w = soft-threshold(u, l1) / lambda: w_j = 0 where |u_j| <= l1."""
    nnz = []
    for l1 in (0.0, 0.05, 0.2):
        solver = make_solver("sap", TASK, 0.05, {}, 0, None, l1)
        solver.run_until(600 * TASK.n)
        w = solver.state()[1]
        u = solver.x.u
        expected = np.sign(u) * np.maximum(np.abs(u) - l1, 0) / 0.05
        assert np.allclose(w, expected, atol=1e-6)
        nnz.append(np.count_nonzero(np.abs(w) > 1e-9))
    assert nnz[0] > nnz[1] > nnz[2]


def test_active_set_kernels_against_dense_phi():
    """The chain's kernels of stored labelings: labeling_score ``<w, phi(x_i, y)>``,
    labeling_direction ``phi(y+) - phi(y-)``, direction_gram its squared norm,
    add_direction_scores the scores after ``w += coef * direction``, example_features."""
    t = TASK
    rng = np.random.default_rng(4)
    w = rng.normal(size=t.d)
    U, _, _, R, E, zero = kernels.scratch(t.dims, t.data, t.max_len)
    U2 = U.copy()
    gram = kernels.gram_scratch(t.dims, t.data, t.max_len)
    for i in range(t.n):
        t0, T = t.data.offsets[i], t.data.offsets[i + 1] - t.data.offsets[i]
        plus = rng.integers(0, t.n_labels, T).astype(np.int32)
        minus = rng.integers(0, t.n_labels, T).astype(np.int32)
        kernels.scores(w, 1.0, t.dims, t.data, i, U)
        assert kernels.labeling_score(w, t.dims, t.data, i, U, T, plus) == pytest.approx(
            w @ phi_dense(t, i, plus))
        kernels.labeling_direction(t.data, i, T, plus, minus, R, E)
        vec = phi_dense(t, i, plus) - phi_dense(t, i, minus)
        after = np.zeros(t.d)
        kernels.add_direction(after, 1.0, t.dims, t.data, t0, T, R, E, np.empty((0, 0)),
                              np.empty(0))
        np.testing.assert_allclose(after, vec, atol=1e-12)
        assert kernels.direction_gram(t.dims, t.data, t0, T, R, E, zero, gram) == (
            pytest.approx(vec @ vec))
        assert not zero.any()
        kernels.add_direction_scores(U, 0.3, t.data, T, R, E, gram)
        kernels.scores(w + 0.3 * vec, 1.0, t.dims, t.data, i, U2)
        np.testing.assert_allclose(U[:T], U2[:T], atol=1e-12)
        rows = np.unique(kernels.example_features(t.data, i))
        touched = np.flatnonzero(np.abs(vec[:t.dims[0] * t.n_labels]).reshape(t.dims).sum(1))
        assert set(touched) <= set(rows)
    np.testing.assert_array_equal(t.gold_labelings(), t.dataset.labels)


def test_lazy_beta_steps_equal_the_eager_iteration():
    """k pending steps b <- clip((u + kappa b)/(1 + kappa)) with u fixed, in closed form."""
    kappa, lam, l1 = 0.7, 0.5, 0.3
    r = kappa / (1 + kappa)
    for u0, b0 in ((0.9, -0.2), (-1.4, 0.25), (0.1, 0.3), (0.2, -0.3)):
        eager = b0
        for _ in range(5):
            eager = min(max((u0 + kappa * eager) / (1 + kappa), -l1), l1)
        w, u, b = np.zeros(1), np.array([u0]), np.array([b0])
        x = SplitWeights(w, u, b, np.zeros(1, dtype=np.int64), beta_powers(r), l1)
        _catch_up(0, 1, 0, x, 5, lam)
        assert b[0] == pytest.approx(eager) and w[0] == pytest.approx((u0 - eager) / lam)


@pytest.mark.parametrize("nu", [1e-3, 50.0])
def test_lazy_beta_steps_of_a_pass_equal_the_eager_ones(nu):
    """Algorithm 2 applies the beta step (IV.14) to every coordinate after each visit; SAP
    applies it to a row only when a visit reads it (and at a checkpoint). Passes in one call
    equal passes with every pending step applied after each visit (large ``nu``: the steps
    move ``b`` far). The two round differently, so each visit's sub-problem is solved to
    convergence (``max_smo``): with three SMO iterations a last-bit difference can change
    which pairs they visit (a weight of 1e-17 where the other run has 0), and the paths
    part."""
    options, l1 = {"nu": nu, "max_smo": 1000}, 0.1
    lazy = make_solver("sap", TASK, 0.05, options, 0, None, l1)
    eager = make_solver("sap", TASK, 0.05, options, 0, None, l1)
    lazy.run_until(3 * TASK.n)
    for calls in range(1, 3 * TASK.n + 1):
        eager.run_until(calls)
        eager.state()                             # every row brought to the current step
    np.testing.assert_allclose(lazy.state()[1], eager.state()[1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(lazy.x.b, eager.x.b, rtol=0, atol=1e-9)
    assert np.abs(lazy.x.b).max() > 0.01


def test_projection_onto_the_l1_ball():
    rng = np.random.default_rng(0)
    for radius in (0.5, 2.0, 100.0):
        v = rng.normal(size=50) * (rng.random(50) < 0.5)
        p = project_l1_ball(v, radius)
        assert np.abs(p).sum() <= radius + 1e-9
        if np.abs(v).sum() <= radius:
            assert np.array_equal(p, v)
            continue
        assert np.abs(p).sum() == pytest.approx(radius)
        # optimality: v - p = theta * sign(p) on the support, |v| <= theta off it
        theta = np.abs(v - p)[p != 0]
        assert np.allclose(theta, theta[0]) and np.all(np.abs(v[p == 0]) <= theta[0] + 1e-12)


def test_l1_subgradient_stays_in_the_ball_and_learns():
    solver = make_solver("l1_subgradient", TASK, 0.05, {"epsilon": 3.0, "gamma0": 0.5}, 0)
    start = TASK.evaluate(np.zeros(TASK.d))[0]
    for passes in range(1, 21):
        solver.run_until(passes * TASK.n)
        assert np.abs(solver.state()[1]).sum() <= 3.0 + 1e-9
    assert TASK.evaluate(solver.state()[1])[0] < 0.8 * start
    with pytest.raises(UserError, match="solver.epsilon"):
        make_solver("l1_subgradient", TASK, 0.05, {}, 0)


def test_solvers_refuse_what_they_do_not_solve():
    with pytest.raises(UserError, match=r"needs solver=l1_subgradient\|sap"):
        make_solver("bcfw", TASK, 0.05, {}, 0, None, 0.1)
    boxes = make_task(load_scenes(n_train=5, n_test=5, size=40).train)
    with pytest.raises(UserError, match="not on boxes"):
        make_solver("sap", boxes, 0.05, {}, 0)
