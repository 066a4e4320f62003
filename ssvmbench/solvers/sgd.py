"""Stochastic subgradient methods on the primal: SGD with the step ``gamma_t = gamma0 / (1 +
t/t0)`` and the weighted average ``w̄_t = 2/(t(t+1)) sum_j j w_j`` (Casimir Section 4,
"Methods"), and SSG, the same step with Pegasos' ``gamma_t = 1/(lam (t+1))`` (BCFW Section 6,
Appendix F; ``gamma0 = 1/lam``, ``t0 = 1``).

Step ``t`` (from 0) on example ``i``: ``w <- (1 - gamma_t lam) w - gamma_t grad f_i(w)``, with
the gradient of the max, top-K or exp oracle (:mod:`ssvmbench.tasks.chain_oracles`). ``w = a v``
is kept with a scalar ``a`` so a step touches only the features of the example; ``v`` is
renormalized when ``a`` gets small.
"""

import numba as nb
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.solvers.averaging import end_step, fold, start_step
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.kernels import add_direction, example_oracle, scores, scratch


@nb.njit(cache=True)
def sgd_steps(problem, v, scale, order, gamma0, t0, k, oracle, bufs, avg, max_len):
    """SGD steps for the examples ``order`` on ``w = scale[0] v`` (``problem`` a
    :class:`~ssvmbench.solvers.base.Problem`, ``oracle`` ``(kind, K, mu)``
    (:attr:`Oracle.call <ssvmbench.tasks.oracle.Oracle.call>`), ``avg`` the
    :class:`~ssvmbench.solvers.averaging.AverageArrays`); returns the new step counter
    ``k``."""
    dims, data, lam = problem.dims, problem.data, problem.lam
    kind, K, mu = oracle
    U, _, y, R, E, _ = scratch(dims, data, max_len)
    a = scale[0]
    for i in order:
        T = scores(v, a, dims, data, i, U)
        example_oracle(kind, K, mu, v, a, dims, data, problem.normalized, i, U, T, bufs, y, R,
                       E)
        gamma = gamma0 / (1.0 + k / t0)
        k += 1
        start_step(avg, k)
        shrink = 1.0 - gamma * lam
        if shrink <= 0.0:       # first Pegasos step: w_1 = -gamma grad, v is still 0
            a = 1.0
        else:
            a *= shrink
        add_direction(v, -gamma / a, dims, data, data[0][i], T, R, E, avg.U, avg.C)
        end_step(avg, k, a, 0.0)
        if a < 1e-6:
            fold(avg.U, avg.C, v)
            v *= a
            a = 1.0
    scale[0] = a
    return k


class SGD(Solver):
    name = "sgd"
    has_dual = False
    oracles = ("max", "topk", "exp")
    options = {"step": ("decay", "pegasos"), "sampling": ("uniform", "permutation")}
    numbers = {"gamma0": 0.1, "t0": 1000.0}     # tuned on CoNLL-2003 (issue 4)

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        if self.opts["step"] == "pegasos":
            self.gamma0, self.t0 = 1.0 / self.lam, 1.0
        else:
            self.gamma0, self.t0 = self.opts["gamma0"], self.opts["t0"]
            if not (self.gamma0 > 0 and self.t0 > 0 and self.gamma0 * self.lam <= 1.0):
                raise UserError(
                    f"solver.gamma0={self.gamma0}, solver.t0={self.t0}: both must be > 0 "
                    f"and gamma0 * lambda <= 1 (lambda = {self.lam:g})")
        self.v = np.zeros(task.d)
        self.scale = np.ones(1)
        self._bufs = task.oracle_scratch(self.oracle)

    def advance(self, budget):
        order = self.next_indices(budget)
        self.steps = sgd_steps(self.problem, self.v, self.scale, order, self.gamma0, self.t0,
                               self.steps, self.oracle.call, self._bufs,
                               self.averages.arrays(), self.task.max_len)
        return len(order)

    def state(self):
        return self.scale[0], self.v, np.nan


class SSG(SGD):
    """Pegasos SSG (BCFW's baseline): SGD with ``step=pegasos`` and the max oracle."""

    name = "ssg"
    oracles = ("max",)
    options = {"step": ("pegasos",), "sampling": ("uniform", "permutation")}
    numbers = {}
