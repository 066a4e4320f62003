"""Checkpoints: when to evaluate, and what is measured (BCFW Appendix F).

At a checkpoint the solver is paused (and left as it is: measuring changes nothing in it);
for every iterate it keeps we compute the primal
``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (one full max-oracle pass, not counted in effective
passes), its dual value (dual methods), the duality gap ``primal - dual`` (for ``w = A alpha``
this is exactly the Frank-Wolfe gap of BCFW Section 4), the train loss and test error
(the mean task loss of the predictions: normalized Hamming, or 1 - IoU for boxes; for word
alignment the alignment error rate AER on each split, BCFW Appendix F's test error), the
split's test metric (higher is better; 1 - AER for alignment) and ``nnz(w)``.

The evaluation passes run in parts over the examples, one per evaluation thread
(:func:`evaluation_threads`, :mod:`ssvmbench.tasks.parts`); the solvers' own steps are
serial code, one thread, so that seconds per pass compare across solvers. BLAS (numpy's
``w @ w`` of the objective, a solver's products) runs on one thread in a run
(:func:`one_blas_thread`): OpenBLAS's worker threads busy-wait for a while after each call
and would take the cores of the evaluation's threads, or of another run of a sweep.
"""

import os

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from ssvmbench.common.errors import UserError
from ssvmbench.tasks.metrics import metrics_for, test_scores

MIN_EVERY = 1e-4   # eval.every at least this (effective passes): each checkpoint costs a pass


def schedule(passes, every, log_start=None, per_decade=4):
    """Effective passes at which to checkpoint, in order and generated one at a time (a run
    with ``solver.passes=1e9`` and a stopping rule needs no list of a billion points):
    log-spaced from ``log_start`` up to ``every`` (Figure 1d style), then every ``every``
    passes, and always at ``passes``. Bad values are refused at once (not when iterated)."""
    if not passes >= 0:
        raise UserError(f"solver.passes={passes} must be >= 0")
    if not every >= MIN_EVERY:
        raise UserError(f"eval.every={every} must be at least {MIN_EVERY:g} (a number of "
                        "effective passes; each checkpoint costs a full evaluation pass)")
    early = []
    if log_start is not None:
        if not 0 < log_start < every:
            raise UserError(f"eval.log_start={log_start} must be in (0, eval.every={every})")
        if not 1 <= per_decade <= 1000:
            raise UserError(f"eval.per_decade={per_decade} must be in [1, 1000]")
        count = int(np.ceil(np.log10(every / log_start) * per_decade))
        early = sorted({round(p, 10) for p in np.logspace(np.log10(log_start),
                                                          np.log10(every), count + 1)[:-1]})
    return _points(passes, every, early)


def _points(passes, every, early):
    last = 0.0
    for point in early:
        if 0 < point <= passes:
            last = point
            yield point
    k = 1
    while True:
        point = round(k * every, 10)
        if point > passes + 1e-9 * every:
            break
        if point > last:
            last = point
            yield point
        k += 1
    if last < passes:
        yield float(passes)


def evaluation_threads(parallel_jobs=1):
    """Threads of a checkpoint's evaluation: the cores this process may use (at most numba's
    ``NUMBA_NUM_THREADS``), shared among the ``parallel_jobs`` runs a sweep makes at once."""
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count() or 1)
    return max(1, min(numba.config.NUMBA_NUM_THREADS, cores) // max(1, parallel_jobs))


def one_blas_thread():
    """Context: the BLAS libraries loaded now (numpy's and scipy's OpenBLAS) on one thread.
    After a threaded call (``w @ w`` of the primal and the dual at every checkpoint, a long
    dot product OpenBLAS splits among its threads) its workers spin on the cores for a
    while, where the evaluation's threads that follow need them: on two cores a
    CoNLL-2000 checkpoint took 1.5-1.8x as long. Entered once the data are loaded and the
    kernels compiled (threadpoolctl limits the libraries loaded when it is entered); leaves
    the evaluation's threads alone."""
    return threadpool_limits(1, user_api="blas")


def measure(solver, train, test):
    """One row per iterate of the solver at its current state (a dict of columns). The
    iterates are evaluated together (:meth:`Task.batch <ssvmbench.tasks.base.Task.batch>`
    laid out once for both splits, :meth:`Task.evaluate_many
    <ssvmbench.tasks.base.Task.evaluate_many>`: one pass over each split for all of them on
    the built-in chains); ``best`` is the raw iterate's row when the raw iterate is the best
    one yet."""
    keys = ["iterate", "primal", "dual", "gap", "train_loss", "test_error", "nnz"]
    columns = {key: [] for key in keys + [m.column for m in metrics_for(test.dataset)]}
    iterates = solver.iterates()
    batch = train.batch([w for _, w, _ in iterates])
    trained = train.evaluate_many(batch, with_hinge=True)
    tested = test.evaluate_many(batch, with_hinge=False)
    raw = None
    for (name, w, dual), (hinge, train_loss, _), (_, test_error, predictions) in zip(
            iterates, trained, tested):
        primal = solver.objective.primal(w, hinge)
        if name == "best" and raw[1] < solver.best_primal:
            w, primal, train_loss, test_error, predictions = raw   # the best one yet
        raw = raw or (w, primal, train_loss, test_error, predictions)
        row = {"iterate": name, "primal": primal, "dual": dual, "gap": primal - dual,
               "train_loss": train_loss, "test_error": test_error,
               "nnz": int(np.count_nonzero(w)), **test_scores(test.dataset, predictions)}
        for key, value in row.items():
            columns[key].append(value)
    return columns
