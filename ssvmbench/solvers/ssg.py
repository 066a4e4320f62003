"""Stochastic subgradient (SSG) with the Pegasos step (BCFW Section 6, Appendix F).

Step ``k`` (from 0) on example ``i``: ``w <- (1 - gamma) w + gamma/lam psi_i(y*)``
with ``gamma = 1/(k+1)``, i.e. the step size ``1/(lam (k+1))`` of Shalev-Shwartz et
al. (2010). ``w = a v`` is kept with a scalar ``a`` so a step touches only the
features of the example; ``v`` is renormalized when ``a`` gets small.
"""

import numba as nb
import numpy as np

from ssvmbench.solvers.averaging import end_step, rescale, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.chain import add_direction, buffers, psi_residual, unary_scores, viterbi


@nb.njit(cache=True)
def ssg_steps(v, scale, dims, data, order, lam, k, kinds, avg_U, S, C, Lsum, max_len):
    """Pegasos steps for the examples ``order``; returns the new step counter ``k``."""
    offsets, labels = data[0], data[1]
    L = dims[1]
    U, delta, y, R, E = buffers(max_len, L)
    a = scale[0]
    for i in order:
        t0 = offsets[i]
        T = unary_scores(v, a, dims, data, i, U)
        gold = labels[t0:t0 + T]
        viterbi(v, a, dims, U, T, gold, True, delta, y)
        gamma = 1.0 / (k + 1.0)
        k += 1
        start_step(kinds, k, avg_U, S, C, Lsum)
        if k == 1:          # w_1 = psi/lam: v starts at 0, so only the scale is reset
            a = 1.0
        else:
            a *= 1.0 - gamma
        psi_residual(gold, y, T, R, E)
        add_direction(v, gamma / (lam * a), dims, data, t0, T, R, E, avg_U, C)
        end_step(kinds, k, S, C, Lsum, a, 0.0)
        if a < 1e-6:
            v *= a
            rescale(C, a)
            a = 1.0
    scale[0] = a
    return k


class SSG(Solver):
    name = "ssg"
    has_dual = False
    options = {"step": ("pegasos",), "sampling": ("uniform", "permutation")}

    def __init__(self, task, lam, options, seed):
        super().__init__(task, lam, options, seed)
        self.v = np.zeros(task.d)
        self.scale = np.ones(1)

    def advance(self, budget):
        order = self.next_indices(budget)
        t = self.task
        self.steps = ssg_steps(self.v, self.scale, t.dims, t.data, order, self.lam,
                               self.steps, *self.averages.arrays(), t.max_len)
        return len(order)

    def state(self):
        return self.scale[0], self.v, np.nan
