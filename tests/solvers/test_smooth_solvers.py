"""The hinge oracles and the primal solvers that use them (Casimir Section 2, Algorithm 1):
values against enumeration, gradients against finite differences, optimality conditions of
the smoothed problems, the Catalyst recursion and the oracle-call accounting."""

import itertools
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers.reference import phi_dense

from ssvmbench.common.errors import UserError
from ssvmbench.data.scenes import load_scenes
from ssvmbench.data.synthetic import random_chains, random_hashed_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import chain, make_task
from ssvmbench.tasks.chain_oracles import hinge_oracle
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.kernels import mean_hinge_and_gradient
from ssvmbench.tasks.oracle import Oracle

TASK = ChainTask(random_chains(20, 3, 5, lengths=(1, 4), seed=4))
LAM = 0.1


def hinge_value(oracle, w, i):
    """``(f_i(w), gradient as a dense vector)`` from :func:`hinge_oracle`."""
    U, _, y, R, E = chain.buffers(TASK.max_len, TASK.n_labels)
    t0 = TASK.dataset.offsets[i]
    T = chain.unary_scores(w, 1.0, TASK.dims, TASK.data, i, U)
    gold = TASK.dataset.labels[t0:t0 + T]
    value = hinge_oracle(oracle.kind, oracle.K, oracle.mu, w, 1.0, TASK.dims, U, T, gold,
                         1.0 / T, oracle.buffers(TASK.max_len, TASK.n_labels), y, R, E)
    grad = np.zeros(TASK.d)
    chain.add_direction(grad, 1.0, TASK.dims, TASK.data, t0, T, R, E,
                        np.empty((0, 0)), np.empty(0))
    return value, grad


def reference_values(w, i, mu):
    """Enumerated loss-augmented scores minus the gold score: (max, log-sum-exp) hinges."""
    t0, t1 = TASK.dataset.offsets[i], TASK.dataset.offsets[i + 1]
    gold = TASK.dataset.labels[t0:t1]
    scores = np.array([w @ phi_dense(TASK, i, y) + np.mean(np.array(y) != gold)
                       for y in itertools.product(range(TASK.n_labels), repeat=t1 - t0)])
    gold_score = w @ phi_dense(TASK, i, gold)
    top = scores.max()
    return top - gold_score, top + mu * np.log(np.exp((scores - top) / mu).sum()) - gold_score


@pytest.mark.parametrize("oracle", [Oracle(), Oracle("topk", 100, 0.3), Oracle("exp", 1, 0.3)])
def test_hinge_oracle_values_and_gradients(oracle):
    """Max: the structural hinge; top-K with K >= #labelings: within [hinge, hinge + mu/2];
    exp: the log-sum-exp hinge. Smoothed gradients match central finite differences."""
    rng = np.random.default_rng(0)
    for i in range(5):
        w = rng.normal(size=TASK.d)
        value, grad = hinge_value(oracle, w, i)
        hinge, soft = reference_values(w, i, 0.3)
        if oracle.name == "max":
            assert value == pytest.approx(hinge)
            continue
        if oracle.name == "exp":
            assert value == pytest.approx(soft)
        else:
            assert hinge - 1e-12 <= value <= hinge + 0.15 + 1e-12
        for q in rng.choice(TASK.d, size=15, replace=False):
            step = np.zeros(TASK.d)
            step[q] = 1e-6
            fd = (hinge_value(oracle, w + step, i)[0] - hinge_value(oracle, w - step, i)[0]) / 2e-6
            assert fd == pytest.approx(grad[q], abs=1e-5)


