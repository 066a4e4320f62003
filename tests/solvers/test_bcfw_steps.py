"""BCFW's compiled pass (``bcfw_steps``, its steps written out) against the composite
step plugins call (``block_step``): the same operations in the same order."""

import numba as nb
import numpy as np
import pytest

from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.solvers.bcfw import DualState, bcfw_steps, block_step
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.kernels import scratch


@nb.njit
def block_steps(problem, dual, blocks, order, line_search, k, avg, max_len):
    """``bcfw_steps`` as it was: one :func:`block_step` per example."""
    work = scratch(problem.dims, problem.data, max_len)
    for i in order:
        _, k, blocks = block_step(problem, dual, blocks, i, line_search, k, avg, work)
    return k, blocks


def copies(solver):
    alpha = solver.alpha.copy()
    mu, Psum = solver.task.dual_views(alpha)
    a = solver.averages.arrays()
    dual = DualState(solver.w.copy(), solver.ell.copy(), mu, Psum, solver.ell_i.copy())
    avg = a._replace(U=a.U.copy(), S=a.S.copy(), C=a.C.copy(), L=a.L.copy())
    return dual, alpha, tuple(b.copy() for b in solver.blocks), avg


@pytest.mark.parametrize("line_search", [True, False])
def test_bcfw_steps_equal_block_steps(line_search):
    """From the state after two passes, a pass of ``bcfw_steps`` and of ``block_step``
    calls (uniform draw, repeats included) leave every array equal bit for bit."""
    task = ChainTask(random_chains(30, 4, 7, lengths=(1, 6), seed=3))
    solver = make_solver("bcfw", task, 0.05, {"iterates": ["raw", "wavg", "tavg"]}, 0)
    solver.run_until(2 * task.n)
    order = np.random.default_rng(1).integers(0, task.n, size=3 * task.n)
    results = []
    for steps in (bcfw_steps, block_steps):
        dual, alpha, blocks, avg = copies(solver)
        k, blocks = steps(solver.problem, dual, blocks, order, line_search, solver.steps, avg,
                          task.max_len)
        pool_keys, pool_vals, start, length, cap, used = blocks
        block = [np.s_[s:s + m] for s, m in zip(start, length)]   # the pool's tail is unused
        results.append((k, dual.w, dual.ell, dual.ell_i, alpha, start, length, cap, used,
                        np.concatenate([pool_keys[b] for b in block]),
                        np.concatenate([pool_vals[b] for b in block]), *avg))
    (k, *ours), (k_ref, *theirs) = results
    assert k == k_ref == solver.steps + len(order)
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)
    assert not np.array_equal(results[0][1], solver.w)     # the pass moved w
