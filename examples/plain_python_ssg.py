"""A solver in plain Python and NumPy, one oracle call per example from Python through the
kernel API: the stochastic subgradient method with Pegasos' step ``1 / (lam (t + 1))`` (BCFW
Section 6 and Appendix F, "SSG"). It runs on every task (it needs only the core kernels) and passes
``ssvmbench check-solver``; ssvmbench's own ``solver=sgd solver.step=pegasos`` is the same
method compiled. To use it from the command line, register the class under the entry-point
group ``ssvmbench.solvers`` of an installed package (see examples/gap_bcfw/pyproject.toml)."""

import numpy as np

from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.kernels import add_direction, example_oracle, scores, scratch


class PlainSSG(Solver):
    name = "plain_ssg"
    has_dual = False
    averages_iterates = False
    default_iterates = ("raw",)
    options = {"sampling": ("uniform", "permutation")}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.w = np.zeros(task.d)
        self.work = scratch(task.dims, task.data, task.max_len)   # U, delta, y, R, E, dense
        self.oracle_buffers = task.oracle_scratch(self.oracle)

    def advance(self, budget):
        t, o = self.task, self.oracle
        U, y, R, E = self.work.U, self.work.y, self.work.R, self.work.E
        no_averages = np.empty((0, 0)), np.empty(0)
        order = self.next_indices(budget)
        for i in order:
            rows = scores(self.w, 1.0, t.dims, t.data, i, U)
            example_oracle(o.kind, o.K, o.mu, self.w, 1.0, t.dims, t.data, t.normalized, i, U,
                           rows, self.oracle_buffers, y, R, E)     # gradient into (R, E)
            gamma = 1.0 / (self.lam * (self.steps + 1))
            self.w *= 1.0 - gamma * self.lam
            add_direction(self.w, -gamma, t.dims, t.data, t.data[0][i], rows, R, E,
                          *no_averages)
            self.steps += 1
        return len(order)

    def state(self):
        return 1.0, self.w, np.nan
