"""Hashed chain task: the chain of :mod:`ssvmbench.tasks.chain` with every joint feature in
one of ``D`` shared buckets, as the Casimir authors' NER model (Pillutla et al., NeurIPS 2018,
Section 4; krishnap25/casimir ``features.pyx``, docs/casimir_authors_code.md sections 2 and 10).

Joint feature map (:class:`~ssvmbench.data.sequences.HashedChainDataset`)::

    phi(x, y) = sum_t sum_p x_tp e_{h(p, y_t)} + sum_{t>0} e_{g(y_{t-1}, y_t)} + e_{g(START, y_0)}

with ``h(p, l) = (feat_idx[p] + feat_stride[p] l) mod D`` and ``g`` the table
``edge_buckets``; ``w`` has ``d = D`` entries and no last-label bias. The chain recursions
(Viterbi, top-K, forward-backward) need only the token scores ``U[t, l]`` and the ``L x L``
transition and first-label scores, so they are those of the chain task run on a small *edge
vector* in the chain layout with no token features (``dims = (0, L)``), gathered from ``w``
per example (:func:`edge_weights`). Directions keep the chain's factored form ``(R, E)``
(token residuals, sparse tag-pair part; :mod:`ssvmbench.tasks.chain`); only the kernels that
read or write ``w`` map it to buckets. The dual state of BCFW lives in label space and is the
chain's (:func:`~ssvmbench.tasks.chain.marginals_residual` and the rest).

Kernels take ``data`` = :class:`HashedChainData` and ``dims = (D, L)``; signatures are
those of the chain kernels they mirror (:mod:`ssvmbench.tasks.kernels`).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.data.sequences import HashedChainDataset
from ssvmbench.data.synthetic import random_hashed_chains
from ssvmbench.tasks import chain
from ssvmbench.tasks.chain import (average_residual, buffers, evaluation_buffers, hamming,
                                   loss_unit, max_length, mistakes, score_sequence, viterbi)
from ssvmbench.tasks.chain_oracles import hinge_oracle
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.parts import in_parts, means


class HashedChainData(NamedTuple):
    """The arrays of a :class:`~ssvmbench.data.sequences.HashedChainDataset`, first five in
    the order of :class:`~ssvmbench.tasks.chain.ChainData` (so label-space chain kernels read
    them alike), and the oracle ``calls`` made on them."""

    offsets: np.ndarray
    labels: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    feat_val: np.ndarray
    feat_stride: np.ndarray
    edge_buckets: np.ndarray
    calls: np.ndarray


class HashedChainTask(ChainTask):
    """One split of a hashed chain dataset; attributes as
    :class:`~ssvmbench.tasks.chain_task.ChainTask`, with ``d = D`` buckets."""

    kind = "hashed_chain"
    dataset_type = HashedChainDataset
    data_type = HashedChainData

    def __init__(self, ds: HashedChainDataset, loss="normalized_hamming"):
        super().__init__(ds, loss)
        self.data = HashedChainData(ds.offsets, ds.labels, ds.feat_ptr, ds.feat_idx,
                                    ds.feat_val, ds.feat_stride, ds.edge_buckets,
                                    np.zeros(1, dtype=np.int64))
        self.d = ds.n_features
        self.dense_entries = np.unique(ds.edge_buckets)      # the tag pairs' buckets

    def evaluate(self, w, with_hinge=True):
        predictions = np.empty(self.n_rows, dtype=np.int32)
        hinges, errors = np.empty(self.n), np.empty(self.n)
        in_parts(evaluate, self.data.offsets, w, self.dims, self.data, self.normalized, with_hinge,
                 self.max_len, predictions, hinges, errors)
        return (*means(hinges, errors, with_hinge), predictions)

    @classmethod
    def tiny(cls):
        return cls(random_hashed_chains(12, 3, 5, 7, lengths=(1, 4), seed=0), cls.LOSSES[0])


@nb.njit(cache=True, inline="always")
def _bucket(data, p, l, D):
    """Bucket of feature entry ``p`` with label ``l``."""
    b = data.feat_idx[p] + data.feat_stride[p] * l
    return b - D if b >= D else b


@nb.njit(cache=True, inline="always")
def _edge(data, L, a, b):
    """Bucket of the tag pair ``a -> b`` (``a = -1``: the start of the sentence)."""
    return data.edge_buckets[(a + 1) * L + b]


@inner
def edge_weights(w, dims, data):
    """The tag-pair weights of ``w`` in the chain layout of ``dims = (0, L)``: transitions
    ``a -> b`` at ``a L + b``, the first-label bias at ``L^2 + b``, a zero last-label bias."""
    L = dims[1]
    ev = np.zeros(L * L + 2 * L)
    for a in range(L):
        for b in range(L):
            ev[a * L + b] = w[_edge(data, L, a, b)]
    for b in range(L):
        ev[L * L + b] = w[_edge(data, L, -1, b)]
    return ev


@inner
def unary_scores(w, ws, dims, data, i, out):
    """``out[t, l] = ws * sum_p x_tp w[h(p, l)]`` for the tokens of sequence ``i``; returns
    ``T``. The buckets of a feature entry for labels ``0, 1, ...`` are stepped through by
    adding its stride (:func:`_bucket` without a multiplication)."""
    D, L = dims
    t0 = data.offsets[i]
    T = data.offsets[i + 1] - t0
    for t in range(T):
        for l in range(L):
            out[t, l] = 0.0
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            v = ws * data.feat_val[p]
            q, stride = data.feat_idx[p], data.feat_stride[p]
            for l in range(L):
                out[t, l] += v * w[q]
                q += stride
                q = q - D if q >= D else q
    return T


@inner
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """:func:`~ssvmbench.tasks.chain_oracles.hinge_oracle` of sequence ``i`` on its token scores
    ``U`` and the tag-pair weights of ``w``."""
    t0 = data.offsets[i]
    chain_dims = (0, dims[1])
    return hinge_oracle(kind, K, mu, edge_weights(w, dims, data), ws, chain_dims, U, T,
                        data.labels[t0:t0 + T], loss_unit(normalized, T), bufs, y, R, E)


@inner
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Loss-augmented Viterbi of sequence ``i`` (BCFW eq. 2); returns its task loss."""
    gold = data.labels[data.offsets[i]:data.offsets[i] + T]
    chain_dims = (0, dims[1])
    viterbi(edge_weights(w, dims, data), 1.0, chain_dims, U, T, gold,
            loss_unit(normalized, T), delta, y)
    return hamming(gold, y, T) if normalized else float(mistakes(gold, y, T))