@pytest.mark.parametrize("scale,mu", [(1.0, 0.3), (300.0, 0.3), (1.0, 1e-3), (50.0, 1e-3)])
def test_exp_oracle_against_enumeration_where_its_factored_sums_underflow(scale, mu):
    """The exp oracle's value and gradient ``E_p phi - phi(y_i)`` against enumeration, also
    where scores lie thousands of ``mu`` apart: the factors of its forward sums underflow
    there, and those columns must be summed shifted by their own max."""
    rng = np.random.default_rng(3)
    oracle = Oracle("exp", 1, mu)
    for i in range(TASK.n):
        w = scale * rng.normal(size=TASK.d)
        value, grad = hinge_value(oracle, w, i)
        t0, t1 = TASK.dataset.offsets[i], TASK.dataset.offsets[i + 1]
        gold = TASK.dataset.labels[t0:t1]
        labelings = list(itertools.product(range(TASK.n_labels), repeat=t1 - t0))
        Phi = np.array([phi_dense(TASK, i, y) for y in labelings])
        z = (Phi @ w + np.array([np.mean(np.array(y) != gold) for y in labelings])) / mu
        p = np.exp(z - z.max())
        p /= p.sum()
        phi_gold = phi_dense(TASK, i, gold)
        assert np.isfinite(value)
        assert value == pytest.approx(mu * (z.max() + np.log(np.exp(z - z.max()).sum()))
                                      - w @ phi_gold, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(grad, p @ Phi - phi_gold, atol=1e-8)


def smoothed_gradient_norm(solver, oracle, mu):
    """``|| 1/n sum_i grad f_i(w) + lam w ||`` at the solver's iterate (smoothing ``mu``)."""
    w = solver.current()[0]
    g = np.empty(TASK.d)
    mean_hinge_and_gradient(w, TASK.dims, TASK.data, True, oracle.kind, oracle.K, mu,
                  oracle.buffers(TASK.max_len, TASK.n_labels), TASK.max_len, g)
    return np.linalg.norm(g + LAM * w)


@pytest.mark.parametrize("name,options", [("svrg", {"lr": 0.01}),
                                          ("sc_svrg", {"scheme": "const", "lr": 0.01})])
def test_svrg_reaches_the_smoothed_optimum(name, options):
    """Exact l2^2 smoothing (K above the number of labelings): the gradient of the smoothed
    objective vanishes at the limit (copt-style optimality check, no golden numbers)."""
    oracle = Oracle("topk", 100, 0.5)
    solver = make_solver(name, TASK, LAM, {**options, "iterates": ["raw"]}, 0, oracle)
    solver.run_until(3 * TASK.n)
    start = smoothed_gradient_norm(solver, oracle, 0.5)
    solver.run_until(200 * 3 * TASK.n)
    assert smoothed_gradient_norm(solver, oracle, 0.5) < 1e-4 * start


def test_sc_svrg_adapt_approaches_the_unsmoothed_optimum():
    """mu_k = mu c^k -> 0: the iterates approach the unsmoothed optimum (to within the
    noise floor that a fixed learning rate leaves once the smoothing is tiny)."""
    bcfw = make_solver("bcfw", TASK, LAM, {"iterates": ["raw"]}, 0)
    bcfw.run_until(500 * TASK.n)
    optimum = bcfw.iterates()[0][2]                       # dual value, a lower bound
    solver = make_solver("sc_svrg", TASK, LAM, {"scheme": "adapt", "lr": 0.01, "decay": 0.9,
                                                  "iterates": ["raw"]}, 0, Oracle("topk", 5, 1.0))
    gaps = []
    for epochs in (2, 60):
        solver.run_until(epochs * 3 * TASK.n)
        w = solver.current()[0]
        gaps.append(0.5 * LAM * w @ w + TASK.evaluate(w)[0] - optimum)
    assert 0 <= gaps[1] < 0.03 * optimum and gaps[1] < gaps[0] / 3
    assert solver.mu == pytest.approx(1.0 * 0.9 ** solver.outer)


def test_catalyst_recursion_of_algorithm_1():
    """alpha_k^2 (kappa + lam) = (1 - alpha_k) alpha_{k-1}^2 (kappa + lam) + alpha_k lam, and
    z_k = w_k + beta_k (w_k - w_{k-1}) with beta_k of Algorithm 1 step 5."""
    solver = make_solver("sc_svrg", TASK, LAM, {"scheme": "const", "lr": 0.05, "kappa": 0.4,
                                                  "iterates": ["raw"]}, 0, Oracle("exp", 1, 0.5))
    q = LAM + 0.4
    assert solver.alpha == pytest.approx(np.sqrt(LAM / q))
    for k in range(1, 4):
        previous_alpha, previous_w = solver.alpha, solver.previous.copy()
        solver.run_until(k * 3 * TASK.n)
        assert solver.outer == k + 1
        a = solver.alpha
        assert a ** 2 * q == pytest.approx((1 - a) * previous_alpha ** 2 * q + a * LAM)
        beta = previous_alpha * (1 - previous_alpha) * q / (previous_alpha ** 2 * q + a * q)
        w = solver.previous
        np.testing.assert_allclose(solver.center, w + beta * (w - previous_w), atol=1e-12)


def test_oracle_calls_per_svrg_epoch():
    """An epoch is a full gradient (n calls) and n steps at two calls each."""
    solver = make_solver("svrg", TASK, LAM, {"iterates": ["raw"]}, 0, Oracle("exp", 1, 1.0))
    solver.run_until(1)
    assert solver.oracle_calls == TASK.n
    solver.run_until(3 * TASK.n)
    assert solver.oracle_calls == 3 * TASK.n and solver.steps == 0
    solver.run_until(3 * TASK.n + 1)
    assert solver.oracle_calls == 4 * TASK.n


def test_method_names_show_non_default_settings():
    """Curves of runs that differ in a numeric setting must not be pooled as seeds."""
    assert make_solver("svrg", TASK, LAM, {}, 0, Oracle("topk", 5, 0.1)).method == \
        "svrg-topk-K5-mu0.1"
    assert make_solver("svrg", TASK, LAM, {"lr": 0.003}, 0, Oracle("exp", 1, 1.0)).method == \
        "svrg-lr=0.003-exp-mu1"
    assert make_solver("sgd", TASK, LAM, {"t0": 50}, 0).method == "sgd-t0=50"


def test_sgd_with_pegasos_steps_and_max_oracle_is_ssg():
    sgd = make_solver("sgd", TASK, LAM, {"step": "pegasos"}, 5)
    ssg = make_solver("ssg", TASK, LAM, {}, 5)
    sgd.run_until(4 * TASK.n)
    ssg.run_until(4 * TASK.n)
    for (_, a, _), (_, b, _) in zip(sgd.iterates(), ssg.iterates()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,options,oracle,fragment", [
    ("bcfw", {}, Oracle("topk", 5, 1.0), "takes oracle=max, not oracle=topk"),
    ("sc_svrg", {}, Oracle(), "takes oracle=topk\\|exp, not oracle=max"),
    ("svrg", {"iterates": ["raw", "wavg"]}, Oracle("exp", 1, 1.0),
     "invalid for solver svrg: choose from"),
    ("sgd", {"gamma0": 100.0}, Oracle(), "gamma0 \\* lambda <= 1"),
    ("sgd", {"gamma0": "abc"}, Oracle(), "solver.gamma0=abc must be a finite number"),
    ("svrg", {"lr": 20.0}, Oracle(), "0 < lr \\(lambda \\+ kappa\\) < 1"),
    ("sc_svrg", {"scheme": "const", "kappa": 5000.0}, Oracle("topk", 2, 1.0), "kappa = 5000"),
])
def test_bad_combinations_are_refused(name, options, oracle, fragment):
    with pytest.raises(UserError, match=fragment):
        make_solver(name, TASK, LAM, options, 0, oracle)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"name": "soft"}, "oracle=soft"), ({"name": "topk", "K": 0, "mu": 1.0}, "oracle.K"),
    ({"name": "exp", "mu": 0.0}, "oracle.mu"), ({"name": "exp", "mu": "abc"}, "oracle.mu=abc"),
    ({"name": "exp", "mu": float("inf")}, "finite"), ({"name": "topk", "K": 2.5, "mu": 1.0},
                                                      "whole number"),
    ({"name": "topk", "K": 5, "mu": 1.0, "ties": "random"}, "oracle.ties=random: choose"),
    ({"name": "max", "ties": "casimir"}, "oracle=max has none to order")])
