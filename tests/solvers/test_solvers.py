"""Solvers on small random chains: optimality certificates, monotonicity, averaging."""

import numpy as np
import pytest

from ssvmbench.common.errors import UserError
from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import SOLVERS, make_solver
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.oracle import Oracle

TASK = ChainTask(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
LAM = 0.05
DUAL_SOLVERS = [("bcfw", "line_search"), ("bcfw", "predefined"),
                ("fw", "line_search"), ("fw", "predefined")]


def objectives(solver):
    """``{iterate: (primal, dual)}`` at the current state."""
    out = {}
    for name, w, dual in solver.iterates():
        hinge, _, _ = TASK.evaluate(w)
        out[name] = (0.5 * LAM * w @ w + hinge, dual)
    return out


@pytest.mark.parametrize("name,step", DUAL_SOLVERS)
def test_weak_duality_for_raw_and_averaged_iterates(name, step):
    options = {"step": step, "iterates": ["raw", "avg", "wavg", "tavg"]}
    solver = make_solver(name, TASK, LAM, options, 0)
    for p in range(1, 8):
        solver.run_until(p * TASK.n)
        for iterate, (primal, dual) in objectives(solver).items():
            assert primal - dual >= -1e-10, (iterate, primal, dual)


@pytest.mark.parametrize("name", ["bcfw", "fw"])
def test_weak_duality_with_the_hamming_loss(name):
    """loss=hamming: the dual keeps the unnormalized losses, so primal - dual stays >= 0
    and (BCFW) closes."""
    task = ChainTask(TASK.dataset, loss="hamming")
    solver = make_solver(name, task, LAM, {"iterates": ["raw", "wavg"]}, 0)
    for p in (1, 2, 5, 1000):
        solver.run_until(p * task.n)
        for _, w, dual in solver.iterates():
            gap = 0.5 * LAM * w @ w + task.evaluate(w)[0] - dual
            assert gap >= -1e-10
    if name == "bcfw":
        _, w, dual = solver.iterates()[0]
        assert 0.5 * LAM * w @ w + task.evaluate(w)[0] - dual < 2e-3 * dual


@pytest.mark.parametrize("name", ["bcfw", "fw"])
def test_line_search_never_decreases_the_dual(name):
    solver = make_solver(name, TASK, LAM, {"iterates": ["raw"]}, 1)
    duals = []
    for calls in range(1, 6 * TASK.n, 7):
        solver.run_until(calls)
        duals.append(solver.iterates()[0][2])
    assert np.all(np.diff(duals) >= -1e-12)


def test_bcfw_gap_closes_at_the_frank_wolfe_rate():
    """Theorem 2: the gap goes to 0 like O(n/k)."""
    solver = make_solver("bcfw", TASK, LAM, {"iterates": ["raw"]}, 2)
    gaps = []
    for passes in (100, 1000):
        solver.run_until(passes * TASK.n)
        primal, dual = objectives(solver)["raw"]
        gaps.append(primal - dual)
    assert 0 <= gaps[1] < 1e-3 and gaps[1] < gaps[0] / 5


def test_ssg_reaches_the_bcfw_optimum():
    bcfw = make_solver("bcfw", TASK, LAM, {"iterates": ["raw"]}, 0)
    bcfw.run_until(300 * TASK.n)
    optimum = objectives(bcfw)["raw"][1]
    ssg = make_solver("ssg", TASK, LAM, {"iterates": ["raw", "wavg"]}, 0)
    ssg.run_until(300 * TASK.n)
    assert objectives(ssg)["wavg"][0] - optimum < 0.02 * optimum


AVERAGING = sorted(name for name, cls in SOLVERS.items() if "wavg" in cls.default_iterates)
SMOOTHING = {"sc_svrg": Oracle("topk", 3, 0.5)}       # solvers that need a smooth oracle
REQUIRED = {"l1_subgradient": {"epsilon": 5.0}}       # options without a default


@pytest.mark.parametrize("name", AVERAGING)
def test_averages_equal_their_definitions(name):
    """avg, wavg (eq. 14) and tavg (doubling trick) against explicit averages."""
    solver = make_solver(name, TASK, LAM, {"iterates": ["raw", "avg", "wavg", "tavg"]}, 3)
    per_step = TASK.n if name == "fw" else 1
    history = []
    for k in range(1, 41):
        solver.run_until(k * per_step)
        history.append(solver.current()[0].copy())
    ws = np.array(history)
    k = len(ws)
    last_power = 2 ** int(np.log2(k))
    expected = {
        "avg": ws.mean(0),
        "wavg": (np.arange(1, k + 1)[:, None] * ws).sum(0) * 2 / (k * (k + 1)),
        "tavg": ws[last_power - 1:].mean(0),
    }
    for iterate, w, _ in solver.iterates()[1:]:
        np.testing.assert_allclose(w, expected[iterate], atol=1e-9, err_msg=iterate)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_same_seed_same_trajectory_whatever_the_checkpoints(name):
    options = REQUIRED.get(name, {})
    a = make_solver(name, TASK, LAM, options, 7, SMOOTHING.get(name))
    b = make_solver(name, TASK, LAM, options, 7, SMOOTHING.get(name))
    a.run_until(3 * TASK.n)
    for calls in (5, 17, TASK.n, 2 * TASK.n + 3, 3 * TASK.n):
        b.run_until(calls)
    np.testing.assert_array_equal(a.current()[0], b.current()[0])


def test_permutation_sampling_visits_every_example_once_per_pass():
    solver = make_solver("bcfw", TASK, LAM, {"sampling": "permutation"}, 0)
    seen = np.concatenate([solver.next_indices(TASK.n) for _ in range(3)])
    for p in range(3):
        assert sorted(seen[p * TASK.n:(p + 1) * TASK.n]) == list(range(TASK.n))


@pytest.mark.parametrize("options,fragment", [
    ({"step": "magic"}, "solver.step=magic"),
    ({"sampling": "cyclic"}, "solver.sampling=cyclic"),
    ({"iterates": ["raw", "best"]}, "solver.iterates"),
    ({"iterates": ["wavg"]}, "including 'raw'"),
])
def test_bad_options_are_refused(options, fragment):
    with pytest.raises(UserError, match=fragment):
        make_solver("bcfw", TASK, LAM, options, 0)
    with pytest.raises(UserError, match="choose one of"):
        make_solver("nope", TASK, LAM, {}, 0)


def test_averages_survive_many_renormalizations():
    """SGD whose scale shrinks geometrically (gamma0 lam = 0.5): the lazy averages must
    still equal their definitions after dozens of renormalizations."""
    solver = make_solver("sgd", TASK, LAM, {"gamma0": 10.0, "t0": 1e9,
                                            "iterates": ["raw", "avg", "wavg"]}, 0)
    history = []
    for k in range(1, 401):
        solver.run_until(k)
        history.append(solver.current()[0].copy())
    ws = np.array(history)
    k = len(ws)
    expected = [ws.mean(0), (np.arange(1, k + 1)[:, None] * ws).sum(0) * 2 / (k * (k + 1))]
    for (_, w, _), reference in zip(solver.iterates()[1:], expected):
        np.testing.assert_allclose(w, reference, rtol=1e-8, atol=1e-10)
