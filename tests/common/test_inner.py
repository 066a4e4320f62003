"""Kernels compiled without entry wrappers (ssvmbench.common.inner) and the oracle calls that the
kernel API counts in compiled code (ssvmbench.tasks.kernels)."""

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.data.synthetic import random_chains
from ssvmbench.tasks import kernels
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.oracle import Oracle


@inner
def weighted_sum(values, weight):
    total = 0.0
    for v in values:
        total += weight * v
    return total


@nb.njit
def twice_weighted_sum(values, weight):
    return 2.0 * weighted_sum(values, weight)


def has_python_entry(dispatcher):
    """For each compiled signature of ``dispatcher`` (compiled now or loaded from the
    cache), whether its machine code has numba's CPython wrapper."""
    return [cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) != 0
            for cres in dispatcher.overloads.values()]


def test_an_inner_kernel_compiles_no_python_entry_and_still_answers_python():
    values = np.array([1.0, 2.5, -4.0])
    assert twice_weighted_sum(values, 3.0) == 2.0 * 3.0 * (1.0 + 2.5 - 4.0)
    assert has_python_entry(weighted_sum) == [False]          # compiled for its caller only
    assert weighted_sum(values, 3.0) == 3.0 * (1.0 + 2.5 - 4.0)   # from Python: its twin
    assert has_python_entry(weighted_sum.from_python()) == [True]
    assert weighted_sum.from_python().py_func.__qualname__ == "weighted_sum_from_python"


@nb.njit
def three_oracle_calls(task_data, dims, normalized, w, bufs, U, delta, y, R, E):
    T = kernels.scores(w, 1.0, dims, task_data, 0, U)
    kernels.decode(w, dims, task_data, normalized, 0, U, T, delta, y)
    kernels.decode(w, dims, task_data, normalized, 1, U, T, delta, y)
    return kernels.example_oracle(0, 1, 0.0, w, 1.0, dims, task_data, normalized, 0, U, T,
                                  bufs, y, R, E)


def test_compiled_oracle_calls_are_counted_in_the_task_data():
    """Each compiled call of ``decode`` and ``example_oracle`` adds one to ``calls[0]``
    (``check-solver`` compares that count with the solver's)."""
    task = ChainTask(random_chains(3, 3, 4, lengths=(2, 4), seed=2))
    U, delta, y, R, E, _ = kernels.scratch(task.dims, task.data, task.max_len)
    w = np.random.default_rng(0).normal(size=task.d)
    before = task.data.calls[0]
    three_oracle_calls(task.data, task.dims, task.normalized, w,
                       task.oracle_scratch(Oracle()), U, delta, y, R, E)
    assert task.data.calls[0] == before + 3