def test_bad_oracles_are_refused(kwargs, fragment):
    with pytest.raises(UserError, match=fragment):
        Oracle(**kwargs)


@pytest.mark.parametrize("lr", [0.01, 8.0])       # 8.0: the lazy scalars fold (a < 1e-6)
def test_epoch_output_average_is_the_mean_of_the_inner_iterates(lr):
    """output=average (the Casimir authors' SVRG): an epoch returns the uniform average of
    its n inner iterates, kept lazily; checked against the iterates taken one step at a time
    by the same solver with output=last (same seed, same sampling)."""
    oracle = Oracle("topk", 3, 0.5)
    averaged = make_solver("svrg", TASK, LAM, {"lr": lr, "output": "average"}, 2, oracle)
    stepwise = make_solver("svrg", TASK, LAM, {"lr": lr}, 2, oracle)
    n = TASK.n
    averaged.run_until(3 * n)
    inner = []
    for k in range(1, n + 1):
        stepwise.run_until(n + 2 * k)
        inner.append(stepwise.current()[0])
    np.testing.assert_allclose(averaged.current()[0], np.mean(inner, axis=0), rtol=1e-9,
                               atol=1e-12)
    averaged.run_until(3 * n + 1)                       # the next epoch starts from it
    np.testing.assert_allclose(averaged.anchor, np.mean(inner, axis=0), rtol=1e-9, atol=1e-12)


