"""The hashed chain (the Casimir authors' NER model, docs/casimir_authors_code.md section 10):
kernels against enumeration over every labeling with a dense reference feature map on tiny
instances with bucket collisions, and the solvers that train it against their optimality
certificates."""

import itertools

import numpy as np
import pytest
from helpers.reference import phi_hashed
from scipy.special import logsumexp

from ssvmbench.data.synthetic import random_hashed_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import chain, kernels, make_task
from ssvmbench.tasks.oracle import Oracle

DATASET = random_hashed_chains(12, 3, 5, n_buckets=7, lengths=(1, 4), seed=3)
LAM = 0.1
NO_U, NO_C = np.empty((0, 0)), np.empty(0)


def enumerate_example(task, i):
    """Every labeling of sequence ``i``, its dense phi and its task loss."""
    ds = task.dataset
    t0, T = ds.offsets[i], ds.offsets[i + 1] - ds.offsets[i]
    gold = ds.labels[t0:t0 + T]
    labelings = np.array(list(itertools.product(range(ds.n_labels), repeat=T)))
    Phi = np.array([phi_hashed(task, i, y) for y in labelings])
    mistakes = (labelings != gold).sum(1)
    loss = mistakes / T if task.normalized else mistakes.astype(float)
    return t0, T, Phi, loss, phi_hashed(task, i, gold)


def call_oracle(task, oracle, w, ws, i):
    """``(value, direction as a dense vector, (R, E))`` of the dispatched example oracle."""
    U, _, y, R, E = chain.buffers(task.max_len, task.n_labels)
    T = kernels.scores(w, ws, task.dims, task.data, i, U)
    value = kernels.example_oracle(oracle.kind, oracle.K, oracle.mu, w, ws, task.dims,
                                   task.data, task.normalized, i, U, T,
                                   oracle.buffers(task.max_len, task.n_labels), y, R, E)
    direction = np.zeros(task.d)
    kernels.add_direction(direction, 1.0, task.dims, task.data, task.dataset.offsets[i], T,
                          R, E, NO_U, NO_C)
    return value, direction, (U, T, R, E)


def test_the_instance_has_collisions():
    """Distinct (entry, label) pairs and tag pairs share buckets, so nothing below would pass
    with an index that ignored them."""
    ds = DATASET
    used = [(int(f) + int(s) * l) % ds.n_features
            for f, s in zip(ds.feat_idx, ds.feat_stride) for l in range(ds.n_labels)]
    pairs = {(int(f), int(s), l) for f, s in zip(ds.feat_idx, ds.feat_stride)
             for l in range(ds.n_labels)}
    assert len(set(used)) <= ds.n_features < len(pairs)
    assert set(ds.edge_buckets) & set(used)


@pytest.mark.parametrize("loss", ["normalized_hamming", "hamming"])
@pytest.mark.parametrize("oracle", [Oracle(), Oracle("topk", 100, 0.4), Oracle("exp", 1, 0.4)])
def test_oracles_against_enumeration(loss, oracle):
    """Max: the structural hinge and ``phi(y*) - phi(y_i)``; top-K with K above the number of
    labelings: the exact l2^2-smoothed hinge (Casimir eq. 7) with its projection weights;
    exp: mu log-sum-exp and its softmax expectation."""
    task = make_task(DATASET, loss)
    rng = np.random.default_rng(0)
    for i in range(task.n):
        t0, T, Phi, task_loss, phi_gold = enumerate_example(task, i)
        w, ws = rng.normal(size=task.d), rng.uniform(0.5, 2.0)
        s = Phi @ (ws * w) + task_loss
        gold_score = phi_gold @ (ws * w)
        value, direction, _ = call_oracle(task, oracle, w, ws, i)
        if oracle.name == "max":
            assert value == pytest.approx(s.max() - gold_score, abs=1e-10)
            np.testing.assert_allclose(direction, Phi[np.argmax(s)] - phi_gold, atol=1e-10)
            continue
        if oracle.name == "exp":
            p = np.exp(s / oracle.mu - logsumexp(s / oracle.mu))
            h = oracle.mu * logsumexp(s / oracle.mu)
        else:                                 # projection of s / mu onto the simplex
            u = np.sort(s / oracle.mu)[::-1]
            k = np.arange(1, len(u) + 1)
            rho = np.nonzero(u - (np.cumsum(u) - 1) / k > 0)[0][-1]
            p = np.maximum(s / oracle.mu - (np.cumsum(u)[rho] - 1) / (rho + 1), 0.0)
            h = p @ s - oracle.mu / 2 * (p @ p - 1)
        assert value == pytest.approx(h - gold_score, abs=1e-10)
        np.testing.assert_allclose(direction, p @ Phi - phi_gold, atol=1e-10)


def test_direction_norm_and_dot_add_up_colliding_entries():
    task = make_task(DATASET)
    rng = np.random.default_rng(1)
    x_dense = np.zeros(task.d)
    for i in range(task.n):
        w = rng.normal(size=task.d)
        for oracle in (Oracle(), Oracle("exp", 1, 0.7)):
            _, direction, (U, T, R, E) = call_oracle(task, oracle, w, 1.0, i)
            sq = kernels.direction_sqnorm(task.dims, task.data, task.dataset.offsets[i], T, R,
                                          E, x_dense)
            assert sq == pytest.approx(direction @ direction, rel=1e-12)
            assert not x_dense.any()                       # the scratch is left all-zero
            dot = kernels.direction_dot(w, task.dims, task.data, U, T, R, E)
            assert dot == pytest.approx(w @ direction, rel=1e-12, abs=1e-12)


