"""The second process of a cold start (:func:`ssvmbench.compiled.coldstart.checkpoint_compiler`): it
compiles a checkpoint's kernels into numba's cache while the run's process compiles the
solver's steps, so that the warm-up's checkpoint loads them."""

import contextlib
import gc
import pickle
import sys

import numpy as np

from ssvmbench.compiled import keyed_cache
from ssvmbench.tasks.metrics import test_scores


def main():
    """``(settings, train, test, lam, l1)`` from stdin; the kernels in the cache the run
    uses (:func:`ssvmbench.compiled.keyed_cache.use`); a checkpoint's calls: first the iterates of
    the solver as built, before any step, whose kernels the solver's steps may call too
    (BCFW's averaged iterate and its steps both update ``w`` by ``add_direction``: compiled
    here, the run's process loads it), then the tasks' evaluation on a zero weight vector
    (of the solvers' type) and the test metrics."""
    settings, train, test, lam, l1 = pickle.load(sys.stdin.buffer)
    keyed_cache.use()
    gc.freeze()     # what it compiles, not its libraries, for the collector to walk
    with contextlib.suppress(ZeroDivisionError):   # an average of no step, once compiled
        settings.solver_on(train, lam, l1).iterates()
    train.evaluate(np.zeros(train.d), with_hinge=True)
    _, _, predictions = test.evaluate(np.zeros(test.d), with_hinge=False)
    test_scores(test.dataset, predictions)
