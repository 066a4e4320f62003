"""The one seam between solvers and tasks: kernels that solvers call, dispatched at compile
time on the type of the task's ``data``, so that a solver never depends on a task's
internals.

Each name below runs the kernel of the same signature of the task whose data it is given:
the chain (:mod:`ssvmbench.tasks.chain`, :mod:`ssvmbench.tasks.oracles`), the hashed chain
(:mod:`ssvmbench.tasks.hashed_chain`), boxes
(:mod:`ssvmbench.tasks.boxes`) or matchings (:mod:`ssvmbench.tasks.matching`), chosen by
numba's ``overload`` when the calling solver kernel is compiled, so one solver kernel serves
every task and stays cacheable. A task's arrays: ``U`` its score rows (chains: tokens x labels;
boxes: candidates x 1; matchings: edges x 1), a direction ``(R, E)`` in ``w``-space, the
factored BCFW dual state ``(mu, Psum, blocks)``. Matchings share the edge-wise kernels of
boxes (an edge is a score row with one label, like a candidate box), the hashed chain the
label-space kernels of the chain. ``labeling_hinge`` and ``add_labeling`` score and add one
stored labeling (the cutting plane's constraint cache). ``example_oracle`` and ``decode`` are
the oracle calls: each adds one to ``data.calls[0]`` (``ssvmbench check-solver`` compares that
count with the calls a solver reports).

The API a compiled solver calls (``task`` a :class:`~ssvmbench.tasks.base.Task`; scratch from
``chain.buffers(task.max_len, task.n_labels)`` = ``(U, delta, y, R, E)``, and the
oracle's ``bufs`` from :meth:`~ssvmbench.tasks.oracles.Oracle.buffers`):

``scores(w, ws, dims, data, i, U) -> T``
    score rows of example ``i`` at the weights ``ws * w`` into ``U``; returns its row count.
``example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E) -> f_i``
    the (smoothed) hinge of example ``i`` (``kind`` 0 max, 1 top-K, 2 exp) given its scores
    ``U``; its gradient with respect to ``ws * w`` is written to the direction ``(R, E)``.
``decode(w, dims, data, normalized, i, U, T, delta, y) -> loss``
    loss-augmented decoding (the max oracle of BCFW eq. 2) into ``y``; returns its task loss.
``add_direction(w, coef, dims, data, t0, T, R, E, avg_U, C)``
    ``w += coef * (R, E)`` for the example starting at row ``t0``, recorded in the lazy
    averages ``avg_U`` with weights ``C`` (empty: none).
``direction_sqnorm(dims, data, t0, T, R, E, x_dense) -> ||(R, E)||^2``
    ``x_dense``: an all-zero scratch of ``dims[0]`` entries, left all-zero.
``direction_dot(w, dims, data, U, T, R, E) -> <w, (R, E)>`` given the scores ``U`` of ``w``.
``init_marginals(data, mu, Psum) -> blocks``, ``dual_residual(mu, blocks, data, i, t0, y, T,
R, E)``, ``move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, avg_U, C) -> blocks``
    the factored BCFW dual state ``alpha`` at ``e_{y_i}``; the direction ``phi(y) -
    phi(alpha_i)``; the step ``alpha_i <- (1 - gamma) alpha_i + gamma e_y``.
``weights_from_average(alpha, avg_U, c, s, dims, data, lam, w)``
    ``w = A alpha_bar`` of an averaged dual state.
``labeling_hinge(w, dims, data, normalized, i, T, y)``, ``add_labeling(g, coef, dims, data,
i, T, y)``
    one stored labeling's hinge term; ``g += coef * (phi(y) - phi(y_i))``.
``mean_hinge_and_gradient(w, dims, data, normalized, kind, K, mu, bufs, max_len, g)``
    a full pass: the mean hinge, and its gradient into ``g`` (n oracle calls).
Composite steps the solvers expose: :func:`ssvmbench.solvers.bcfw.block_gap` and
:func:`ssvmbench.solvers.bcfw.block_step` (BCFW Algorithm 4 on one block).
"""

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

from ssvmbench.tasks import boxes, chain, hashed_chain, matching, oracles

