"""Work arrays of the built-in hinge oracles, shaped by the longest example and the number of
labels: Viterbi's max-sums and transition table (:func:`viterbi_scratch`), the top-K tables
(:func:`topk_buffers`) and the exp oracle's forward sums (:func:`exp_buffers`). Below the
oracle record (:mod:`ssvmbench.tasks.oracle`) and the kernels that fill them
(:mod:`ssvmbench.tasks.chain`, :mod:`ssvmbench.tasks.smoothing`)."""

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner

SIMD_LANES = 4   # doubles per AVX2 vector: the max-plus tables are padded to a multiple


@inner
def padded(L):
    """``L`` rounded up to a multiple of :data:`SIMD_LANES`."""
    return -(-L // SIMD_LANES) * SIMD_LANES


@nb.njit(cache=True)
def viterbi_scratch(max_len, L):
    """Scratch of :func:`~ssvmbench.tasks.chain.viterbi`, ``padded(L)`` wide: ``max_len`` rows of
    max-sums, then the ``L`` rows of the transition table and one row for
    :func:`~ssvmbench.tasks.chain.table_max`'s maxima (zeros: the padding lanes are computed and
    never read)."""
    return np.zeros((max_len + L + 1, padded(L)))


@nb.njit(cache=True)
def topk_buffers(max_len, L, K):
    """Scratch for the top-K oracle on sequences of up to ``max_len`` tokens:
    ``(work, Y, z, p)`` with ``work`` the K-best Viterbi tables of
    :func:`~ssvmbench.tasks.smoothing.topk_viterbi`, ``Y`` a ``(K, max_len)`` array of labelings,
    ``z`` their scores and ``p`` their weights."""
    work = (np.empty((max_len + 1, L, K)), np.empty((max_len + 1, L, K), dtype=np.int64),
            np.empty((L + 1, L)), np.empty(L))
    return work, np.empty((K, max_len), dtype=np.int32), np.empty(K), np.empty(K)


@nb.njit(cache=True)
def exp_buffers(max_len, L):
    """Scratch for :func:`~ssvmbench.tasks.smoothing.exp_oracle`: forward scores ``alpha`` and
    partial sums ``S`` (both ``(max_len, L)``), the forward terms ``P`` (``(max_len, L, L)``, kept
    for the backward pass, which then needs no exponentials: 8 max_len L^2 bytes, e.g. 12 MB at L =
    92 and 180 tokens) and a length-``L`` work row."""
    return np.empty((max_len, L)), np.empty((max_len, L)), np.empty((max_len, L, L)), np.empty(L)