def test_a_step_records_its_lazy_averages_in_the_same_sweep_as_its_own_steps():
    """``add_direction`` with averages ``(U, C)`` (SVRG's lazy sum of the epoch's iterates)
    gives each array, colliding buckets included, the bits of one ``add_direction`` of its
    own with the coefficient ``coef * C[k]``, and the dense direction times that."""
    task = make_task(DATASET)
    rng = np.random.default_rng(2)
    for i in range(task.n):
        w = rng.normal(size=task.d)
        for oracle in (Oracle(), Oracle("exp", 1, 0.7)):
            _, direction, (_, T, R, E) = call_oracle(task, oracle, w, 1.0, i)
            t0, coef, C = task.dataset.offsets[i], -0.37, np.array([1.9, -0.3])
            fused, U = w.copy(), rng.normal(size=(2, task.d))
            expected_w, expected_U, U0 = fused.copy(), U.copy(), U.copy()
            kernels.add_direction(fused, coef, task.dims, task.data, t0, T, R, E, U, C)
            kernels.add_direction(expected_w, coef, task.dims, task.data, t0, T, R, E, NO_U,
                                  NO_C)
            for k in range(2):
                kernels.add_direction(expected_U[k], coef * C[k], task.dims, task.data, t0, T,
                                      R, E, NO_U, NO_C)
            np.testing.assert_array_equal(fused, expected_w)
            np.testing.assert_array_equal(U, expected_U)
            np.testing.assert_allclose(U - U0, coef * C[:, None] * direction, atol=1e-12)

def test_evaluation_decodes_and_measures_the_hinge_by_enumeration():
    task = make_task(DATASET)
    w = np.random.default_rng(2).normal(size=task.d)
    hinge, error, predictions = task.evaluate(w)
    hinges, errors = [], []
    for i in range(task.n):
        t0, T, Phi, loss, phi_gold = enumerate_example(task, i)
        scores = Phi @ w
        best = np.argmax(scores)
        np.testing.assert_array_equal(predictions[t0:t0 + T],
                                      np.array(list(itertools.product(range(3), repeat=T)))[best])
        hinges.append((scores + loss).max() - phi_gold @ w)
        errors.append(loss[best])
    assert hinge == pytest.approx(np.mean(hinges))
    assert error == pytest.approx(np.mean(errors))


def primal(task, w):
    return 0.5 * LAM * w @ w + task.evaluate(w)[0]


def test_bcfw_weak_duality_gap_closes_and_w_is_a_alpha():
    """BCFW on the hashed model: primal - dual >= 0 for every iterate, the gap closes, and the
    factored dual state maps back to the live ``w = A alpha`` (BCFW Section 3)."""
    task = make_task(DATASET)
    solver = make_solver("bcfw", task, LAM, {"iterates": ["raw", "wavg"]}, 0)
    for passes in (1, 3, 10):
        solver.run_until(passes * task.n)
        for _, w, dual in solver.iterates():
            assert primal(task, w) - dual >= -1e-10
    w_again = np.empty(task.d)
    kernels.weights_from_average(solver.alpha, np.zeros_like(solver.alpha), 1.0, 1.0,
                                 task.dims, task.data, LAM, w_again)
    np.testing.assert_allclose(w_again, solver.w, atol=1e-10)
    solver.run_until(2000 * task.n)
    _, w, dual = solver.iterates()[0]
    assert primal(task, w) - dual < 1e-3 * dual


@pytest.mark.parametrize("name,options", [("svrg", {"lr": 0.01}),
                                          ("svrg", {"lr": 0.01, "output": "average"}),
                                          ("sc_svrg", {"scheme": "const", "lr": 0.01})])
def test_svrg_reaches_the_smoothed_optimum(name, options):
    """SVRG keeps all of w dense on the hashed chain (no lazy token block): the gradient of
    the exactly smoothed objective (K above the number of labelings) vanishes at its limit."""
    task = make_task(DATASET)
    oracle = Oracle("topk", 100, 0.5)
    solver = make_solver(name, task, LAM, {**options, "iterates": ["raw"]}, 0, oracle)

    def gradient_norm():
        w = solver.current()[0]
        g = np.empty(task.d)
        kernels.mean_hinge_and_gradient(w, task.dims, task.data, True, oracle.kind, oracle.K,
                                        0.5, oracle.buffers(task.max_len, task.n_labels),
                                        task.max_len, g)
        return np.linalg.norm(g + LAM * w)

    solver.run_until(3 * task.n)
    start = gradient_norm()
    solver.run_until(300 * 3 * task.n)
    assert gradient_norm() < 1e-4 * start


def test_sgd_approaches_the_bcfw_optimum():
    task = make_task(DATASET)
    bcfw = make_solver("bcfw", task, LAM, {"iterates": ["raw"]}, 0)
    bcfw.run_until(2000 * task.n)
    optimum = bcfw.iterates()[0][2]
    sgd = make_solver("sgd", task, LAM, {"iterates": ["raw", "wavg"], "step": "pegasos"}, 0)
    sgd.run_until(2000 * task.n)
    assert primal(task, sgd.iterates()[1][1]) - optimum < 0.02 * optimum


def test_solvers_without_hashed_kernels_are_refused():
    """SAP and online EG need kernels the hashed chain does not declare (the cutting plane's
    stored-labeling kernels it does: the test kit's brute force uses them)."""
    from ssvmbench.common.errors import UserError
    task = make_task(DATASET)
    for name in ("sap", "online_eg"):
        with pytest.raises(UserError, match="hashed_chain"):
            make_solver(name, task, LAM, {}, 0)