# the named tuple of each task's data
TASK_OF_DATA = {chain.ChainData: "chain", hashed_chain.HashedChainData: "hashed_chain",
                boxes.BoxData: "boxes", matching.MatchingData: "matching"}


def _unknown(name):
    return TypeError(f"no task kernels for data of type {name}: add its row to "
                     "ssvmbench.tasks.kernels.TASK_OF_DATA")


def _task_of(arg_types):
    """The task of a call from the numba types of its arguments: the row of its named-tuple
    data in :data:`TASK_OF_DATA`; an unknown named tuple, or none, is refused."""
    for t in arg_types:
        if isinstance(t, types.BaseNamedTuple):
            if t.instance_class not in TASK_OF_DATA:
                raise _unknown(t.instance_class.__name__)
            return TASK_OF_DATA[t.instance_class]
    raise _unknown("tuple" if any(isinstance(t, types.BaseTuple) for t in arg_types)
                   else "(none)")


def _dispatch(counted=None, **kernels):
    """A function (callable from Python and from compiled code) that runs
    ``kernels[task]`` for the task of its arguments' data; a task without that kernel is
    refused when the caller is compiled. ``counted``: the position of the data argument of
    an oracle call, whose ``calls[0]`` it increments."""

    def generic(*args):
        tasks = [TASK_OF_DATA[type(a)] for a in args if type(a) in TASK_OF_DATA]
        if not tasks:
            raise _unknown(", ".join(type(a).__name__ for a in args if isinstance(a, tuple))
                           or "(none)")
        if counted is not None:
            args[counted].calls[0] += 1
        return kernels[tasks[0]](*args)

    @overload(generic)
    def _choose(*args):
        task = _task_of(args)
        if task not in kernels:
            raise TypeError(f"{generic.__name__}: no kernel for the {task} task")
        kernel = kernels[task]
        if counted is None:
            return lambda *args: kernel(*args)

        def count_and_run(*args):
            args[counted].calls[0] += 1
            return kernel(*args)
        return count_and_run

    generic.__name__ = kernels["chain"].__name__
    generic.__doc__ = kernels["chain"].__doc__
    return generic


scores = _dispatch(chain=chain.unary_scores, hashed_chain=hashed_chain.unary_scores,
                   boxes=boxes.scores, matching=boxes.scores)
example_oracle = _dispatch(counted=6, chain=oracles.example_oracle,
                           hashed_chain=hashed_chain.example_oracle,
                           boxes=boxes.example_oracle, matching=matching.example_oracle)
decode = _dispatch(counted=2, chain=chain.decode, hashed_chain=hashed_chain.decode,
                   boxes=boxes.decode, matching=matching.decode)
add_direction = _dispatch(chain=chain.add_direction, hashed_chain=hashed_chain.add_direction,
                          boxes=boxes.add_direction, matching=boxes.add_direction)
direction_sqnorm = _dispatch(chain=chain.direction_sqnorm,
                             hashed_chain=hashed_chain.direction_sqnorm,
                             boxes=boxes.direction_sqnorm, matching=boxes.direction_sqnorm)
direction_dot = _dispatch(chain=chain.direction_dot, hashed_chain=hashed_chain.direction_dot,
                          boxes=boxes.direction_dot, matching=boxes.direction_dot)
dual_residual = _dispatch(chain=chain.marginals_residual, hashed_chain=chain.marginals_residual,
                          boxes=boxes.dual_residual, matching=matching.dual_residual)
init_marginals = _dispatch(chain=chain.init_marginals, hashed_chain=chain.init_marginals,
                           boxes=boxes.init_marginals, matching=matching.init_marginals)
move_marginals = _dispatch(chain=chain.move_marginals, hashed_chain=chain.move_marginals,
                           boxes=boxes.move_marginals, matching=boxes.move_marginals)
weights_from_average = _dispatch(chain=chain.weights_from_average,
                                 hashed_chain=hashed_chain.weights_from_average,
                                 boxes=boxes.weights_from_average,
                                 matching=matching.weights_from_average)
labeling_hinge = _dispatch(chain=chain.labeling_hinge, boxes=boxes.labeling_hinge,
                           matching=matching.labeling_hinge)
add_labeling = _dispatch(chain=chain.add_labeling, boxes=boxes.add_labeling,
                         matching=matching.add_labeling)


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
