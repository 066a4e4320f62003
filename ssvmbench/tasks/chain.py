"""Chain (sequence-labelling) task: joint feature map, Hamming loss, Viterbi oracles.

Joint feature map (BCFW Section 6 / Appendix F; Tsochantaridis et al. 2005):
``phi(x, y) = sum_t x_t (x) e_{y_t}  +  sum_t e_{y_t} e_{y_{t+1}}^T  +  e_{y_1}  +  e_{y_T}``,
laid out in one weight vector ``w`` as

* ``w[j*L + l]``            unary weight of feature ``j`` for label ``l`` (``F*L`` entries),
* ``w[F*L + a*L + b]``      transition ``a -> b`` (``L*L``),
* ``w[F*L + L*L + l]``      first-label bias, then ``w[F*L + L*L + L + l]`` last-label bias.

Task loss: Hamming distance normalized by the sequence length (BCFW Appendix F).
The max oracle (BCFW eq. 2) is loss-augmented Viterbi.

Kernels take the dataset as :class:`ChainData` (the arrays of a
:class:`~ssvmbench.data.sequences.ChainDataset`) and ``dims = (F, L)``.
Vectors ``psi`` are never materialized per example: a direction in ``w``-space is
kept as per-token label residuals plus a sparse transition part (see below).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.tasks import transitions
from ssvmbench.tasks.base import Scratch
from ssvmbench.tasks.scratch import padded, viterbi_scratch


class ChainData(NamedTuple):
    """The arrays the kernels take: sequence ``offsets`` (n+1) into the tokens, the tokens'
    gold ``labels``, their CSR features (``feat_ptr``, ``feat_idx``, ``feat_val``), and
    ``calls``, the oracle calls made on them (see :class:`~ssvmbench.tasks.base.Task`).

    ``gram``, ``gram_start`` and ``gram_done`` keep the token Gram entries
    ``<x_t, x_u>`` (``u >= t`` in one sequence) that :func:`direction_sqnorm` computed, so a
    line search computes each once per run (:func:`token_gram_store`)."""

    offsets: np.ndarray
    labels: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    feat_val: np.ndarray
    calls: np.ndarray
    gram: np.ndarray
    gram_start: np.ndarray
    gram_done: np.ndarray


TOKEN_GRAM_BYTES = 1 << 29     # at most this much kept of the token Gram entries


def token_gram_store(offsets):
    """``(gram, gram_start, gram_done)`` of :class:`ChainData`: token ``t``'s entries
    ``<x_t, x_u>`` for the tokens ``u = t, t+1, ...`` to its sequence's end are
    ``gram[gram_start[t]:gram_start[t + 1]]``, filled at the first line search that needs
    them (``gram_done[t]``). The memory is taken as they are filled (untouched pages of
    ``np.empty`` cost nothing); more than :data:`TOKEN_GRAM_BYTES` in all: none kept
    (``gram`` empty, each line search computes its entries)."""
    ends = np.repeat(offsets[1:], np.diff(offsets))      # each token's sequence end
    row_lengths = ends - np.arange(len(ends))
    gram_start = np.zeros(len(row_lengths) + 1, dtype=np.int64)
    np.cumsum(row_lengths, out=gram_start[1:])
    size = int(gram_start[-1]) if gram_start[-1] * 8 <= TOKEN_GRAM_BYTES else 0
    return np.empty(size), gram_start, np.zeros(len(row_lengths), dtype=np.uint8)


# ----------------------------------------------------------------------------- scores


@inner
def buffers(max_len, L):
    """Per-pass scratch arrays: unary scores ``U``, the Viterbi table ``delta``
    (:func:`~ssvmbench.tasks.scratch.viterbi_scratch`), a labeling ``y`` and a direction ``(R, E)``
    (see below)."""
    return (np.empty((max_len, L)), viterbi_scratch(max_len, L),
            np.empty(max_len, dtype=np.int32), np.empty((max_len, L)),
            transitions.scratch(max_len, L))


@inner
def scratch(dims, data, max_len):
    """The :class:`~ssvmbench.tasks.base.Scratch` of a pass: :func:`buffers` and an all-zero
    vector of ``F`` entries (shared by the tasks whose directions are the chain's)."""
    U, delta, y, R, E = buffers(max_len, dims[1])
    return Scratch(U, delta, y, R, E, np.zeros(dims[0]))


@inner
def subtract_direction(data, T, R, E, R2, E2):
    """``(R, E) -= (R2, E2)``: token residuals, then the sparse transition parts (loops,
    not a slice assignment, which compiles its error message: 3 s of a cold start)."""
    for t in range(T):
        for l in range(R.shape[1]):
            R[t, l] -= R2[t, l]
    E[2][0] = transitions.add_sorted(E[0], E[1], E[2][0], E2[0], E2[1], E2[2][0], -1.0)


@inner
def unary_scores(w, ws, dims, data, i, out):
    """``out[t, l] = ws * <w_l, x_t>`` for the tokens of sequence ``i``; returns ``T``."""
    offsets, feat_ptr, feat_idx, feat_val = data[0], data[2], data[3], data[4]
    F, L = dims
    W = w[:F * L].reshape((F, L))
    t0 = offsets[i]
    T = offsets[i + 1] - t0
    for t in range(T):
        gather_add(W, ws, feat_idx, feat_val, feat_ptr[t0 + t], feat_ptr[t0 + t + 1], out[t])
    return T


@inner
def gather_add(W, ws, feat_idx, feat_val, p, p1, out):
    """``out = ws * sum_{p <= q < p1} feat_val[q] W[feat_idx[q]]``: one token's scores for
    all labels, a gather-add of the rows of its active features. Four rows are summed per
    sweep over ``out`` (a quarter of the loads and stores of ``out``; SIMD over labels)."""
    L = W.shape[1]
    for l in range(L):
        out[l] = 0.0
    while p + 4 <= p1:
        r0, r1, r2, r3 = W[feat_idx[p]], W[feat_idx[p + 1]], W[feat_idx[p + 2]], W[feat_idx[p + 3]]
        v0, v1 = ws * feat_val[p], ws * feat_val[p + 1]
        v2, v3 = ws * feat_val[p + 2], ws * feat_val[p + 3]
        for l in range(L):
            out[l] += (v0 * r0[l] + v1 * r1[l]) + (v2 * r2[l] + v3 * r3[l])
        p += 4
    while p < p1:
        r0 = W[feat_idx[p]]
        v0 = ws * feat_val[p]
        for l in range(L):
            out[l] += v0 * r0[l]
        p += 1


@inner
def labeling_score(w, ws, dims, U, T, y):
    """``<ws * w, phi(x, y)>`` given the unary scores ``U`` of ``ws * w``."""
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    s = ws * (w[off_first + y[0]] + w[off_first + L + y[T - 1]])
    for t in range(T):
        s += U[t, y[t]]
    for t in range(1, T):
        s += ws * w[off_trans + y[t - 1] * L + y[t]]
    return s


@inner
def mistakes(gold, y, T):
    """Hamming distance ``sum_t [y_t != gold_t]``."""
    errors = 0
    for t in range(T):
        if y[t] != gold[t]:
            errors += 1
    return errors


@inner
def hamming(gold, y, T):
    """Normalized Hamming loss ``(1/T) sum_t [y_t != gold_t]``."""
    return mistakes(gold, y, T) / T


@inner
def first_scores(w, ws, dims, U, T, gold, unit, out):
    """``out[l]``: score of label ``l`` at the first token (unary + first-label bias, plus
    the loss ``unit`` of a wrong label), where every chain recursion starts."""
    F, L = dims
    off_first = F * L + L * L
    for l in range(L):
        out[l] = U[0, l] + ws * w[off_first + l]
        if l != gold[0]:
            out[l] += unit


@inner
def loss_unit(normalized, T):
    """Loss of one wrong token: ``1/T`` for the normalized Hamming loss (BCFW Appendix F),
    1 for the Hamming loss (Casimir Section 4)."""
    return 1.0 / T if normalized else 1.0


@inner
def add_token_scores(U_t, gold_t, unit, out):
    """``out += U_t`` plus the loss ``unit`` at every label but ``gold_t`` (two SIMD loops
    around the gold label instead of a branch per label)."""
    L = len(out)
    for b in range(L):
        out[b] += U_t[b]
    for b in range(gold_t):
        out[b] += unit
    for b in range(gold_t + 1, L):
        out[b] += unit


@inner
def viterbi(w, ws, dims, U, T, gold, unit, delta, y_out):
    """Best labeling for the weights ``ws * w`` plus the Hamming loss with ``unit`` per
    wrong token (0: plain decoding).

    ``U`` holds the unary scores of ``ws * w``. With ``unit > 0`` this is
    loss-augmented decoding, the max oracle of BCFW eq. (2):
    ``argmax_y L_i(y) + <ws * w, phi(x, y)>``. Returns the maximal value (score
    plus loss); the labeling is written to ``y_out[:T]``.
    ``delta`` is a :func:`~ssvmbench.tasks.scratch.viterbi_scratch` array: the transitions
    ``ws * w_trans`` are written to its padded table and each max-plus step is
    :func:`table_max` over it (no back-pointer table); the backtrace recomputes each argmax
    over the ``L`` predecessors of the chosen label (the first maximal one).
    """
    F, L = dims
    off_first = F * L + L * L
    rows = len(delta) - L - 1
    if rows < T or delta.shape[1] != padded(L):
        raise ValueError("delta must be a viterbi_scratch array for this sequence")
    table, out = delta[rows:rows + L], delta[rows + L]
    write_transitions(w, ws, dims, table)
    first_scores(w, ws, dims, U, T, gold, unit, delta[0])
    for t in range(1, T):
        table_max(table, delta[t - 1], out)
        for b in range(L):
            delta[t, b] = out[b]
        add_token_scores(U[t], gold[t], unit, delta[t, :L])
    best = -np.inf
    arg = 0
    for l in range(L):
        v = delta[T - 1, l] + ws * w[off_first + L + l]
        if v > best:
            best = v
            arg = l
    y_out[T - 1] = arg
    for t in range(T - 1, 0, -1):
        b = y_out[t]
        top = -np.inf
        for a in range(L):
            v = delta[t - 1, a] + table[a, b]
            if v > top:
                top = v
                arg = a
        y_out[t - 1] = arg
    return best


@inner
def table_max(table, prev, out):
    """``out[b] = max_a prev[a] + table[a, b]`` over the ``L`` rows of a padded transition
    table, for every lane ``b < Lp``: one max-plus step of Viterbi, SIMD over ``b``, four
    rows per sweep over ``out`` (a quarter of its loads and stores; a maximum is exact, so
    the order the rows come in does not change it). ``out`` is a row apart from ``prev``'s
    table: written straight into the table's next row, a row per sweep, the steps took
    59 ms a CoNLL-2000 pass against 45-50 ms into a row apart, 38 ms four rows per sweep."""
    L, Lp = table.shape
    p = prev[0]
    for b in range(Lp):
        out[b] = p + table[0, b]
    a = 1
    while a + 3 < L:
        p0, p1, p2, p3 = prev[a], prev[a + 1], prev[a + 2], prev[a + 3]
        for b in range(Lp):
            v0 = p0 + table[a, b]
            v1 = p1 + table[a + 1, b]
            v2 = p2 + table[a + 2, b]
            v3 = p3 + table[a + 3, b]
            v0 = v0 if v0 > v1 else v1
            v2 = v2 if v2 > v3 else v3
            v0 = v0 if v0 > v2 else v2
            out[b] = v0 if v0 > out[b] else out[b]
        a += 4
    while a < L:
        p = prev[a]
        for b in range(Lp):
            v = p + table[a, b]
            out[b] = v if v > out[b] else out[b]
        a += 1


@inner
def table_max_pair(table, prev, out, prev2, out2):
    """:func:`table_max` of ``prev`` into ``out`` and of ``prev2`` into ``out2`` in one sweep
    over the table, each of its rows loaded once for both: the plain and the loss-augmented
    decodings of an evaluation (:func:`decode_and_top`; one iterate's on the CoNLL-2000
    training set 6-7 % faster than in two sweeps). The same maxima, to the bit."""
    L, Lp = table.shape
    p, q = prev[0], prev2[0]
    for b in range(Lp):
        out[b] = p + table[0, b]
        out2[b] = q + table[0, b]
    a = 1
    while a + 3 < L:
        p0, p1, p2, p3 = prev[a], prev[a + 1], prev[a + 2], prev[a + 3]
        q0, q1, q2, q3 = prev2[a], prev2[a + 1], prev2[a + 2], prev2[a + 3]
        for b in range(Lp):
            t0, t1, t2, t3 = table[a, b], table[a + 1, b], table[a + 2, b], table[a + 3, b]
            v0, v1, v2, v3 = p0 + t0, p1 + t1, p2 + t2, p3 + t3
            v0 = v0 if v0 > v1 else v1
            v2 = v2 if v2 > v3 else v3
            v0 = v0 if v0 > v2 else v2
            out[b] = v0 if v0 > out[b] else out[b]
            v0, v1, v2, v3 = q0 + t0, q1 + t1, q2 + t2, q3 + t3
            v0 = v0 if v0 > v1 else v1
            v2 = v2 if v2 > v3 else v3
            v0 = v0 if v0 > v2 else v2
            out2[b] = v0 if v0 > out2[b] else out2[b]
        a += 4
    while a < L:
        p, q = prev[a], prev2[a]
        for b in range(Lp):
            v = p + table[a, b]
            out[b] = v if v > out[b] else out[b]
            v = q + table[a, b]
            out2[b] = v if v > out2[b] else out2[b]
        a += 1


@inner
def evaluation_buffers(W, dims, max_len):
    """Scratch of one evaluation worker for the iterates ``W`` (``k x d``): unary scores
    ``U`` and the two Viterbi tables ``delta, delta2`` (``max_len x Lp``, zeros, each with
    one more row for the maxima of a step), a labeling ``y`` and each iterate's transition
    table ``tables[j]`` (``L x Lp``, :func:`write_transitions`, each row padded with zeros
    to ``Lp``, a multiple of :data:`~ssvmbench.tasks.scratch.SIMD_LANES`: the max-plus steps over it
    (:func:`table_max_pair`) run whole SIMD vectors, with no scalar remainder loop; the
    padded lanes are computed and never read)."""
    k, L = W.shape[0], dims[1]
    Lp = padded(L)
    tables = np.zeros((k, L, Lp))
    for j in range(k):
        write_transitions(W[j], 1.0, dims, tables[j])
    return (np.zeros((max_len, Lp)), np.zeros((max_len + 1, Lp)), np.zeros((max_len + 1, Lp)),
            np.empty(max_len, dtype=np.int32), tables)


@inner
def write_transitions(w, ws, dims, table):
    """``table[a, b] = ws * w_trans[a, b]`` for the ``L x L`` transitions of ``w`` (the
    padding lanes of ``table`` are left as they are)."""
    F, L = dims
    for a in range(L):
        for b in range(L):
            table[a, b] = ws * w[F * L + a * L + b]


@inner
def decode_and_top(w, table, dims, U, T, gold, unit, delta, delta2, y_out, with_top):
    """:func:`viterbi` at ``w`` (``ws = 1``): the plain decoding (into ``y_out``) and, if
    ``with_top``, in the same forward sweep the value of loss-augmented decoding with
    ``unit`` per wrong token (returned, else 0; no labeling): an evaluation's prediction and
    hinge from one sweep over the tokens (each step :func:`table_max_pair` over ``table``,
    ``w``'s transition table of :func:`evaluation_buffers`), equal to two :func:`viterbi`
    calls. Without ``with_top`` the second recursion's steps are taken too and ignored: with
    :func:`table_max` compiled beside the pair for that case, the evaluation's first compile
    took about 1 s longer (OCR: 5.3-5.8 → 6.5-6.9 s). ``U``, ``delta`` and ``delta2`` are
    ``Lp`` wide, the tables of :func:`evaluation_buffers` (their last rows take a step's
    maxima)."""
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    out, out2 = delta[len(delta) - 1], delta2[len(delta2) - 1]
    first_scores(w, 1.0, dims, U, T, gold, 0.0, delta[0])
    if with_top:
        first_scores(w, 1.0, dims, U, T, gold, unit, delta2[0])
    for t in range(1, T):
        table_max_pair(table, delta[t - 1], out, delta2[t - 1], out2)
        if with_top:
            for b in range(L):
                delta2[t, b] = out2[b]
            add_token_scores(U[t], gold[t], unit, delta2[t, :L])
        for b in range(L):
            delta[t, b] = out[b] + U[t, b]
    best, top = -np.inf, -np.inf
    arg = 0
    for l in range(L):
        v = delta[T - 1, l] + w[off_first + L + l]
        if v > best:
            best = v
            arg = l
        v2 = delta2[T - 1, l] + w[off_first + L + l]
        top = v2 if v2 > top else top
    y_out[T - 1] = arg
    for t in range(T - 1, 0, -1):
        column = off_trans + y_out[t]
        best = -np.inf
        for a in range(L):
            v = delta[t - 1, a] + w[column + a * L]
            if v > best:
                best = v
                arg = a
        y_out[t - 1] = arg
    return top if with_top else 0.0


@inner
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Max oracle for BCFW: loss-augmented Viterbi (BCFW eq. 2) for sequence ``i`` given its
    unary scores ``U``, the labeling written to ``y``; returns its task loss."""
    gold = data[1][data[0][i]:data[0][i] + T]
    viterbi(w, 1.0, dims, U, T, gold, loss_unit(normalized, T), delta, y)
    return hamming(gold, y, T) if normalized else float(mistakes(gold, y, T))


# ------------------------------------------------- directions in w-space, never materialized
#
# A direction ``sum_t x_t (x) R_t + E + R_0 (first) + R_{T-1} (last)`` over the blocks
# of ``w`` is given by a ``T x L`` residual ``R`` and a sparse transition part ``E``
# (see :mod:`ssvmbench.tasks.transitions`).
# BCFW: ``R_t = e_{y*_t} - mu_t`` and ``E = counts(y*) - P_i`` (phi(y*) - phi(alpha_i));
# primal solvers (the oracles of :mod:`ssvmbench.tasks.chain_oracles`): the hinge gradient
# ``phi(y*) - phi(y_i)``, or ``sum_y p(y) phi(y) - phi(y_i)`` for the smoothed oracles.


@inner
def direction_sqnorm(dims, data, t0, T, R, E, x_dense):
    """Squared norm of the direction ``(R, E)``: ``sum_{t,u} <x_t, x_u> <R_t, R_u>`` plus
    the transition and bias blocks. ``x_dense`` is an all-zero ``(F,)`` scratch array
    (left all-zero) used to scatter one token's features for the Gram entries, which are
    kept in ``data`` (:func:`token_gram_store`): a token's row of them is computed at the
    first direction that has a non-zero residual row there, and read after.

    Zero entries of ``R`` are skipped (a BCFW residual ``e_y - mu_t`` has one to three
    non-zeros of ``L``, and most rows are zero): a product with a zero adds an exact zero,
    so every sum takes the same non-zero terms in the same order and the result is the
    same to the bit. A kept Gram entry is the same sum as a fresh one."""
    feat_ptr, feat_idx, feat_val = data[2], data[3], data[4]
    gram, gram_start, gram_done = data.gram, data.gram_start, data.gram_done
    kept = len(gram) > 0
    L = dims[1]
    s = 0.0
    for t in range(T):
        if not nonzero_row(R[t]):
            continue
        row = gram_start[t0 + t] - t       # gram[row + u] = <x_t, x_u> once done
        fresh = not kept or gram_done[t0 + t] == 0
        if fresh:
            p0, p1 = feat_ptr[t0 + t], feat_ptr[t0 + t + 1]
            for p in range(p0, p1):
                x_dense[feat_idx[p]] = feat_val[p]
            if kept:
                for u in range(t, T):
                    gram[row + u] = sparse_dense_dot(x_dense, feat_idx, feat_val,
                                                     feat_ptr[t0 + u], feat_ptr[t0 + u + 1])
                gram_done[t0 + t] = 1
        # the first four non-zeros of R[t] (labels l0 < l1 < ... and values a0, a1, ...)
        n_t, l0, l1, l2, l3 = 0, 0, 0, 0, 0
        a0 = a1 = a2 = a3 = 0.0
        for l in range(L):
            a = R[t, l]
            if a != 0.0:
                if n_t == 0:
                    l0, a0 = l, a
                elif n_t == 1:
                    l1, a1 = l, a
                elif n_t == 2:
                    l2, a2 = l, a
                elif n_t == 3:
                    l3, a3 = l, a
                n_t += 1
        for u in range(t, T):
            if n_t <= 4:
                r = a0 * R[u, l0]
                if n_t > 1:
                    r += a1 * R[u, l1]
                    if n_t > 2:
                        r += a2 * R[u, l2]
                        if n_t > 3:
                            r += a3 * R[u, l3]
            else:
                r = 0.0
                for l in range(L):
                    a = R[t, l]
                    if a != 0.0:
                        r += a * R[u, l]
            if r != 0.0:
                if kept:
                    k = gram[row + u]
                else:
                    k = sparse_dense_dot(x_dense, feat_idx, feat_val, feat_ptr[t0 + u],
                                         feat_ptr[t0 + u + 1])
                s += k * r if u == t else 2.0 * k * r
        if fresh:
            for p in range(feat_ptr[t0 + t], feat_ptr[t0 + t + 1]):
                x_dense[feat_idx[p]] = 0.0
    return s + label_sqnorm(R, T, E)


@nb.njit(cache=True, inline="always")
def sparse_dense_dot(x_dense, feat_idx, feat_val, q0, q1):
    """``sum_q x_dense[feat_idx[q]] * feat_val[q]`` for ``q0 <= q < q1``, in that order."""
    k = 0.0
    for q in range(q0, q1):
        k += x_dense[feat_idx[q]] * feat_val[q]
    return k


@nb.njit(cache=True, inline="always")
def nonzero_row(r):
    """Has the row ``r`` a non-zero entry? (No early exit: the loop is one SIMD
    reduction, and most rows of a BCFW residual are zero.)"""
    any_ = False
    for l in range(len(r)):
        any_ |= r[l] != 0.0
    return any_


@inner
def label_sqnorm(R, T, E):
    """Squared norm of the first- and last-label bias blocks and the transition part of the
    direction ``(R, E)``."""
    s = 0.0
    for a in range(R.shape[1]):
        s += R[0, a] * R[0, a] + R[T - 1, a] * R[T - 1, a]
    vals = E[1]
    for j in range(E[2][0]):
        s += vals[j] * vals[j]
    return s


@inner
def residual_gram(dims, data, t0, T, R, x_dense, K, rows):
    """The token Gram entries a direction ``(R, E)`` needs: ``rows[:m]`` the tokens whose
    residual row ``R[t]`` is non-zero, ``K[j, u] = <x_{rows[j]}, x_u>`` for every token ``u``
    of the sequence; returns ``m``. With them :func:`gram_sqnorm` and
    :func:`add_gram_scores` cost no feature reads (a sequence re-used within a visit,
    SAP's alpha-SUB steps). ``x_dense``: as in :func:`direction_sqnorm`."""
    feat_ptr, feat_idx, feat_val = data[2], data[3], data[4]
    m = 0
    for t in range(T):
        for l in range(R.shape[1]):
            if R[t, l] != 0.0:
                rows[m] = t
                m += 1
                break
    for j in range(m):
        p0, p1 = feat_ptr[t0 + rows[j]], feat_ptr[t0 + rows[j] + 1]
        for p in range(p0, p1):
            x_dense[feat_idx[p]] = feat_val[p]
        for u in range(T):
            K[j, u] = sparse_dense_dot(x_dense, feat_idx, feat_val, feat_ptr[t0 + u],
                                       feat_ptr[t0 + u + 1])
        for p in range(p0, p1):
            x_dense[feat_idx[p]] = 0.0
    return m


@inner
def gram_sqnorm(K, rows, m, T, R, E):
    """:func:`direction_sqnorm` from the Gram entries of :func:`residual_gram`."""
    s = 0.0
    for j in range(m):
        for i in range(m):
            k = K[j, rows[i]]
            if k != 0.0:
                r = 0.0
                for l in range(R.shape[1]):
                    r += R[rows[j], l] * R[rows[i], l]
                s += k * r
    return s + label_sqnorm(R, T, E)


@inner
def add_gram_scores(U, coef, K, rows, m, T, R):
    """``U[u] += coef * sum_j K[j, u] R[rows[j]]``: the unary scores ``U`` of ``w`` after
    ``w += coef * (R, E)`` (:func:`add_direction`), from the Gram entries of
    :func:`residual_gram` (transitions and biases are read from ``w`` itself)."""
    for j in range(m):
        r = R[rows[j]]
        for u in range(T):
            c = coef * K[j, u]
            if c != 0.0:
                for l in range(U.shape[1]):
                    U[u, l] += c * r[l]


@inner
def direction_dot(w, dims, data, U, T, R, E):
    """``<w, direction>`` given the unary scores ``U`` of ``w``."""
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    s = 0.0
    for t in range(T):             # zero rows skipped: they add exact zeros
        if nonzero_row(R[t]):
            for l in range(L):
                s += R[t, l] * U[t, l]
    for a in range(L):
        s += R[0, a] * w[off_first + a] + R[T - 1, a] * w[off_first + L + a]
    keys, vals = E[0], E[1]
    for j in range(E[2][0]):
        s += vals[j] * w[off_trans + keys[j]]
    return s


@nb.njit(cache=True, inline="always")
def _put(w, U, C, q, delta):
    """``w[q] += delta`` and the lazy-average record ``U[j, q] += C[j] delta``."""
    w[q] += delta
    for j in range(len(C)):
        U[j, q] += C[j] * delta


@inner
def add_direction(w, coef, dims, data, t0, T, R, E, U, C):
    """``w += coef * direction``, touching only the features of the ``T`` tokens; each
    change is also recorded in the lazy averages ``U`` with weights ``C`` (see
    :mod:`ssvmbench.solvers.averaging`; empty ``C`` = no averages)."""
    feat_ptr, feat_idx, feat_val = data[2], data[3], data[4]
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    W = w[:F * L].reshape((F, L))
    for t in range(T):
        r = R[t]
        nonzero = 0
        for l in range(L):
            nonzero += r[l] != 0.0
        if nonzero == 0:
            continue
        p, p1 = feat_ptr[t0 + t], feat_ptr[t0 + t + 1]
        few = 4 * nonzero <= L
        scatter_row(W, coef, feat_idx, feat_val, p, p1, r, few)
        for j in range(len(C)):
            scatter_row(U[j, :F * L].reshape((F, L)), coef * C[j], feat_idx, feat_val, p, p1,
                        r, few)
    for a in range(L):
        _put(w, U, C, off_first + a, coef * R[0, a])
        _put(w, U, C, off_first + L + a, coef * R[T - 1, a])
    keys, vals = E[0], E[1]
    for j in range(E[2][0]):
        _put(w, U, C, off_trans + keys[j], coef * vals[j])


@nb.njit(cache=True, inline="always")
def scatter_row(W, coef, feat_idx, feat_val, p, p1, r, few):
    """``W[feat_idx[q]] += coef * feat_val[q] * r`` for ``p <= q < p1``: by the labels
    where ``r`` is non-zero if they are ``few`` (a BCFW residual has one to three of
    ``L``), else by rows (:func:`scatter_add`). Each entry of ``W`` receives the same
    product either way (the rows are distinct, and a zero ``r[l]`` adds an exact zero to
    an entry that is never ``-0.0``: sums that start at ``+0.0`` never give ``-0.0``), so
    the result is the same to the bit."""
    if few:
        for l in range(W.shape[1]):
            x = r[l]
            if x != 0.0:
                for q in range(p, p1):
                    W[feat_idx[q], l] += coef * feat_val[q] * x
    else:
        scatter_add(W, coef, feat_idx, feat_val, p, p1, r)


@inner
def scatter_add(W, coef, feat_idx, feat_val, p, p1, r):
    """``W[feat_idx[q]] += coef * feat_val[q] * r`` for ``p <= q < p1`` (the rows of one
    token's active features, distinct), four rows per sweep over ``r`` (SIMD over labels)."""
    L = W.shape[1]
    while p + 4 <= p1:
        r0, r1, r2, r3 = W[feat_idx[p]], W[feat_idx[p + 1]], W[feat_idx[p + 2]], W[feat_idx[p + 3]]
        v0, v1 = coef * feat_val[p], coef * feat_val[p + 1]
        v2, v3 = coef * feat_val[p + 2], coef * feat_val[p + 3]
        for l in range(L):
            x = r[l]
            r0[l] += v0 * x
            r1[l] += v1 * x
            r2[l] += v2 * x
            r3[l] += v3 * x
        p += 4
    while p < p1:
        r0 = W[feat_idx[p]]
        v0 = coef * feat_val[p]
        for l in range(L):
            r0[l] += v0 * r[l]
        p += 1


@inner
def psi_residual(gold, y, T, R, E):
    """``(R, E)`` of ``psi_i(y) = phi(x_i, y_i) - phi(x_i, y)``."""
    R[:T, :] = 0.0
    for t in range(T):
        R[t, gold[t]] += 1.0
        R[t, y[t]] -= 1.0
    transitions.set_difference_of_labelings(E, gold, y, T, R.shape[1])


@inner
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L_i(y) - <w, psi_i(y)>`` for the labeling ``y[:T]`` of sequence ``i``: the hinge
    term of one stored labeling (the max oracle returns its maximum over ``y``), read
    from ``w`` at the tokens and bigrams where ``y`` differs from ``y_i`` only."""
    offsets, labels, feat_ptr, feat_idx, feat_val = data[0], data[1], data[2], data[3], data[4]
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    t0 = offsets[i]
    gold = labels[t0:t0 + T]
    s = 0.0
    wrong = 0
    for t in range(T):
        a, b = y[t], gold[t]
        if a != b:
            wrong += 1
            for p in range(feat_ptr[t0 + t], feat_ptr[t0 + t + 1]):
                base = feat_idx[p] * L
                s += feat_val[p] * (w[base + a] - w[base + b])
        if t > 0 and (a != b or y[t - 1] != gold[t - 1]):
            s += w[off_trans + y[t - 1] * L + a] - w[off_trans + gold[t - 1] * L + b]
    s += w[off_first + y[0]] - w[off_first + gold[0]]
    s += w[off_first + L + y[T - 1]] - w[off_first + L + gold[T - 1]]
    return wrong * loss_unit(normalized, T) + s


@inner
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(x_i, y) - phi(x_i, y_i))`` for the labeling ``y[:T]`` of sequence
    ``i`` (the max oracle's gradient when ``y`` is its argmax), written at the tokens and
    bigrams where ``y`` differs from ``y_i`` only."""
    offsets, labels, feat_ptr, feat_idx, feat_val = data[0], data[1], data[2], data[3], data[4]
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    t0 = offsets[i]
    gold = labels[t0:t0 + T]
    for t in range(T):
        a, b = y[t], gold[t]
        if a != b:
            for p in range(feat_ptr[t0 + t], feat_ptr[t0 + t + 1]):
                base = feat_idx[p] * L
                v = coef * feat_val[p]
                g[base + a] += v
                g[base + b] -= v
        if t > 0 and (a != b or y[t - 1] != gold[t - 1]):
            g[off_trans + y[t - 1] * L + a] += coef
            g[off_trans + gold[t - 1] * L + b] -= coef
    if y[0] != gold[0]:
        g[off_first + y[0]] += coef
        g[off_first + gold[0]] -= coef
    if y[T - 1] != gold[T - 1]:
        g[off_first + L + y[T - 1]] += coef
        g[off_first + L + gold[T - 1]] -= coef


# The factored dual block of example i (BCFW Section 3): ``alpha_i`` enters ``w = A alpha``
# only through its token marginals ``mu[t0:t0+T]`` (T x L) and its bigram marginals
# ``P_i = sum_y alpha_i(y) counts(y)``, a sparse block of the pool ``blocks = (pool_keys,
# pool_vals, start, length, cap, used)`` (see :mod:`ssvmbench.tasks.transitions`). The
# averaged dual state needs only ``mu`` and ``Psum = sum_i P_i``, because ``w`` depends on
# the ``P_i`` only through their sum.


@inner
def marginals_residual(mu, blocks, data, i, t0, y, T, R, E):
    """``(R, E)`` of ``phi(x_i, y) - sum_y' alpha_i(y') phi(x_i, y')`` (factored alpha_i)."""
    L = mu.shape[1]
    for t in range(T):
        for l in range(L):
            R[t, l] = -mu[t0 + t, l]
        R[t, y[t]] += 1.0
    pool_keys, pool_vals, start, length = blocks[0], blocks[1], blocks[2], blocks[3]
    transitions.set_labeling_minus_block(E, y, T, L, pool_keys, pool_vals, start[i],
                                         length[i])


def init_marginals(data, mu, Psum):
    """Factored dual state of ``alpha_i = e_{y_i}`` (BCFW Algorithm 4 start, ``w = 0``):
    fills ``mu`` and ``Psum`` and returns the blocks ``P_i`` (the pool of
    :mod:`~ssvmbench.tasks.transitions`: each block its gold bigram counts, sorted, with
    room for twice its entries). In NumPy: called once per run, from Python, it has no
    kernel to compile (1 s of a cold start)."""
    offsets, labels = data[0], data[1]
    n = len(offsets) - 1
    L = mu.shape[1]
    mu[:, :] = 0.0
    mu[np.arange(len(labels)), labels] = 1.0
    lengths = np.diff(offsets)
    cap = np.maximum(4, 2 * (lengths - 1))
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(cap[:-1], out=start[1:])
    # each bigram (t - 1, t) within a sequence, keyed by its sequence then a * L + b
    sequence = np.repeat(np.arange(n, dtype=np.int64), lengths)
    inside = sequence[1:] == sequence[:-1]
    keys = labels[:-1][inside].astype(np.int64) * L + labels[1:][inside]
    found, counts = np.unique(sequence[1:][inside] * (L * L) + keys, return_counts=True)
    owner, key = np.divmod(found, L * L)
    total = int(cap.sum())
    pool_keys, pool_vals = np.empty(total, dtype=np.int64), np.empty(total)
    # an entry's place in its block: its rank among its sequence's (found is sorted)
    where = start[owner] + np.arange(len(found)) - np.searchsorted(owner, owner)
    pool_keys[where] = key
    pool_vals[where] = counts
    Psum[:] = np.bincount(key, weights=counts, minlength=len(Psum))
    return (pool_keys, pool_vals, start, np.bincount(owner, minlength=n), cap,
            np.array([total], dtype=np.int64))


@inner
def move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C):
    """``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` in factored form, given the residual
    ``(R, E)`` of ``y`` from :func:`marginals_residual`; returns the blocks (the pool may
    have grown). ``mu`` and ``Psum`` are views of one flat state vector (``mu`` first);
    each change is recorded in the lazy averages ``U`` with weights ``C`` (see
    :mod:`ssvmbench.solvers.averaging`)."""
    L = mu.shape[1]
    n_mu = mu.size
    for t in range(T):            # zero residuals skipped: they would add exact zeros
        if not nonzero_row(R[t]):
            continue
        for l in range(L):
            r = R[t, l]
            if r != 0.0:
                delta = gamma * r
                mu[t0 + t, l] += delta
                for j in range(len(C)):
                    U[j, (t0 + t) * L + l] += C[j] * delta
    keys, vals = E[0], E[1]
    for q in range(E[2][0]):
        delta = gamma * vals[q]
        Psum[keys[q]] += delta
        for j in range(len(C)):
            U[j, n_mu + keys[q]] += C[j] * delta
    pool_keys, pool_vals, start, length, cap, used = blocks
    pool_keys, pool_vals = transitions.move_block(pool_keys, pool_vals, start, length, cap,
                                                  used, i, E, gamma)
    return pool_keys, pool_vals, start, length, cap, used


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar = 1/(lam n) sum_i (phi(x_i, y_i) - sum_y alpha_bar_i(y) phi(x_i, y))``
    (BCFW Section 3) for the averaged factored dual state ``alpha_bar = (c alpha - U) / s``
    (``alpha`` flat: ``mu`` then ``Psum``; see :mod:`ssvmbench.solvers.averaging`), taken
    entry by entry so that ``alpha_bar`` is never materialized."""
    offsets, labels = data[0], data[1]
    n = len(offsets) - 1
    F, L = dims
    _, _, _, R, E = buffers(max_length(offsets), L)
    E[2][0] = 0
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    w[:] = 0.0
    for i in range(n):
        t0, T = average_residual(alpha, U, c, s, data, i, R, w[F * L:F * L + L * L])
        add_direction(w, 1.0 / (lam * n), dims, data, t0, T, R, E, no_U, no_C)
    n_mu = len(labels) * L
    for q in range(L * L):
        p_bar = (c * alpha[n_mu + q] - U[n_mu + q]) / s
        w[F * L + q] = (w[F * L + q] - p_bar) / (lam * n)


@inner
def average_residual(alpha, U, c, s, data, i, R, pairs):
    """``R[t] = e_{y_t} - mu_bar_t`` for the tokens of sequence ``i`` (``mu_bar`` from the
    averaged state ``(c alpha - U) / s``) and its gold tag pairs counted into ``pairs``
    (``L x L``, flat); returns ``(t0, T)``."""
    offsets, labels = data[0], data[1]
    L = R.shape[1]
    t0 = offsets[i]
    T = offsets[i + 1] - t0
    for t in range(T):
        for l in range(L):
            q = (t0 + t) * L + l
            R[t, l] = -(c * alpha[q] - U[q]) / s
        R[t, labels[t0 + t]] += 1.0
        if t > 0:
            pairs[labels[t0 + t - 1] * L + labels[t0 + t]] += 1.0
    return t0, T


@inner
def max_length(offsets):
    """The longest sequence's length (in compiled code; a task's ``max_len`` in Python)."""
    longest = 0
    for i in range(len(offsets) - 1):
        longest = max(longest, offsets[i + 1] - offsets[i])
    return longest


# ------------------------------------------------------------------------ evaluation


@nb.njit(cache=True, nogil=True)
def evaluate(side, edges, data, normalized, with_hinge, max_len, predictions, hinges, errors,
             first, last):
    """The examples ``first`` to ``last - 1`` of one pass over a split at ``k`` fixed
    iterates (a checkpoint's; not counted as oracle calls): a part of the pass that
    :meth:`ChainTask.evaluate_many <ssvmbench.tasks.chain_task.ChainTask.evaluate_many>`
    runs on each evaluation thread (:func:`ssvmbench.tasks.parts.in_parts`). The iterates
    come as :class:`~ssvmbench.tasks.chain_task.SideBySide` does: ``side``, their unary
    blocks (``F x L``) side by side (``F x kL``), and ``edges[j]``, iterate ``j``'s
    transitions and first and last biases in the chain layout of ``dims = (0, L)``.

    Writes iterate ``j``'s predicted labels of the part's tokens to ``predictions[j]``, and
    of its example ``i`` the normalized Hamming error to ``errors[j, i]`` and, if
    ``with_hinge``, the structured hinge ``H~_i(w)`` (BCFW eq. 2, with the task loss of
    :func:`loss_unit`) to ``hinges[j, i]`` (else 0). A token's scores for every iterate are
    one :func:`gather_add` of its features' rows of ``side``: the iterates share the
    token's reads of its features, and each score is the sum one iterate alone would make,
    term for term.
    """
    k = edges.shape[0]
    L = side.shape[1] // k
    dims = (0, L)
    offsets, feat_ptr, feat_idx, feat_val = data[0], data[2], data[3], data[4]
    U, delta, delta2, y, tables = evaluation_buffers(edges, dims, max_len)
    scores_of_all = U if k == 1 else np.empty((max_len, k * L))
    for i in range(first, last):
        t0 = offsets[i]
        T = offsets[i + 1] - t0
        for t in range(T):
            gather_add(side, 1.0, feat_idx, feat_val, feat_ptr[t0 + t], feat_ptr[t0 + t + 1],
                       scores_of_all[t])
        for j in range(k):
            if k > 1:
                iterate_scores(scores_of_all, j, L, T, U)
            errors[j, i], hinges[j, i] = score_sequence(
                edges[j], tables[j], dims, data, normalized, with_hinge, i, U, T, delta, delta2,
                y, predictions[j])


@inner
def iterate_scores(scores_of_all, j, L, T, U):
    """``U[:T, :L]``: iterate ``j``'s columns of the side-by-side scores ``scores_of_all``."""
    for t in range(T):
        for l in range(L):
            U[t, l] = scores_of_all[t, j * L + l]


@inner
def score_sequence(w, table, dims, data, normalized, with_hinge, i, U, T, delta, delta2, y,
                   predictions):
    """Decode sequence ``i`` from its token scores ``U`` and the transitions and biases of
    ``w`` (in the layout of ``dims``; ``table`` its transition table of
    :func:`evaluation_buffers`) into ``predictions``; returns its normalized Hamming error
    and, if ``with_hinge``, its structured hinge (else 0), both decodings in one sweep
    (:func:`decode_and_top`)."""
    t0 = data[0][i]
    gold = data[1][t0:t0 + T]
    top = decode_and_top(w, table, dims, U, T, gold, loss_unit(normalized, T), delta, delta2,
                         y, with_hinge)
    for t in range(T):       # (not a slice assignment, which compiles its error message)
        predictions[t0 + t] = y[t]
    error = hamming(gold, y, T)
    if not with_hinge:
        return error, 0.0
    return error, top - labeling_score(w, 1.0, dims, U, T, gold)
