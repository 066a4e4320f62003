"""Where a BCFW pass goes on a chain dataset: each stage of the BCFW step (Algorithm 4)
timed over all examples in file order, at the iterate after two passes, cumulative.

Usage: python scripts/profile_bcfw_step.py [OVERRIDES...]   (default: data=ocr lambda=0.01)
The last lines account for the rest of a real BCFW pass (the paper's uniform sampling):
all stages in the order of a uniform draw (what the sampling order costs: the examples'
rows of ``mu``, features and bigram blocks are no longer read in memory order), the solver's
own compiled pass (``bcfw_steps``: the kernels reached through
:mod:`ssvmbench.tasks.kernels`, the real step size) in file order and in that draw (and
in that draw with no token Gram kept: each line search computes its entries), and a real
pass; the last lines are that pass over its oracle (the first two stages: token scores
and loss-augmented Viterbi at the same iterate; the target is at most 2x on OCR, 1.6x on
CoNLL-2000), in file order and in the draw's order (the examples a pass visits, in its
order: what its oracle calls cost it).
"""

import statistics
import sys
import time

import numba as nb
import numpy as np
from stage_timing import prepared, print_pass_time, print_stage_times

from ssvmbench.solvers.bcfw import DualState, bcfw_steps
from ssvmbench.tasks import chain

STAGES = ["scores", "+ loss-augmented Viterbi", "+ residual and <w, d>", "+ ||d||^2",
          "+ update of w", "+ dual state and its average"]


@nb.njit
def first_stages(stages, w, mu, Psum, blocks, dims, data, normalized, max_len, avg_U, C,
                 order):
    """The first ``stages`` stages of a BCFW step for the examples ``order``, with step 0.3
    (the step size does not change the work)."""
    U, delta, y, R, E = chain.buffers(max_len, dims[1])
    x_dense = np.zeros(dims[0])
    total = 0.0
    for i in order:
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


def state_copies(solver):
    """``(dual, blocks, avg)`` of ``solver``, copied (a timed pass changes them)."""
    alpha = solver.alpha.copy()
    mu, Psum = solver.task.dual_views(alpha)
    a = solver.averages
    return (DualState(solver.w.copy(), solver.ell.copy(), mu, Psum, solver.ell_i.copy()),
            tuple(b.copy() for b in solver.blocks),
            a.arrays()._replace(U=a.U.copy(), S=a.S.copy(), C=a.C.copy(), L=a.L.copy()))


def print_kernel_time(name, solver, train, order, problem=None):
    """Median milliseconds of the solver's compiled pass over ``order`` from copies of its
    state (the first call is not counted), on ``problem`` (default: the solver's)."""
    times = []
    for _ in range(6):
        dual, blocks, avg = state_copies(solver)
        start = time.perf_counter()
        bcfw_steps(problem or solver.problem, dual, blocks, order, True, solver.steps, avg,
                   train.max_len)
        times.append(time.perf_counter() - start)
    print(f"{name:>35}: {statistics.median(times[1:]) * 1e3:8.1f} ms")


def main(overrides):
    solver, train = prepared(["solver=bcfw", "data=ocr", "lambda=0.01", *overrides])
    solver.run_until(2 * train.n)
    file_order = np.arange(train.n)
    drawn = np.random.default_rng(0).integers(0, train.n, size=train.n)

    def arguments(order):
        return lambda: (solver.w.copy(), solver.mu.copy(), solver.Psum.copy(),
                        tuple(b.copy() for b in solver.blocks), train.dims, train.data,
                        train.normalized, train.max_len, solver.averages.U.copy(),
                        solver.averages.C.copy(), order)
    oracle = print_stage_times(STAGES, first_stages, arguments(file_order))[1]
    print_stage_times(STAGES[-1:], lambda _, *args: first_stages(len(STAGES), *args),
                      arguments(drawn), ["... in a uniform draw's order"])
    drawn_oracle = print_stage_times(STAGES[:1], lambda _, *args: first_stages(2, *args),
                                     arguments(drawn), ["oracle in draw order"])[0]
    print_kernel_time("BCFW's own pass kernel, file order", solver, train, file_order)
    print_kernel_time("... in that draw's order", solver, train, drawn)
    no_gram = solver.problem._replace(data=train.data._replace(gram=np.empty(0)))
    print_kernel_time("... token Gram not kept", solver, train, drawn, no_gram)
    real = print_pass_time("BCFW pass (uniform sampling)", solver, train, 3)
    print(f"{'pass / oracle':>35}: {real / oracle:8.2f} x")
    print(f"{'pass / oracle in draw order':>35}: {real / drawn_oracle:8.2f} x")


if __name__ == "__main__":
    main(sys.argv[1:])