@inner
def _moved_labels(R, t, labels):
    """The labels ``l`` with ``R[t, l] != 0``, into ``labels``; returns their number."""
    m = 0
    for l in range(R.shape[1]):
        if R[t, l] != 0.0:
            labels[m] = l
            m += 1
    return m


@inner
def _scatter(x, coef, dims, data, t0, T, R, E):
    """``x += coef * direction (R, E)`` in bucket space (only the labels a token's residual
    row moves)."""
    D, L = dims
    labels = np.empty(L, dtype=np.int64)
    for t in range(T):
        m = _moved_labels(R, t, labels)
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            v = coef * data.feat_val[p]
            for j in range(m):
                x[_bucket(data, p, labels[j], D)] += v * R[t, labels[j]]
    for b in range(L):
        x[_edge(data, L, -1, b)] += coef * R[0, b]
    keys, vals = E[0], E[1]
    for j in range(E[2][0]):
        x[data.edge_buckets[L + keys[j]]] += coef * vals[j]


@inner
def direction_sqnorm(dims, data, t0, T, R, E, x_dense):
    """Squared norm of the direction ``(R, E)``: scattered into the all-zero ``(D,)`` scratch
    ``x_dense``, then read back and cleared bucket by bucket (colliding entries add up; a
    bucket read twice gives 0 the second time)."""
    D, L = dims
    _scatter(x_dense, 1.0, dims, data, t0, T, R, E)
    labels = np.empty(L, dtype=np.int64)
    s = 0.0
    for t in range(T):
        m = _moved_labels(R, t, labels)
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            for j in range(m):
                q = _bucket(data, p, labels[j], D)
                s += x_dense[q] * x_dense[q]
                x_dense[q] = 0.0
    for b in range(L):
        q = _edge(data, L, -1, b)
        s += x_dense[q] * x_dense[q]
        x_dense[q] = 0.0
    for j in range(E[2][0]):
        q = data.edge_buckets[L + E[0][j]]
        s += x_dense[q] * x_dense[q]
        x_dense[q] = 0.0
    return s


@inner
def direction_dot(w, dims, data, U, T, R, E):
    """``<w, direction>`` given the token scores ``U`` of ``w``."""
    L = dims[1]
    s = 0.0
    for t in range(T):
        for l in range(L):
            s += R[t, l] * U[t, l]
    for b in range(L):
        s += R[0, b] * w[_edge(data, L, -1, b)]
    keys, vals = E[0], E[1]
    for j in range(E[2][0]):
        s += vals[j] * w[data.edge_buckets[L + keys[j]]]
    return s


@inner
def add_direction(w, coef, dims, data, t0, T, R, E, U, C):
    """``w += coef * direction``, each change also recorded in the lazy averages ``U`` with
    weights ``C`` (:mod:`ssvmbench.solvers.averaging`; empty ``C`` = no averages) in the same
    sweep: a bucket is found once for all the arrays, and each array receives the products
    and sums of its own :func:`_scatter` by ``coef * C[k]``, in its order (the same bits)."""
    if len(C) == 0:
        _scatter(w, coef, dims, data, t0, T, R, E)
        return
    D, L = dims
    labels = np.empty(L, dtype=np.int64)
    for t in range(T):
        m = _moved_labels(R, t, labels)
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            x = data.feat_val[p]
            for j in range(m):
                q = _bucket(data, p, labels[j], D)
                r = R[t, labels[j]]
                w[q] += coef * x * r
                for k in range(len(C)):
                    U[k, q] += coef * C[k] * x * r
    for b in range(L):
        _put(w, U, C, _edge(data, L, -1, b), coef, R[0, b])
    keys, vals = E[0], E[1]
    for j in range(E[2][0]):
        _put(w, U, C, data.edge_buckets[L + keys[j]], coef, vals[j])


