"""Where a BCFW pass goes on a chain dataset: each stage of the BCFW step (Algorithm 4)
timed over all examples in file order, at the iterate after two passes, cumulative.

Usage: python scripts/profile_bcfw_step.py [OVERRIDES...]   (default: data=ocr lambda=0.01)
The last line is a real BCFW pass (the paper's uniform sampling) for comparison.
"""

import sys

import numba as nb
import numpy as np
from stage_timing import prepared, print_pass_time, print_stage_times

from ssvmbench.tasks import chain

STAGES = ["scores", "+ loss-augmented Viterbi", "+ residual and <w, d>", "+ ||d||^2",
          "+ update of w", "+ dual state and its average"]


@nb.njit
def first_stages(stages, w, mu, Psum, blocks, dims, data, normalized, max_len, avg_U, C):
    """The first ``stages`` stages of a BCFW step for every example, with step 0.3 (the
    step size does not change the work)."""
    U, delta, y, R, E = chain.buffers(max_len, dims[1])
    x_dense = np.zeros(dims[0])
    total = 0.0
    for i in range(len(data[0]) - 1):
        t0 = data[0][i]
        T = chain.unary_scores(w, 1.0, dims, data, i, U)
        if stages > 1:
            chain.decode(w, dims, data, normalized, i, U, T, delta, y)
        if stages > 2:
            chain.marginals_residual(mu, blocks, data, i, t0, y, T, R, E)
            total += chain.direction_dot(w, dims, data, U, T, R, E)
        if stages > 3:
            total += chain.direction_sqnorm(dims, data, t0, T, R, E, x_dense)
        if stages > 4:
            chain.add_direction(w, 1e-9, dims, data, t0, T, R, E, np.empty((0, 0)), np.empty(0))
        if stages > 5:
            blocks = chain.move_marginals(mu, Psum, blocks, data, i, t0, T, 0.3, R, E, avg_U,
                                          C)
    return total


def main(overrides):
    solver, train = prepared(["solver=bcfw", "data=ocr", "lambda=0.01", *overrides])
    solver.run_until(2 * train.n)
    print_stage_times(STAGES, first_stages, lambda: (
        solver.w.copy(), solver.mu.copy(), solver.Psum.copy(),
        tuple(b.copy() for b in solver.blocks), train.dims, train.data, train.normalized,
        train.max_len, solver.averages.U.copy(), solver.averages.C.copy()))
    print_pass_time("BCFW pass (uniform sampling)", solver, train, 3)


if __name__ == "__main__":
    main(sys.argv[1:])
