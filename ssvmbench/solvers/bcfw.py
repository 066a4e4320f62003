"""Block-coordinate Frank-Wolfe on the structural SVM dual (BCFW Algorithm 4).

Line search: the closed form of Algorithm 4 (Appendix B.4), clipped to [0, 1];
``step=predefined``: ``gamma_k = 2n/(k + 2n)`` (Algorithm 3, Appendix F Figure 2).
Sampling: uniform with replacement (the paper) or a fresh permutation per pass.
The block ``alpha_i`` is kept in factored form (per-token label weights ``mu`` and a
sparse block of label-bigram marginals per example), so ``w_i = A alpha_i`` is never
stored: ``w_i - w_s = (phi(y*) - phi(alpha_i)) / (lam n)`` is built from that factored form.
"""

import numba as nb
import numpy as np

from ssvmbench.solvers.averaging import end_step, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.chain import buffers
from ssvmbench.tasks.kernels import (add_direction, decode, direction_dot, direction_sqnorm,
                                     dual_residual, init_marginals, move_marginals, scores,
                                     weights_from_average)


@nb.njit(cache=True)
def block_gap(w, mu, blocks, ell_i, dims, data, normalized, i, scratch):
    """Frank-Wolfe gap of block ``i`` at the current ``w`` (one max-oracle call), times
    ``n``: ``<w, phi(y*) - phi(alpha_i)> + L_i(y*) - n ell_i`` (BCFW Section 3,
    ``g^(i) = lam <w_i - w_s, w> - ell_i + ell_s`` with ``w_i - w_s = -direction/(lam n)``).
    Returns ``(n g_i, L_i(y*), t0, T)`` and leaves the direction ``(R, E)`` of the block step
    and the token scores ``U`` in ``scratch = (U, delta, y, R, E)``."""
    U, delta, y, R, E = scratch
    n = len(data[0]) - 1
    t0 = data[0][i]
    T = scores(w, 1.0, dims, data, i, U)
    loss = decode(w, dims, data, normalized, i, U, T, delta, y)
    dual_residual(mu, blocks, data, i, t0, y, T, R, E)
    return direction_dot(w, dims, data, U, T, R, E) - n * ell_i[i] + loss, loss, t0, T


@nb.njit(cache=True)
def block_step(w, ell, mu, Psum, blocks, ell_i, dims, data, normalized, i, lam, line_search,
               k, kinds, avg_U, S, C, Lsum, scratch, x_dense):
    """One step of BCFW Algorithm 4 on block ``i``: its gap (:func:`block_gap`), then the
    line-search step ``gamma = lam n g_i / ||direction||^2`` clipped to [0, 1] (or the
    predefined ``2n / (k + 2n)``), applied to ``w``, ``ell`` and the factored dual state and
    recorded in the averages. Returns ``(n g_i, k + 1, blocks)`` (the pool may have grown).
    ``x_dense``: an all-zero scratch of ``dims[0]`` entries."""
    n = len(data[0]) - 1
    gap, loss, t0, T = block_gap(w, mu, blocks, ell_i, dims, data, normalized, i, scratch)
    R, E = scratch[3], scratch[4]
    if line_search:
        sq = direction_sqnorm(dims, data, t0, T, R, E, x_dense)
        gamma = min(max(lam * n * gap / sq, 0.0), 1.0) if sq > 0.0 else 0.0
    else:
        gamma = 2.0 * n / (k + 2.0 * n)
    k += 1
    start_step(kinds, k, avg_U, S, C, Lsum)
    if gamma > 0.0:
        add_direction(w, -gamma / (lam * n), dims, data, t0, T, R, E, np.empty((0, 0)),
                      np.empty(0))
        blocks = move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, avg_U, C)
        new_ell_i = (1.0 - gamma) * ell_i[i] + gamma * loss / n
        ell[0] += new_ell_i - ell_i[i]
        ell_i[i] = new_ell_i
    end_step(kinds, k, S, C, Lsum, 1.0, ell[0])
    return gap, k, blocks


@nb.njit(cache=True)
def bcfw_steps(w, ell, mu, Psum, blocks, ell_i, dims, data, normalized, order, lam,
               line_search, k, kinds, avg_U, S, C, Lsum, max_len):
    """Algorithm 4 for the examples ``order``; returns the new step counter ``k`` and
    the blocks (whose pool may have grown). The averages are kept of the dual state
    ``(mu, Psum)`` (cheaper per step than of ``w``)."""
    scratch = buffers(max_len, dims[1])
    x_dense = np.zeros(dims[0])
    for i in order:
        _, k, blocks = block_step(w, ell, mu, Psum, blocks, ell_i, dims, data, normalized, i,
                                  lam, line_search, k, kinds, avg_U, S, C, Lsum, scratch,
                                  x_dense)
    return k, blocks


class BCFW(Solver):
    name = "bcfw"
    options = {"step": ("line_search", "predefined"), "sampling": ("uniform", "permutation")}
    tasks = ("chain", "hashed_chain", "boxes", "matching")

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.w = np.zeros(task.d)
        self.ell = np.zeros(1)
        self.ell_i = np.zeros(task.n)
        n_mu = task.n_rows * task.n_labels
        self.alpha = np.empty(self.averaged_size())   # averaged dual state: (mu, Psum)
        self.mu = self.alpha[:n_mu].reshape(task.n_rows, task.n_labels)
        self.Psum = self.alpha[n_mu:]
        self.blocks = init_marginals(task.data, self.mu, self.Psum)

    def advance(self, budget):
        order = self.next_indices(budget)
        t = self.task
        self.steps, self.blocks = bcfw_steps(
            self.w, self.ell, self.mu, self.Psum, self.blocks, self.ell_i, t.dims, t.data,
            t.normalized, order,
            self.lam, self.opts["step"] == "line_search", self.steps,
            *self.averages.arrays(), t.max_len)
        return len(order)

    def load_state(self, state):
        """As the base class, with ``mu`` and ``Psum`` views of the flat state ``alpha`` again
        (a saved state holds them as copies)."""
        super().load_state(state)
        n_mu = self.task.n_rows * self.task.n_labels
        self.mu = self.alpha[:n_mu].reshape(self.task.n_rows, self.task.n_labels)
        self.Psum = self.alpha[n_mu:]

    def averaged_size(self):
        """BCFW averages its factored dual state ``(mu, Psum)``."""
        t = self.task
        return t.n_rows * t.n_labels + t.n_labels**2

    def state(self):
        return 1.0, self.w, self.ell[0]

    def average(self, j):
        """Average ``j`` of the dual state mapped to ``(w̄ = A ᾱ, ell̄)``."""
        av = self.averages
        w = np.empty(self.task.d)
        weights_from_average(self.alpha, av.U[j], av.C[j], av.S[j], self.task.dims,
                             self.task.data, self.lam, w)
        return w, av.L[j] / av.S[j]
