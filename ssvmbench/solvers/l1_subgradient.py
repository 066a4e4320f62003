"""L1-regularized SSVM by projected stochastic subgradient (SAP Section II, (II.7), the
baseline of SAP Section V-1; Zhu, Xing and Zhang 2009):

    min_w 1/n sum_i H_i(w)   s.t.  ||w||_1 <= epsilon,

with SGD steps ``w <- w - gamma_t grad H_i(w)`` (max oracle, ``gamma_t = gamma0 / (1 + t/t0)``)
and the projection onto the l1 ball (Duchi et al. 2008, sort-based) once per pass over the
examples, as the SAP authors did ("the projection step only after passing through all
examples"). ``epsilon`` (``solver.epsilon``) sets the sparsity; the paper cross-validates it.
The logged primal is the run's objective (``lambda``, ``l1``) at the iterate.
"""

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.solvers.sgd import SGD, sgd_steps


def project_l1_ball(v, radius):
    """Euclidean projection of ``v`` onto ``{w : ||w||_1 <= radius}`` (Duchi et al. 2008,
    Figure 1: soft-thresholding at the ``theta`` found from the sorted magnitudes); only the
    non-zero entries are sorted."""
    nz = np.flatnonzero(v)
    magnitude = np.abs(v[nz])
    if magnitude.sum() <= radius:
        return v
    top = np.sort(magnitude)[::-1]
    cumulative = np.cumsum(top) - radius
    rho = np.flatnonzero(top * np.arange(1, len(top) + 1) > cumulative)[-1]
    theta = cumulative[rho] / (rho + 1)
    out = np.zeros_like(v)
    out[nz] = np.sign(v[nz]) * np.maximum(magnitude - theta, 0.0)
    return out


class L1Subgradient(SGD):
    name = "l1_subgradient"
    elastic_net = True
    shows = ("nnz", "l1", "rho1")   # a sparse model: its #NZ and the elastic net's weights
    oracles = ("max",)
    default_iterates = ("raw",)
    averages_iterates = False   # logs its raw iterate only
    options = {"step": ("decay",), "sampling": ("permutation", "uniform")}
    numbers = {"gamma0": 0.1, "t0": 1000.0, "epsilon": None}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.epsilon = self.opts["epsilon"]
        if self.epsilon is None or not self.epsilon > 0:
            raise UserError(f"solver.epsilon={self.epsilon}: give the l1-ball radius (> 0), "
                            "e.g. solver.epsilon=50")

    def advance(self, budget):
        order = self.next_indices(budget)
        self.steps = sgd_steps(self.problem._replace(lam=0.0), self.v, self.scale, order,
                               self.gamma0, self.t0, self.steps, self.oracle.call, self._bufs,
                               self.averages.arrays(), self.task.max_len)   # no shrinking
        if self._pos == len(self._order):                   # end of a pass
            self.v[:] = project_l1_ball(self.scale[0] * self.v, self.epsilon)
            self.scale[0] = 1.0
        return len(order)
