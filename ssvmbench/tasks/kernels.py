"""The one seam between solvers and tasks: kernels that solvers call, dispatched at compile
time on the type of the task's ``data`` (DESIGN.md: "the oracle interface as the one seam
between solvers and tasks").

Each name below runs the chain kernel (:mod:`ssvmbench.tasks.chain`,
:mod:`ssvmbench.tasks.oracles`), the box kernel (:mod:`ssvmbench.tasks.boxes`) or the matching
kernel (:mod:`ssvmbench.tasks.matching`) of the same signature, chosen by numba's ``overload``
when the calling solver kernel is compiled, so one solver kernel serves every task and stays
cacheable. A task's arrays: ``U`` its score rows (chain: tokens x labels; boxes: candidates
x 1; matchings: edges x 1), a direction ``(R, E)`` in ``w``-space, the factored BCFW dual
state ``(mu, Psum, blocks)``. Matchings share the edge-wise kernels of boxes (an edge is a
score row with one label, like a candidate box). ``labeling_hinge`` and ``add_labeling``
score and add one stored labeling (the cutting plane's constraint cache).
"""

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

from ssvmbench.tasks import boxes, chain, matching, oracles


def _task_of(arg_types):
    """``"boxes"``, ``"matching"`` or ``"chain"`` from the numba types of a call's arguments."""
    for t in arg_types:
        if isinstance(t, types.BaseNamedTuple):
            if t.instance_class is boxes.BoxData:
                return "boxes"
            if t.instance_class is matching.MatchingData:
                return "matching"
    return "chain"


def _dispatch(chain_kernel, box_kernel, matching_kernel):
    """A function (callable from Python and from compiled code) that runs ``box_kernel``
    when one of its arguments is :class:`~ssvmbench.tasks.boxes.BoxData`,
    ``matching_kernel`` for :class:`~ssvmbench.tasks.matching.MatchingData`, else
    ``chain_kernel``."""
    kernels = {"chain": chain_kernel, "boxes": box_kernel, "matching": matching_kernel}

    def generic(*args):
        task = ("boxes" if any(isinstance(a, boxes.BoxData) for a in args) else
                "matching" if any(isinstance(a, matching.MatchingData) for a in args) else
                "chain")
        return kernels[task](*args)

    @overload(generic)
    def _choose(*args):
        kernel = kernels[_task_of(args)]
        return lambda *args: kernel(*args)

    generic.__doc__ = chain_kernel.__doc__
    return generic


scores = _dispatch(chain.unary_scores, boxes.scores, boxes.scores)
example_oracle = _dispatch(oracles.example_oracle, boxes.example_oracle,
                           matching.example_oracle)
decode = _dispatch(chain.decode, boxes.decode, matching.decode)
add_direction = _dispatch(chain.add_direction, boxes.add_direction, boxes.add_direction)
direction_sqnorm = _dispatch(chain.direction_sqnorm, boxes.direction_sqnorm,
                             boxes.direction_sqnorm)
direction_dot = _dispatch(chain.direction_dot, boxes.direction_dot, boxes.direction_dot)
dual_residual = _dispatch(chain.marginals_residual, boxes.dual_residual,
                          matching.dual_residual)
init_marginals = _dispatch(chain.init_marginals, boxes.init_marginals,
                           matching.init_marginals)
move_marginals = _dispatch(chain.move_marginals, boxes.move_marginals, boxes.move_marginals)
weights_from_average = _dispatch(chain.weights_from_average, boxes.weights_from_average,
                                 matching.weights_from_average)
labeling_hinge = _dispatch(chain.labeling_hinge, boxes.labeling_hinge, matching.labeling_hinge)
add_labeling = _dispatch(chain.add_labeling, boxes.add_labeling, matching.add_labeling)


@nb.njit(cache=True)
def mean_hinge_and_gradient(w, dims, data, normalized, kind, K, mu, bufs, max_len, g):
    """``g = 1/n sum_i grad f_i(w)``; returns ``1/n sum_i f_i(w)`` (n oracle calls)."""
    n = len(data[0]) - 1
    U, _, y, R, E = chain.buffers(max_len, dims[1])
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    g[:] = 0.0
    total = 0.0
    for i in range(n):
        T = scores(w, 1.0, dims, data, i, U)
        total += example_oracle(kind, K, mu, w, 1.0, dims, data, normalized, i, U, T, bufs, y,
                                R, E)
        add_direction(g, 1.0 / n, dims, data, data[0][i], T, R, E, no_U, no_C)
    return total / n
