"""A hinge oracle called as the solvers call it, through the generic kernels
(:mod:`ssvmbench.tasks.kernels`), for tasks whose outputs are one label per row."""

import numpy as np

from ssvmbench.tasks import chain, kernels


def oracle_call(task, oracle, w, i):
    """``(value, dense gradient, labeling)`` of ``oracle`` on example ``i`` of ``task`` at
    ``w``."""
    U, _, y, R, E = chain.buffers(task.max_len, 1)
    T = kernels.scores(w, 1.0, task.dims, task.data, i, U)
    value = kernels.example_oracle(oracle.kind, oracle.K, oracle.mu, w, 1.0, task.dims,
                                   task.data, False, i, U, T,
                                   oracle.buffers(task.max_len, 1), y, R, E)
    grad = np.zeros(task.d)
    kernels.add_direction(grad, 1.0, task.dims, task.data, task.data.offsets[i], T, R, E,
                          np.empty((0, 0)), np.empty(0))
    return value, grad, y[:T].copy()
