"""Batch Frank-Wolfe on the structural SVM dual (BCFW Algorithm 2).

Each iteration calls the max oracle on all n examples, forms
``w_s = 1/(lam n) sum_i psi_i(y*_i)`` and ``ell_s = 1/n sum_i L_i(y*_i)``, and steps
with the line search of Algorithm 2 or the predefined ``gamma_k = 2/(k+2)``.
It equals the batch subgradient method with step ``gamma/lam`` (Section 3): with the mean
hinge ``h`` and its subgradient ``g = 1/n sum_i (phi(y*_i) - phi(y_i))`` from one max-oracle
pass, ``w_s = -g / lam`` and ``ell_s = h - <g, w>``.
"""

import numpy as np

from ssvmbench.solvers.averaging import end_step, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.kernels import mean_hinge_and_gradient


class FW(Solver):
    name = "fw"
    options = {"step": ("line_search", "predefined")}
    keeps_best = True
    default_iterates = ("raw", "best")

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.w = np.zeros(task.d)
        self.ell = 0.0
        self._g = np.empty(task.d)
        self._bufs = task.oracle_scratch(self.oracle)

    def advance(self, budget):
        t = self.task
        hinge = mean_hinge_and_gradient(self.w, t.dims, t.data, t.normalized, 0, 1, 0.0,
                                        self._bufs, t.max_len, self._g)
        self.offer_best(self.w, self.objective.primal(self.w, hinge))
        ell_s = hinge - self._g @ self.w          # mean loss L_i(y*_i) of the corner
        diff = self.w + self._g / self.lam        # w - w_s, w_s = -g / lam
        if self.opts["step"] == "line_search":
            sq = diff @ diff
            gap = self.lam * (diff @ self.w) - self.ell + ell_s
            gamma = min(max(gap / (self.lam * sq), 0.0), 1.0) if sq > 0 else 0.0
        else:
            gamma = 2.0 / (self.steps + 2.0)
        self.steps += 1
        avg = self.averages.arrays()
        start_step(avg, self.steps)
        avg.U[:] -= gamma * avg.C[:, None] * diff
        self.w -= gamma * diff
        self.ell += gamma * (ell_s - self.ell)
        end_step(avg, self.steps, 1.0, self.ell)
        return t.n

    def state(self):
        return 1.0, self.w, self.ell
