"""A split's evaluation in parts on the evaluation threads (:mod:`ssvmbench.tasks.parts`):
one contiguous part per thread, the first on the caller's, balanced by rows; means summed
in order. (The same numbers on one thread and on two, for every built-in task:
tests/run/test_monitor.py.)"""

import threading

import numba
import numpy as np
import pytest

from ssvmbench.tasks.parts import in_parts, mean_in_order


def parts_run(offsets, threads):
    """The parts ``(first, last, thread)`` that :func:`in_parts` runs, and what they wrote."""
    seen = []

    def kernel(out, first, last):
        seen.append((first, last, threading.get_ident()))
        out[first:last] = np.arange(first, last)

    out = np.full(len(offsets) - 1, -1)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(threads)
        in_parts(kernel, np.asarray(offsets), out)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(out, np.arange(len(out)))
    return sorted(seen)


def test_in_parts_runs_one_contiguous_part_per_evaluation_thread():
    seen = parts_run(np.arange(12), 2)
    assert [part[:2] for part in seen] == [(0, 6), (6, 11)]
    assert len({part[2] for part in seen}) == 2
    assert seen[0][2] == threading.get_ident()          # the first part on this thread
    assert [part[:2] for part in parts_run(np.arange(12), 1)] == [(0, 11)]


def test_in_parts_balances_the_rows_not_the_examples():
    """Five short examples then one as long as all of them: two parts, one each side."""
    seen = parts_run([0, 1, 2, 3, 4, 5, 10], 2)
    assert [part[:2] for part in seen] == [(0, 5), (5, 6)]


def test_in_parts_raises_what_a_part_raised():
    def kernel(first, last):
        if first > 0:
            raise MemoryError(f"part {first}-{last}")

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        with pytest.raises(MemoryError, match="part 2-4"):
            in_parts(kernel, np.arange(5))
    finally:
        numba.set_num_threads(before)


def test_mean_in_order_is_the_serial_sum_to_the_bit():
    rng = np.random.default_rng(0)
    values = rng.normal(size=1000) * 10.0 ** rng.integers(-8, 9, size=1000)
    total = 0.0
    for value in values:
        total += value
    assert mean_in_order(values) == total / len(values)
    assert np.sum(values) != total      # (pairwise summation: the values tell them apart)
