"""Where an SVRG pass goes on a chain dataset: each stage of the SVRG step (Casimir
Algorithm 1's inner loop, ssvmbench.solvers.svrg.svrg_steps) timed over all examples in file
order, at the iterate after two epochs, cumulative.

Usage: python scripts/profile_svrg_step.py [OVERRIDES...]
(default: Casimir Figure 2a's SVRG on CoNLL-2003, data=conll2003_casimir loss=hamming
lambda=1/n solver.lr=0.02 solver.output=average oracle=topk +oracle.ties=casimir oracle.K=5
oracle.mu=1). A step reads the anchor's direction that the epoch's full gradient kept, as
the solver's steps do (no oracle call at the anchor). The last line is a real pass (uniform
sampling, the epoch's full gradient and its anchor pass included).
"""

import sys

import numba as nb
import numpy as np
from stage_timing import prepared, print_pass_time, print_stage_times

from ssvmbench.tasks import transitions
from ssvmbench.tasks.chain import buffers
from ssvmbench.tasks.kernels import add_direction, example_oracle, scores, subtract_direction

STAGES = ["scores of w = a v + b c", "+ oracle at w", "+ minus the anchor's kept direction",
          "+ update of v", "+ update of the lazy sum"]
DEFAULTS = ["solver=svrg", "data=conll2003_casimir", "loss=hamming", "lambda=1/n",
            "solver.lr=0.02", "solver.output=average", "oracle=topk", "+oracle.ties=casimir",
            "oracle.K=5", "oracle.mu=1"]


@nb.njit
def first_stages(stages, v, ab, Uc, dims, data, normalized, kind, K, mu, bufs, max_len, kept,
                 D):
    """The first ``stages`` stages of an SVRG step for every example, with a step of 1e-9
    (the step size does not change the work); the anchor's direction is read from ``kept``
    (:class:`~ssvmbench.solvers.svrg.AnchorDirections`), as the solver's steps read it."""
    U, _, y, R, E = buffers(max_len, dims[1])
    E2 = transitions.scratch(max_len, dims[1])
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    D_rows, weight = D.reshape((1, len(D))), np.ones(1)
    total = 0.0
    for i in range(len(data[0]) - 1):
        t0 = data[0][i]
        T = scores(v, ab[0], dims, data, i, U)
        for t in range(T):
            for l in range(U.shape[1]):
                U[t, l] += ab[1] * Uc[t0 + t, l]
        if stages > 1:
            total += example_oracle(kind, K, mu, v, ab[0], dims, data, normalized, i, U, T,
                                    bufs, y, R, E)
        if stages > 2:
            p, m = kept.ptr[i], kept.count[i]
            subtract_direction(data, T, R, E, kept.R[t0:t0 + T],
                               (kept.keys[p:p + m], kept.vals[p:p + m], kept.count[i:i + 1],
                                E2[3], E2[4]))
        if stages > 4:                # v's update recording the lazy sum, as the solver's
            add_direction(v, -1e-9, dims, data, t0, T, R, E, D_rows, weight)
        elif stages > 3:
            add_direction(v, -1e-9, dims, data, t0, T, R, E, no_U, no_C)
    return total


def main(overrides):
    solver, train = prepared([*DEFAULTS, *overrides])
    solver.run_until(6 * train.n)                     # two epochs of three passes
    o = solver.oracle
    lazy_sum = np.zeros(train.d)                      # D of svrg_steps, written once
    print_stage_times(STAGES, first_stages, lambda: (
        solver.v.copy(), solver.ab.copy(), solver.Uc, train.dims, train.data, train.normalized,
        o.kind, o.K, solver.mu, solver._bufs, train.max_len, solver.kept, lazy_sum))
    print_pass_time("SVRG pass (uniform sampling)", solver, train, 6)


if __name__ == "__main__":
    main(sys.argv[1:])
