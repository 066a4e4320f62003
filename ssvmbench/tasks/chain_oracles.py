"""The chain's hinge oracles, max, top-K and exp (Pillutla et al., NeurIPS 2018, Section 2,
Definition 1), as chosen by an :class:`~ssvmbench.tasks.oracle.Oracle` record.

For example ``i`` with gold labeling ``y_i``, :func:`hinge_oracle` returns the (smoothed)
structural hinge ``f_i(w) = h(s) - <w, phi(x_i, y_i)>``, where ``s(y) = L(y_i, y) +
<w, phi(x_i, y)>`` are the loss-augmented scores (BCFW eq. 2) and ``h`` is the max (max
oracle), the ``l2^2``-smoothed max over the K best (top-K oracle) or ``mu log sum exp(. /
mu)`` (exp oracle), and writes its gradient ``sum_y p(y) phi(x_i, y) - phi(x_i, y_i)`` as
a factored direction ``(R, E)`` (see :mod:`ssvmbench.tasks.chain`). One call is one oracle
call (BCFW Appendix F, Casimir Section 4); the caller counts.
"""

import numba as nb

from ssvmbench.common.inner import inner
from ssvmbench.tasks import smoothing, transitions
from ssvmbench.tasks.chain import labeling_score, loss_unit, psi_residual, viterbi
from ssvmbench.tasks.oracle import TOPK_CASIMIR_TIES


@nb.njit(cache=True, inline="always")
def hinge_oracle(kind, K, mu, w, ws, dims, U, T, gold, unit, bufs, y, R, E):
    """Value of the (smoothed) hinge ``f_i`` at the weights ``ws * w`` (``U``: their unary
    scores; ``unit``: the loss of one wrong token, :func:`~ssvmbench.tasks.chain.loss_unit`)
    and its gradient with respect to those weights, written to ``(R, E)``.
    ``kind``: 0 max, 1 top-K, 2 exp, 3 top-K with the Casimir authors' tie order
    (:attr:`Oracle.kind <ssvmbench.tasks.oracle.Oracle.kind>`); ``bufs`` from
    :meth:`Oracle.buffers <ssvmbench.tasks.oracle.Oracle.buffers>` (every oracle's parts: the
    oracle is chosen by ``kind`` when called), or a chain task's
    (:meth:`~ssvmbench.tasks.chain_task.ChainTask.oracle_scratch`: the other oracles' parts
    None, so that a solver's kernels compile that oracle only); ``y`` a labeling scratch
    (after the max oracle it holds the loss-augmented argmax). Inlined: a compiled level of
    its own costs its callers a second of compiling."""
    return _hinge(kind, K, mu, w, ws, dims, U, T, gold, unit, bufs[0], bufs[1], bufs[2], y, R,
                  E)


@inner
def _hinge(kind, K, mu, w, ws, dims, U, T, gold, unit, delta, topk_bufs, exp_bufs, y, R, E):
    """:func:`hinge_oracle` with its buffers apart (``delta`` the max oracle's): an oracle
    whose part is None (a type, known when compiled) is left out of the compiled code."""
    gold_score = labeling_score(w, ws, dims, U, T, gold)
    if delta is not None:
        if kind == 0:
            return _max_hinge(w, ws, dims, U, T, gold, unit, delta, y, R, E) - gold_score
    if topk_bufs is not None:
        if kind == 1 or kind == TOPK_CASIMIR_TIES:
            top = smoothing.topk_oracle(w, ws, dims, U, T, gold, unit, K, mu,
                                        kind == TOPK_CASIMIR_TIES, topk_bufs, R, E)
            _minus_gold(dims, T, gold, R, E)
            return top - gold_score
    if exp_bufs is not None:
        if kind == 2:
            top = smoothing.exp_oracle(w, ws, dims, U, T, gold, unit, mu, exp_bufs, R, E)
            _minus_gold(dims, T, gold, R, E)
            return top - gold_score
    raise ValueError("the oracle's buffers are not in bufs (Task.oracle_scratch)")


@inner
def _max_hinge(w, ws, dims, U, T, gold, unit, delta, y, R, E):
    """The max oracle: the loss-augmented Viterbi value; ``(R, E) = phi(y*) - phi(y_i)``."""
    top = viterbi(w, ws, dims, U, T, gold, unit, delta, y)
    psi_residual(y, gold, T, R, E)
    return top


@inner
def _minus_gold(dims, T, gold, R, E):
    """``(R, E) -= phi(y_i)`` after a smoothed oracle wrote ``sum_y p(y) phi(y)``."""
    keys, vals, size, wk, wv = E
    for t in range(T):
        R[t, gold[t]] -= 1.0
    n_gold = transitions.bigram_counts(gold, T, dims[1], wk, wv)
    size[0] = transitions.add_sorted(keys, vals, size[0], wk, wv, n_gold, -1.0)


@inner
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """:func:`hinge_oracle` for sequence ``i`` of ``data`` (its gold labels and task loss),
    in the signature every task shares (:mod:`ssvmbench.tasks.kernels`)."""
    t0 = data[0][i]
    return hinge_oracle(kind, K, mu, w, ws, dims, U, T, data[1][t0:t0 + T],
                        loss_unit(normalized, T), bufs, y, R, E)