def test_the_authors_kappa_step_decay_and_warm_starts():
    """casimir/optim/optimization_algorithms.py: csvrg --L gives kappa = L/(n+1) - lam and
    lr = 1/(L + lam + kappa); expo decay multiplies mu by sqrt(1 - sqrt(1/2)/2) = 0.804 per
    epoch (kappa = lam) from mu0 in the first; the extrapolation warm start is w_{k-1} +
    kappa/(lam + kappa) (z_{k-1} - z_{k-2})."""
    n, L = TASK.n, 32.0
    const = make_solver("sc_svrg", TASK, 0.01, {"scheme": "const", "L": L}, 0,
                        Oracle("topk", 5, 1.0))
    assert const.kappa == pytest.approx(L / (n + 1) - 0.01)
    assert const.lr == pytest.approx(1 / (L + 0.01 + const.kappa))
    assert const.method == "sc_svrg-const-L=32-topk-K5-mu1"
    adapt = make_solver("sc_svrg", TASK, LAM, {"decay_rule": "expo", "lr": 0.02,
                                               "warm_start": "extrapolation",
                                               "output": "average"}, 0, Oracle("topk", 5, 2.0))
    assert adapt.decay == pytest.approx(0.804019, abs=1e-6) and adapt.mu == 2.0
    for k in range(1, 4):
        adapt.run_until(3 * n * k)
        assert adapt.mu == pytest.approx(2.0 * 0.804019 ** k, rel=1e-5)
        expected = adapt.previous + 0.5 * (adapt.center - adapt.center_before)
        adapt.run_until(3 * n * k + 1)                  # the next epoch's anchor
        np.testing.assert_allclose(adapt.anchor, expected, atol=1e-12)
    previous = make_solver("sc_svrg", TASK, LAM, {"warm_start": "prev_iterate", "lr": 0.02},
                           0, Oracle("topk", 5, 1.0))
    previous.run_until(3 * n)
    w1 = previous.previous.copy()
    previous.run_until(3 * n + 1)
    np.testing.assert_array_equal(previous.anchor, w1)
    with pytest.raises(UserError, match="solver.L"):
        make_solver("sc_svrg", TASK, LAM, {"L": 32.0}, 0, Oracle("topk", 5, 1.0))


def test_the_casimir_tie_order_is_a_top_k_setting_of_chain_tasks():
    """``oracle.ties=casimir`` (issue 32) names its curves, changes the top-K oracle's
    compiled kind, and is refused on a task whose top-K oracle has no such order."""
    oracle = Oracle("topk", 5, 1.0, "casimir")
    assert oracle.label() == ["topk", "K5", "mu1", "ties=casimir"]
    assert Oracle("topk", 5, 1.0).label() == ["topk", "K5", "mu1"]
    assert oracle.call == (3, 5, 1.0) and Oracle("topk", 5, 1.0).call == (1, 5, 1.0)
    solver = make_solver("svrg", TASK, LAM, {}, 0, oracle)
    solver.run_until(3 * TASK.n)
    assert np.isfinite(solver.current()[0]).all()
    boxes = make_task(load_scenes(n_train=20, n_test=1, size=32, seed=1).train)
    with pytest.raises(UserError, match="oracle.ties=casimir is not an order of the top-K "
                                        "oracle of boxes tasks"):
        make_solver("svrg", boxes, LAM, {}, 0, oracle)


HASHED = make_task(random_hashed_chains(25, 4, 6, 40, seed=7))


