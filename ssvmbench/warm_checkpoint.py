"""The second process of a cold start (:func:`ssvmbench.coldstart.checkpoint_compiler`): it
compiles a checkpoint's kernels into numba's cache while the run's process compiles the
solver's steps, so that the warm-up's checkpoint loads them."""

import pickle
import sys

import numpy as np

from ssvmbench import keyed_cache
from ssvmbench.metrics import test_scores
from ssvmbench.runner import build_solver


def main():
    """``(settings, train, test, lam, l1)`` from stdin; the kernels in the cache the run
    uses (:func:`ssvmbench.keyed_cache.use`); a checkpoint's calls: the tasks' evaluation
    on a zero weight vector (of the solvers' type) and the test metrics first (the
    longest compile), then the iterates of the solver as built, before any step (an
    average of no step may divide by zero: by then its kernels are compiled)."""
    settings, train, test, lam, l1 = pickle.load(sys.stdin.buffer)
    keyed_cache.use()
    train.evaluate(np.zeros(train.d), with_hinge=True)
    _, _, predictions = test.evaluate(np.zeros(test.d), with_hinge=False)
    test_scores(test.dataset, predictions)
    build_solver(settings, train, lam, l1).iterates()
