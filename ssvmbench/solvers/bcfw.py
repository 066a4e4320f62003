"""Block-coordinate Frank-Wolfe on the structural SVM dual (BCFW Algorithm 4).

Line search: the closed form of Algorithm 4 (Appendix B.4), clipped to [0, 1];
``step=predefined``: ``gamma_k = 2n/(k + 2n)`` (Algorithm 3, Appendix F Figure 2).
Sampling: uniform with replacement (the paper) or a fresh permutation per pass.
The block ``alpha_i`` is kept in factored form (per-token label weights ``mu`` and a
sparse block of label-bigram marginals per example), so ``w_i = A alpha_i`` is never
stored: ``w_i - w_s = (phi(y*) - phi(alpha_i)) / (lam n)`` is built from that factored form.
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.solvers.averaging import end_step, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.base import CORE_KERNELS, DIRECTION_KERNELS, DUAL_KERNELS
from ssvmbench.tasks.kernels import (add_direction, decode, direction_dot, direction_sqnorm,
                                     dual_residual, init_marginals, move_marginals, scores,
                                     scratch, weights_from_average)


class DualState(NamedTuple):
    """BCFW's iterate: ``w = A alpha``, ``ell = [b^T alpha]``, the factored dual state
    ``(mu, Psum)`` (:meth:`Task.dual_views <ssvmbench.tasks.base.Task.dual_views>`) and each
    block's ``ell_i``; the blocks' bigram pool (``blocks``) travels beside it, as it may be
    reallocated."""

    w: np.ndarray
    ell: np.ndarray
    mu: np.ndarray
    Psum: np.ndarray
    ell_i: np.ndarray


@nb.njit(cache=True, inline="always")
def block_gap(problem, dual, blocks, i, work):
    """Frank-Wolfe gap of block ``i`` at the current ``w`` (one max-oracle call), times
    ``n``: ``<w, phi(y*) - phi(alpha_i)> + L_i(y*) - n ell_i`` (BCFW Section 3,
    ``g^(i) = lam <w_i - w_s, w> - ell_i + ell_s`` with ``w_i - w_s = -direction/(lam n)``).
    ``problem``: a :class:`~ssvmbench.solvers.base.Problem`, ``dual`` a :class:`DualState`,
    ``work`` the task's :class:`~ssvmbench.tasks.base.Scratch`. Returns ``(n g_i, L_i(y*),
    t0, T)`` and leaves the direction ``(R, E)`` of the block step and the scores ``U`` in
    ``work``."""
    dims, data = problem.dims, problem.data
    n = len(data[0]) - 1
    t0 = data[0][i]
    T = scores(dual.w, 1.0, dims, data, i, work.U)
    loss = decode(dual.w, dims, data, problem.normalized, i, work.U, T, work.delta, work.y)
    dual_residual(dual.mu, blocks, data, i, t0, work.y, T, work.R, work.E)
    return (direction_dot(dual.w, dims, data, work.U, T, work.R, work.E) - n * dual.ell_i[i]
            + loss, loss, t0, T)


@nb.njit(cache=True, inline="always")
def block_step(problem, dual, blocks, i, line_search, k, avg, work):
    """One step of BCFW Algorithm 4 on block ``i``: its gap (:func:`block_gap`), then the
    line-search step ``gamma = lam n g_i / ||direction||^2`` clipped to [0, 1] (or the
    predefined ``2n / (k + 2n)``), applied to ``dual`` and recorded in the averages ``avg``
    (:class:`~ssvmbench.solvers.averaging.AverageArrays`). Returns ``(n g_i, k + 1,
    blocks)`` (the pool may have grown)."""
    dims, data, lam = problem.dims, problem.data, problem.lam
    n = len(data[0]) - 1
    gap, loss, t0, T = block_gap(problem, dual, blocks, i, work)
    if line_search:
        sq = direction_sqnorm(dims, data, t0, T, work.R, work.E, work.dense)
        gamma = min(max(lam * n * gap / sq, 0.0), 1.0) if sq > 0.0 else 0.0
    else:
        gamma = 2.0 * n / (k + 2.0 * n)
    k += 1
    start_step(avg, k)
    if gamma > 0.0:
        # w is not averaged (the dual state is): no average records, given as empty views
        # (empty new arrays would be two allocations per step)
        add_direction(dual.w, -gamma / (lam * n), dims, data, t0, T, work.R, work.E,
                      avg.U[:0], avg.C[:0])
        blocks = move_marginals(dual.mu, dual.Psum, blocks, data, i, t0, T, gamma, work.R,
                                work.E, avg.U, avg.C)
        new_ell_i = (1.0 - gamma) * dual.ell_i[i] + gamma * loss / n
        dual.ell[0] += new_ell_i - dual.ell_i[i]
        dual.ell_i[i] = new_ell_i
    end_step(avg, k, 1.0, dual.ell[0])
    return gap, k, blocks


@nb.njit(cache=True)
def bcfw_steps(problem, dual, blocks, order, line_search, k, avg, max_len):
    """Algorithm 4 for the examples ``order``; returns the new step counter ``k`` and
    the blocks (whose pool may have grown). The averages are kept of the dual state
    ``(mu, Psum)`` (cheaper per step than of ``w``).

    The steps are :func:`block_step`'s, written out with the arrays taken out of their
    tuples once: a call of the inlined ``block_step`` binds its tuples of arrays anew each
    step, a reference count per array (≈ 1 µs a step, 6 ms of an OCR pass). The same
    operations in the same order: ``test_bcfw_steps_equal_block_steps``."""
    dims, data, lam, normalized = problem.dims, problem.data, problem.lam, problem.normalized
    n = len(data[0]) - 1
    w, ell, mu, Psum, ell_i = dual.w, dual.ell, dual.mu, dual.Psum, dual.ell_i
    work = scratch(dims, data, max_len)
    U, delta, y, R, E, dense = work.U, work.delta, work.y, work.R, work.E, work.dense
    no_U, no_C = avg.U[:0], avg.C[:0]
    for i in order:
        t0 = data[0][i]
        T = scores(w, 1.0, dims, data, i, U)
        loss = decode(w, dims, data, normalized, i, U, T, delta, y)
        dual_residual(mu, blocks, data, i, t0, y, T, R, E)
        gap = direction_dot(w, dims, data, U, T, R, E) - n * ell_i[i] + loss
        if line_search:
            sq = direction_sqnorm(dims, data, t0, T, R, E, dense)
            gamma = min(max(lam * n * gap / sq, 0.0), 1.0) if sq > 0.0 else 0.0
        else:
            gamma = 2.0 * n / (k + 2.0 * n)
        k += 1
        start_step(avg, k)
        if gamma > 0.0:
            add_direction(w, -gamma / (lam * n), dims, data, t0, T, R, E, no_U, no_C)
            blocks = move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, avg.U,
                                    avg.C)
            new_ell_i = (1.0 - gamma) * ell_i[i] + gamma * loss / n
            ell[0] += new_ell_i - ell_i[i]
            ell_i[i] = new_ell_i
        end_step(avg, k, 1.0, ell[0])
    return k, blocks


class BCFW(Solver):
    name = "bcfw"
    options = {"step": ("line_search", "predefined"), "sampling": ("uniform", "permutation")}
    needs = CORE_KERNELS + DIRECTION_KERNELS + DUAL_KERNELS

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.w = np.zeros(task.d)
        self.ell = np.zeros(1)
        self.ell_i = np.zeros(task.n)
        self.alpha = np.empty(self.averaged_size())   # averaged dual state: (mu, Psum)
        self.mu, self.Psum = task.dual_views(self.alpha)
        self.blocks = init_marginals(task.data, self.mu, self.Psum)

    @property
    def dual(self):
        """The :class:`DualState` its compiled steps take (views of its arrays)."""
        return DualState(self.w, self.ell, self.mu, self.Psum, self.ell_i)

    def advance(self, budget):
        order = self.next_indices(budget)
        self.steps, self.blocks = bcfw_steps(
            self.problem, self.dual, self.blocks, order, self.opts["step"] == "line_search",
            self.steps, self.averages.arrays(), self.task.max_len)
        return len(order)

    def load_state(self, state):
        """As the base class, with ``mu`` and ``Psum`` views of the flat state ``alpha`` again
        (a saved state holds them as copies)."""
        super().load_state(state)
        self.mu, self.Psum = self.task.dual_views(self.alpha)

    def averaged_size(self):
        """BCFW averages its factored dual state ``(mu, Psum)``."""
        return self.task.dual_size()

    def state(self):
        return 1.0, self.w, self.ell[0]

    def average(self, j):
        """Average ``j`` of the dual state mapped to ``(w̄ = A ᾱ, ell̄)``."""
        av = self.averages
        w = np.empty(self.task.d)
        weights_from_average(self.alpha, av.U[j], av.C[j], av.S[j], self.task.dims,
                             self.task.data, self.lam, w)
        return w, av.L[j] / av.S[j]