@nb.njit(cache=True, inline="always")
def _put(w, U, C, q, coef, x):
    """``w[q] += coef * x`` and the lazy-average records ``U[k, q] += coef * C[k] * x``."""
    w[q] += coef * x
    for k in range(len(C)):
        U[k, q] += coef * C[k] * x


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar`` (BCFW Section 3) for the averaged factored dual state
    ``alpha_bar = (c alpha - U) / s`` (as :func:`ssvmbench.tasks.chain.weights_from_average`,
    mapped to buckets)."""
    offsets, labels = data.offsets, data.labels
    n = len(offsets) - 1
    L = dims[1]
    _, _, _, R, E = buffers(max_length(offsets), L)
    E[2][0] = 0
    pairs = np.zeros(L * L)               # gold tag-pair counts minus their averaged marginals
    w[:] = 0.0
    for i in range(n):
        t0, T = average_residual(alpha, U, c, s, data, i, R, pairs)
        _scatter(w, 1.0 / (lam * n), dims, data, t0, T, R, E)
    n_mu = len(labels) * L
    for q in range(L * L):
        p_bar = (c * alpha[n_mu + q] - U[n_mu + q]) / s
        w[data.edge_buckets[L + q]] += (pairs[q] - p_bar) / (lam * n)


@inner
def _gold_minus(dims, data, i, T, y):
    """``(t0, R, E)``: the direction ``phi(x_i, y_i) - phi(x_i, y)`` in label space (the
    chain's :func:`~ssvmbench.tasks.chain.psi_residual`)."""
    t0 = data.offsets[i]
    _, _, _, R, E = buffers(T, dims[1])
    chain.psi_residual(data.labels[t0:t0 + T], y, T, R, E)
    return t0, R, E


@inner
def _dot(w, dims, data, t0, T, R, E):
    """``<w, direction (R, E)>`` read from the buckets (as :func:`_scatter` writes them)."""
    D, L = dims
    labels = np.empty(L, dtype=np.int64)
    s = 0.0
    for t in range(T):
        m = _moved_labels(R, t, labels)
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            for j in range(m):
                s += data.feat_val[p] * R[t, labels[j]] * w[_bucket(data, p, labels[j], D)]
    for b in range(L):
        s += R[0, b] * w[_edge(data, L, -1, b)]
    for j in range(E[2][0]):
        s += E[1][j] * w[data.edge_buckets[L + E[0][j]]]
    return s


@inner
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L_i(y) - <w, phi(x_i, y_i) - phi(x_i, y)>`` for the labeling ``y[:T]`` of sequence
    ``i`` (the cutting plane's stored labelings; the test kit's brute force)."""
    t0, R, E = _gold_minus(dims, data, i, T, y)
    gold = data.labels[t0:t0 + T]
    loss = hamming(gold, y, T) if normalized else float(mistakes(gold, y, T))
    return loss - _dot(w, dims, data, t0, T, R, E)


@inner
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(x_i, y) - phi(x_i, y_i))`` for the labeling ``y[:T]``."""
    t0, R, E = _gold_minus(dims, data, i, T, y)
    _scatter(g, -coef, dims, data, t0, T, R, E)


@nb.njit(cache=True, nogil=True)
def evaluate(w, dims, data, normalized, with_hinge, max_len, predictions, hinges, errors,
             first, last):
    """The examples ``first`` to ``last - 1`` of one pass over a split at fixed ``w``, as
    :func:`ssvmbench.tasks.chain.evaluate` (a part per evaluation thread), one iterate a
    pass: a hashed token's scores are scattered loads, which iterates side by side do not
    share (NER, two iterates: 145 instead of 102 ms)."""
    chain_dims = (0, dims[1])
    ev = edge_weights(w, dims, data)
    U, delta, delta2, y, tables = evaluation_buffers(ev.reshape((1, len(ev))), chain_dims,
                                                     max_len)
    for i in range(first, last):
        T = unary_scores(w, 1.0, dims, data, i, U)
        errors[i], hinges[i] = score_sequence(ev, tables[0], chain_dims, data, normalized,
                                              with_hinge, i, U, T, delta, delta2, y,
                                              predictions)


HashedChainTask.kernels = {     # the label-space kernels are the chain's
    "scratch": chain.scratch, "scores": unary_scores, "example_oracle": example_oracle,
    "decode": decode, "add_direction": add_direction,
    "subtract_direction": chain.subtract_direction, "direction_sqnorm": direction_sqnorm,
    "direction_dot": direction_dot, "init_marginals": chain.init_marginals,
    "dual_residual": chain.marginals_residual, "move_marginals": chain.move_marginals,
    "weights_from_average": weights_from_average,
    "labeling_hinge": labeling_hinge, "add_labeling": add_labeling,
}
