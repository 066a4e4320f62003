"""Shared by the profile_*_step.py scripts: a solver prepared from overrides, each stage of
its step timed cumulatively, and a real pass for comparison."""

import statistics
import time

from ssvmbench.api import config
from ssvmbench.run.runner import prepare
from ssvmbench.run.settings import read


def prepared(overrides):
    """``(solver, train task)`` of the configuration ``overrides``."""
    solver, train, _, _, _ = prepare(read(config(overrides)))
    return solver, train


def print_stage_times(names, first_stages, arguments, labels=None):
    """For ``k = 1, 2, ...`` the median seconds of ``first_stages(k, *arguments())`` (fresh
    arguments each call; the first call compiles and is not counted), as milliseconds,
    printed beside ``labels`` (default: ``names``); returns them (seconds)."""
    medians = []
    for stages, name in zip(range(1, len(names) + 1), labels or names):
        times = []
        for _ in range(6):
            args = arguments()
            start = time.perf_counter()
            first_stages(stages, *args)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times[1:]))
        print(f"{name:>35}: {medians[-1] * 1e3:8.1f} ms")
    return medians


def print_pass_time(name, solver, train, passes):
    """Milliseconds per pass of ``passes`` more passes of ``solver`` (its own sampling),
    printed; returns the seconds per pass."""
    start = time.perf_counter()
    solver.run_until(solver.oracle_calls + passes * train.n)
    seconds = (time.perf_counter() - start) / passes
    print(f"{name:>35}: {seconds * 1e3:8.1f} ms")
    return seconds
