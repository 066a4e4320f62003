"""The chain's kernels for the solvers that keep their own dual blocks: stored labelings
(SAP's active sets, :data:`~ssvmbench.tasks.base.ACTIVE_SET_KERNELS`) and marginals over the
token and label-bigram parts (online EG, :data:`~ssvmbench.tasks.base.MARGINAL_KERNELS`).
Signatures: :mod:`ssvmbench.tasks.kernels`; layouts: :mod:`ssvmbench.tasks.chain`.
"""

import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.tasks import chain
from ssvmbench.tasks.scratch import exp_buffers
from ssvmbench.tasks.smoothing import exp_oracle

# ------------------------------------------------------------- stored labelings (SAP)


@inner
def labeling_score(w, dims, data, i, U, T, y):
    """``<w, phi(x_i, y)>`` given the unary scores ``U`` of ``w``."""
    return chain.labeling_score(w, 1.0, dims, U, T, y)


@inner
def labeling_direction(data, i, T, y_plus, y_minus, R, E):
    """``(R, E) = phi(x_i, y_plus) - phi(x_i, y_minus)``."""
    chain.psi_residual(y_plus, y_minus, T, R, E)


@inner
def gram_scratch(dims, data, max_len):
    """The record of :func:`direction_gram`: token Gram rows ``K``, their tokens ``rows``
    and their count."""
    return (np.empty((max_len, max_len)), np.empty(max_len, dtype=np.int64),
            np.zeros(1, dtype=np.int64))


@inner
def direction_gram(dims, data, t0, T, R, E, dense, gram):
    """``||(R, E)||^2`` (as :func:`~ssvmbench.tasks.chain.direction_sqnorm`), keeping in
    ``gram`` the token Gram entries that :func:`add_direction_scores` reuses."""
    K, rows, m = gram
    m[0] = chain.residual_gram(dims, data, t0, T, R, dense, K, rows)
    return chain.gram_sqnorm(K, rows, m[0], T, R, E)


@inner
def add_direction_scores(U, coef, data, T, R, E, gram):
    """The unary scores ``U`` of ``w`` after ``w += coef * (R, E)``, from the Gram entries
    :func:`direction_gram` kept (no feature reads)."""
    K, rows, m = gram
    chain.add_gram_scores(U, coef, K, rows, m[0], T, R)


@inner
def example_features(data, i):
    """The feature rows of ``w`` that the directions of sequence ``i`` touch (repeats
    allowed): its tokens' features."""
    offsets, feat_ptr, feat_idx = data[0], data[2], data[3]
    return feat_idx[feat_ptr[offsets[i]]:feat_ptr[offsets[i + 1]]]


# ------------------------------------------------------------- marginals (online EG)


@inner
def part_scores(w, dims, data, normalized, i, U, T, G, g):
    """The loss-augmented scores of the parts of sequence ``i`` given its unary scores
    ``U``: ``G[t, l] = U[t, l] + L_t(l)`` (the Hamming unit when ``l`` is not the gold
    label) and ``g`` the transition and bias weights of ``w``."""
    F, L = dims
    t0 = data[0][i]
    gold = data[1][t0:t0 + T]
    unit = chain.loss_unit(normalized, T)
    for t in range(T):
        for l in range(L):
            G[t, l] = U[t, l] + (unit if l != gold[t] else 0.0)
    g[:] = w[F * L:]


@inner
def marginals_scratch(dims, data, max_len):
    """Work arrays of :func:`part_marginals` (the exp oracle's)."""
    return exp_buffers(max_len, dims[1])


@inner
def part_marginals(dims, data, normalized, i, T, V, v, work, rows, pairs, R, E, D, Ed):
    """Marginals of ``p(y) ~ exp(<(V, v), parts(y)>)`` over the labelings of sequence ``i``
    (potentials ``V`` per token and label, ``v`` laid out as the tail of ``w``): the exp
    oracle at ``mu = 1`` on the potentials, token marginals into ``R``, the bigram
    marginals summed over positions into ``E`` (dense, all ``L^2`` keys in order); the
    direction ``(D, Ed) = (R, E) - (rows, pairs)`` from the stored marginals; returns
    ``E_p L_i(y)``."""
    t0 = data[0][i]
    L = dims[1]
    exp_oracle(v, 1.0, (0, L), V, T, data[1][t0:t0 + T], 0.0, 1.0, work, R, E)
    for t in range(T):
        for l in range(L):
            D[t, l] = R[t, l] - rows[t, l]
    for q in range(len(pairs)):
        Ed[0][q] = q
        Ed[1][q] = E[1][q] - pairs[q]
    Ed[2][0] = len(pairs)
    return expected_loss(data, normalized, i, T, R)


@inner
def expected_loss(data, normalized, i, T, R):
    """``E_p L_i(y)`` from the token marginals ``R`` of ``p``."""
    t0 = data[0][i]
    unit = chain.loss_unit(normalized, T)
    s = 0.0
    for t in range(T):
        s += unit * (1.0 - R[t, data[1][t0 + t]])
    return s


@inner
def gold_marginals(data, i, T, rows, pairs):
    """The marginals of the point mass on ``y_i`` as stored by :func:`store_marginals`."""
    t0 = data[0][i]
    gold = data[1][t0:t0 + T]
    L = rows.shape[1]
    rows[:T] = 0.0
    pairs[:] = 0.0
    for t in range(T):
        rows[t, gold[t]] = 1.0
    for t in range(1, T):
        pairs[gold[t - 1] * L + gold[t]] += 1.0


@inner
def store_marginals(data, T, R, E, rows, pairs):
    """Keep the marginals ``(R, E)`` of :func:`part_marginals`: ``rows`` the token
    marginals (``T x L``), ``pairs`` the bigram marginals (``L^2``)."""
    rows[:T] = R[:T]
    pairs[:] = E[1][:len(pairs)]