@pytest.mark.parametrize("task", [TASK, HASHED], ids=["chain", "hashed_chain"])
@pytest.mark.parametrize("name,options,oracle", [
    ("svrg", {"output": "average"}, Oracle("topk", 3, 0.5, "casimir")),
    ("svrg", {}, Oracle("exp", 1, 0.5)),
    ("sc_svrg", {"output": "average", "decay_rule": "expo"}, Oracle("topk", 5, 1.0)),
])
def test_a_step_reads_the_anchor_directions_kept_at_the_epoch_start(task, name, options,
                                                                     oracle):
    """Each example's grad f_i at the anchor is kept from the full gradient's pass and read
    by the steps: the same iterates, to the bit, as asking the oracle again (``kept=None``,
    a plugin task's path); and a saved state, without the tables derived from the rest,
    continues the same: mid-epoch (7n + 3 calls) its load computes them again, to the bit."""
    kept = make_solver(name, task, LAM, {**options, "lr": 0.05}, 3, oracle)
    asked = make_solver(name, task, LAM, {**options, "lr": 0.05}, 3, oracle)
    asked.kept = None
    assert kept.kept is not None
    for calls in (task.n + 7, 3 * task.n, 3 * task.n + 1, 7 * task.n + 3):
        kept.run_until(calls)
        asked.run_until(calls)
        assert np.array_equal(kept.current()[0], asked.current()[0])
        assert np.array_equal(kept.v, asked.v) and np.array_equal(kept.c, asked.c)
    resumed = make_solver(name, task, LAM, {**options, "lr": 0.05}, 3, oracle)
    state = kept.state_dict()
    assert not {"Uc", "Ua", "kept"} & set(state)        # derived again when loaded
    calls = task.data.calls[0]
    resumed.load_state(pickle.loads(pickle.dumps(state)))
    assert task.data.calls[0] == calls                   # not calls the method makes
    for table in ("Uc", "Ua"):
        assert np.array_equal(getattr(resumed, table), getattr(kept, table))
    for solver in (kept, resumed):
        solver.run_until(9 * task.n)
    assert np.array_equal(kept.current()[0], resumed.current()[0])


@pytest.mark.parametrize("oracle", [Oracle(), Oracle("topk", 3, 0.5), Oracle("topk", 3, 0.5, "casimir"),
                                    Oracle("exp", 1, 0.5)], ids=["max", "topk", "topk-casimir", "exp"])
def test_a_chain_tasks_oracle_scratch_holds_the_chosen_oracle_only(oracle):
    """A chain task's ``bufs`` hold the chosen oracle's parts, the others None, and give the
    values and directions of the full buffers (where ``kind`` chooses when called) to the
    bit."""
    bufs = TASK.oracle_scratch(oracle)
    assert [part is not None for part in bufs] == [oracle.name == "max", oracle.name == "topk",
                                                    oracle.name == "exp"]
    w = np.random.default_rng(2).normal(size=TASK.d)
    for i in range(TASK.n):
        answers = []
        for b in (bufs, oracle.buffers(TASK.max_len, TASK.n_labels)):
            U, _, y, R, E = chain.buffers(TASK.max_len, TASK.n_labels)
            T = chain.unary_scores(w, 1.0, TASK.dims, TASK.data, i, U)
            t0 = TASK.dataset.offsets[i]
            value = hinge_oracle(oracle.kind, oracle.K, oracle.mu, w, 1.0, TASK.dims, U, T,
                                 TASK.dataset.labels[t0:t0 + T], 1.0 / T, b, y, R, E)
            answers.append((value, R[:T].copy(), E[0][:E[2][0]].copy(), E[1][:E[2][0]].copy()))
        assert all(np.array_equal(a, b) for a, b in zip(*answers))


def test_a_solver_with_the_max_oracle_compiles_no_smoothed_oracle(tmp_path):
    """On an empty kernel cache, SSG (the max oracle) on a chain task compiles neither the
    top-K nor the exp oracle (they took 13 of its 25 s of compiling)."""
    code = ("from ssvmbench.data.synthetic import random_chains\n"
            "from ssvmbench.solvers import make_solver\n"
            "from ssvmbench.tasks import smoothing\n"
            "from ssvmbench.tasks.chain_task import ChainTask\n"
            "task = ChainTask(random_chains(5, 3, 4, seed=1))\n"
            "make_solver('ssg', task, 0.1, {}, 0).run_until(task.n)\n"
            "print(len(smoothing.topk_oracle.signatures), len(smoothing.exp_oracle.signatures))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, check=True)
    assert done.stdout.split() == ["0", "0"]
