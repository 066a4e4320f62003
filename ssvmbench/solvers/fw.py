"""Batch Frank-Wolfe on the structural SVM dual (BCFW Algorithm 2).

Each iteration calls the max oracle on all n examples, forms
``w_s = 1/(lam n) sum_i psi_i(y*_i)`` and ``ell_s = 1/n sum_i L_i(y*_i)``, and steps
with the line search of Algorithm 2 or the predefined ``gamma_k = 2/(k+2)``.
It equals the batch subgradient method with step ``gamma/lam`` (Section 3).
"""

import numba as nb
import numpy as np

from ssvmbench.solvers.averaging import end_step, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.chain import (add_direction, buffers, hamming, psi_residual,
                                   unary_scores, viterbi)


@nb.njit(cache=True)
def fw_corner(w, w_s, dims, data, lam, max_len):
    """Fill ``w_s`` with the Frank-Wolfe corner of Algorithm 2; return ``ell_s``."""
    offsets, labels = data[0], data[1]
    n = len(offsets) - 1
    L = dims[1]
    U, delta, y, R, E = buffers(max_len, L)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    w_s[:] = 0.0
    ell_s = 0.0
    for i in range(n):
        t0 = offsets[i]
        T = unary_scores(w, 1.0, dims, data, i, U)
        gold = labels[t0:t0 + T]
        viterbi(w, 1.0, dims, U, T, gold, True, delta, y)
        ell_s += hamming(gold, y, T) / n
        psi_residual(gold, y, T, R, E)
        add_direction(w_s, 1.0 / (lam * n), dims, data, t0, T, R, E, no_U, no_C)
    return ell_s


class FW(Solver):
    name = "fw"
    options = {"step": ("line_search", "predefined")}

    def __init__(self, task, lam, options, seed, oracle=None):
        super().__init__(task, lam, options, seed, oracle)
        self.w = np.zeros(task.d)
        self.ell = 0.0
        self._w_s = np.empty(task.d)

    def advance(self, budget):
        t = self.task
        ell_s = fw_corner(self.w, self._w_s, t.dims, t.data, self.lam, t.max_len)
        diff = self.w - self._w_s
        if self.opts["step"] == "line_search":
            sq = diff @ diff
            gap = self.lam * (diff @ self.w) - self.ell + ell_s
            gamma = min(max(gap / (self.lam * sq), 0.0), 1.0) if sq > 0 else 0.0
        else:
            gamma = 2.0 / (self.steps + 2.0)
        self.steps += 1
        kinds, U, S, C, Lsum = self.averages.arrays()
        start_step(kinds, self.steps, U, S, C, Lsum)
        U -= gamma * C[:, None] * diff
        self.w -= gamma * diff
        self.ell += gamma * (ell_s - self.ell)
        end_step(kinds, self.steps, S, C, Lsum, 1.0, self.ell)
        return t.n

    def state(self):
        return 1.0, self.w, self.ell
