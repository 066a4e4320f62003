"""Smooth inference oracles for chains (Pillutla et al., NeurIPS 2018, Section 2, Table 1).

The structural hinge loss is ``f = h o g`` with ``h(z) = max_y z_y`` over the labelings and
``z_y = s(y) = <ws * w, phi(x, y)> + L(y_i, y)`` the (loss-augmented) scores of
:func:`ssvmbench.tasks.chain.viterbi` (``f`` subtracts the gold score, which the caller does).
Smoothing ``h`` by ``mu * omega`` (Section 2, "Smoothing strategy") gives

* the **top-K oracle** (``l2^2`` smoothing, ``omega(u) = (||u||^2 - 1) / 2``, restricted to the
  K best labelings: ``h_{mu,K}``, Definition 1): :func:`topk_oracle`, built from the K-best
  Viterbi :func:`topk_viterbi` ("Top-K DP" of Table 1), the simplex projection
  :func:`project_simplex` / :func:`l2_smoothed_max` and :func:`weighted_labelings_direction`;
* the **exp oracle** (entropy smoothing, ``h_{-mu H}(z) = mu log sum_y exp(z_y / mu)``):
  :func:`exp_oracle`, a forward pass in factored exponentials and a backward pass of
  conditional probabilities ("Sum-Product" of Table 1).

Oracle interface: an oracle takes the unary scores ``U`` of ``ws * w``
(:func:`ssvmbench.tasks.chain.unary_scores`), returns the smoothed value and writes its
gradient with respect to the effective weights ``ws * w``, ``sum_y p(y) phi(x, y)``
(Definition 1: ``p`` = projection weights on the top K, resp. ``p_mu(y) ~ exp(s(y)/mu)``), as
a factored direction ``(R, E)``: ``R[:T]`` the per-token label weights and ``E`` a
transition part of :func:`ssvmbench.tasks.transitions.scratch` (sorted unique keys).
Solvers apply it with :func:`ssvmbench.tasks.chain.add_direction` (the gradient with respect
to the stored ``w`` is ``ws`` times it; the hinge gradient subtracts ``phi(x, y_i)``).
Each call of :func:`topk_oracle` or :func:`exp_oracle` counts as one oracle call, as does
one call of ``chain.viterbi`` (the max oracle); the caller counts.

Both smoothings bracket the max (Section 2, Nesterov's bound
``mu min omega <= f - f_{mu omega} <= mu max omega``): with ``m`` labelings (resp. the ``K``
kept), ``max z <= h_{mu,K}(z) <= max z + mu/2 (1 - 1/K)`` and
``max z <= h_{-mu H}(z) <= max z + mu log m``. The top-K value keeps the paper's constant
in ``omega``: ``h_{mu,K} = <p, z> - mu/2 ||p||^2 + mu/2`` (so both smoothed losses are upper
bounds of the hinge); the constant does not change the gradient.
"""

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.tasks import transitions
from ssvmbench.tasks.chain import first_scores

# ------------------------------------------------------------------ top-K Viterbi


@inner
def _push(vals, codes, n, K, v, code):
    """Insert ``v`` (with ``code``) into ``vals[:n]`` (sorted decreasing), keeping at most
    ``K`` entries; equal values keep their insertion order. Returns the new length."""
    if n == K:
        if v <= vals[K - 1]:
            return n
        j = K - 1
    else:
        j = n
        n += 1
    while j > 0 and vals[j - 1] < v:
        vals[j] = vals[j - 1]
        codes[j] = codes[j - 1]
        j -= 1
    vals[j] = v
    codes[j] = code
    return n


@nb.njit(cache=True, inline="always")
def _first_row(delta, t, shifts, s, node, heads):
    """``heads[a] = delta[t - 1, a, 0] + shifts[s, a] (+ node)`` for every row ``a``
    (``node`` None: none added, which numba decides when it compiles); returns the row with
    the largest head (the lowest ``a`` among equal heads)."""
    first = 0
    top = -np.inf
    for a in range(delta.shape[1]):
        h = delta[t - 1, a, 0] + shifts[s, a]
        if node is not None:
            h += node
        heads[a] = h
        if h > top:
            top = h
            first = a
    return first


@nb.njit(cache=True, inline="always")
def _beats(v, code, u, u_code, node):
    """Whether the entry ``(v, code)`` goes before ``(u, u_code)``: a larger value; of equal
    values, in the Casimir authors' order (``node`` a number) the larger code, in the scan
    order (``node`` None) the earlier entry, already there."""
    if node is None:
        return v > u
    return v > u or (v == u and code > u_code)


@nb.njit(cache=True, inline="always")
def _k_best_of_lists(delta, back, t, shifts, s, b, node, K, heads):
    """``delta[t, b, :K]``: the ``K`` largest of ``delta[t - 1, a, r] + shifts[s, a]`` over
    all ``(a, r)``, each row ``delta[t - 1, a, :K]`` sorted decreasing (``-inf``: no
    entry), sorted decreasing with ``back[t, b, k] = a << 32 | r`` (Casimir Table 1, "Top-K
    DP"). The largest-head row fills the ``K`` best; an entry of another row that beats the
    ``K``-th best is inserted, and the first that does not ends its row (a later entry is no
    larger, and of equal value it still loses to the ``K``-th best). The ``K`` largest of a
    total order do not depend on the order the entries come in. Written in place into the
    tables (no copy per node). ``heads``: scratch of ``L``.

    ``node`` None, the scan order: ties go to the earlier in scan order, the row with the
    largest head first (the lowest ``a`` among equal heads), then the other rows in
    increasing ``a``, each in its own order; the caller adds the node's score after.
    ``node`` a number, the Casimir authors' tie order: the values include ``node`` before
    comparing, as they compare, and among equal values the larger previous label ``a``
    comes first, then the larger rank ``r`` (the first row's runs of equal values
    reversed): the order in which their top-K Viterbi
    (``casimir/data/named_entity_recognition/viterbi.pyx``, ``viterbi_decode_top_k``) pops
    a C++ ``priority_queue<pair<double, pair<int, int>>>`` of all ``(value, (previous tag,
    rank))``. numba decides which when it compiles."""
    first = _first_row(delta, t, shifts, s, node, heads)
    x = shifts[s, first]
    tie = False
    for r in range(K):
        v = delta[t - 1, first, r] + x
        if node is not None:
            v += node
            tie |= r > 0 and v == delta[t, b, r - 1]
        delta[t, b, r] = v
        back[t, b, r] = (first << 32) | r
    if tie:                               # (the Casimir order only) the larger rank first
        start = 0
        for r in range(1, K + 1):
            if r == K or delta[t, b, r] != delta[t, b, start]:
                i, j = start, r - 1
                while i < j:
                    swap = back[t, b, i]
                    back[t, b, i] = back[t, b, j]
                    back[t, b, j] = swap
                    i += 1
                    j -= 1
                start = r
    for a in range(delta.shape[1]):
        if a == first or heads[a] < delta[t, b, K - 1]:
            continue                      # no entry of row a makes the K best
        x = shifts[s, a]
        for r in range(K):
            v = heads[a] if r == 0 else delta[t - 1, a, r] + x
            if node is not None and r > 0:
                v += node
            code = (a << 32) | r
            if not _beats(v, code, delta[t, b, K - 1], back[t, b, K - 1], node):
                break
            j = K - 1
            while j > 0 and _beats(v, code, delta[t, b, j - 1], back[t, b, j - 1], node):
                delta[t, b, j] = delta[t, b, j - 1]
                back[t, b, j] = back[t, b, j - 1]
                j -= 1
            delta[t, b, j] = v
            back[t, b, j] = code


@inner
def topk_viterbi(w, ws, dims, U, T, gold, unit, K, casimir_ties, work, Y_out, z_out):
    """The K best labelings of the chain and their scores, sorted decreasing (the top-K
    oracle's inference, Definition 1; "Top-K DP" of Table 1, paper Section 2).

    Scores are those of :func:`ssvmbench.tasks.chain.viterbi`: ``<ws * w, phi(x, y)>`` from
    the unary scores ``U`` of ``ws * w``, plus the Hamming loss to ``gold`` with ``unit`` per
    wrong token (0: none). The forward pass keeps the K best partial scores per ``(t, label)``
    (``-inf`` past the ``L^t`` that exist) with back-pointers ``(previous label, its rank)``;
    each list is the K best of the ``L`` sorted lists of the predecessors shifted by their
    transition scores (:func:`_k_best_of_lists`: the Viterbi predecessor's list, then the
    entries of the other lists that make it, inserted): ``O(T L (L + m K))`` time with
    ``m`` entries inserted; with its unary scores and its gradient the oracle call costs
    about 1.8 max-oracle calls on Casimir's CoNLL-2003 NER (``L = 8, K = 5``, their tie
    order, ``ssvmbench bench --oracles``). The end of the chain is one more step, the
    K best of the last lists shifted by the end biases, kept at ``t = T`` of the tables.
    Writes the labelings to ``Y_out[:n, :T]`` and their scores to ``z_out[:n]`` and returns
    ``n = min(K, L^T)``. Ties are broken by scan order, so the best labeling is Viterbi's
    (:func:`~ssvmbench.tasks.chain.viterbi`), or with ``casimir_ties`` in the Casimir
    authors' order (:func:`_k_best_of_lists` given the node's score): at ``w = 0`` every
    score is a Hamming count and the K returned depend on that order alone. ``work`` is the
    first item of :func:`~ssvmbench.tasks.scratch.topk_buffers` (built for at least ``K``).
    """
    delta, back, shifts, heads = work
    if K < 1 or K > delta.shape[2]:
        raise ValueError("K must be between 1 and the K of scratch.topk_buffers")
    F, L = dims
    off_trans = F * L
    off_last = off_trans + L * L + L
    for a in range(L):        # shifts[b, a]: the transition a -> b; shifts[L]: the end
        for b in range(L):
            shifts[b, a] = ws * w[off_trans + a * L + b]
        shifts[L, a] = ws * w[off_last + a]
    first_scores(w, ws, dims, U, T, gold, unit, delta[0, :, 0])
    for b in range(L):
        for k in range(1, K):
            delta[0, b, k] = -np.inf
    # one loop per tie order: with both merges inlined in one loop the Casimir order's pass
    # took 1.6x as long (NER, K = 5)
    if casimir_ties:
        for t in range(1, T):
            for b in range(L):
                node = U[t, b]
                if b != gold[t]:
                    node += unit
                _k_best_of_lists(delta, back, t, shifts, b, b, node, K, heads)
        _k_best_of_lists(delta, back, T, shifts, L, 0, 0.0, K, heads)
    else:
        for t in range(1, T):
            for b in range(L):
                node = U[t, b]
                if b != gold[t]:
                    node += unit
                _k_best_of_lists(delta, back, t, shifts, b, b, None, K, heads)
                for k in range(K):
                    delta[t, b, k] += node
        _k_best_of_lists(delta, back, T, shifts, L, 0, None, K, heads)
    n = 0
    while n < K and delta[T, 0, n] > -np.inf:
        z_out[n] = delta[T, 0, n]
        b, r = back[T, 0, n] >> 32, back[T, 0, n] & 0xFFFFFFFF
        Y_out[n, T - 1] = b
        for t in range(T - 1, 0, -1):
            code = back[t, b, r]
            b, r = code >> 32, code & 0xFFFFFFFF
            Y_out[n, t - 1] = b
        n += 1
    return n


# ------------------------------------------------------- l2^2 smoothing over the top K


@inner
def _threshold_sorted(u, n, radius):
    """``tau`` with ``sum_j max(u_j - u_0 - tau, 0) = radius`` for non-increasing ``u[:n]``
    (relative to the max ``u_0``, so the support's differences stay exact)."""
    css = 0.0
    tau = -radius
    for j in range(n):
        d = u[j] - u[0]
        css += d
        cand = (css - radius) / (j + 1)
        if d > cand:
            tau = cand
        else:
            break
    return tau


@inner
def _simplex_threshold(v, n, radius):
    """``(m, tau)`` with ``m = max v[:n]`` and ``sum_j max(v_j - m - tau, 0) = radius``
    (sort-based, Duchi et al. 2008); no sort when ``v[:n]`` is already non-increasing (top-K
    scores). Working relative to the max keeps ``p`` accurate when ``radius`` is tiny
    compared with ``|v|`` (small ``mu``, large scores)."""
    for j in range(1, n):
        if v[j] > v[j - 1]:
            u = -np.sort(-v[:n])
            return u[0], _threshold_sorted(u, n, radius)
    return v[0], _threshold_sorted(v, n, radius)


@inner
def project_simplex(v, n, out):
    """Euclidean projection of ``v[:n]`` onto the probability simplex, written to
    ``out[:n]`` (sort-based: Held et al. 1974, Duchi et al. 2008); paper Section 2,
    ``grad h_{mu l2^2}(z) = proj_simplex(z / mu)``."""
    top, tau = _simplex_threshold(v, n, 1.0)
    for j in range(n):
        out[j] = max((v[j] - top) - tau, 0.0)


@inner
def l2_smoothed_max(z, n, mu, p_out):
    """``h_{mu l2^2}(z) = max_{u in simplex} <z, u> - mu (||u||^2 - 1) / 2`` over ``z[:n]``
    (paper Section 2, with its ``l2^2(u) = (||u||^2 - 1) / 2``); applied to the K best
    scores this is the top-K oracle's ``h_{mu,K}`` (Definition 1). Writes the maximizer
    ``p = proj_simplex(z / mu)`` (the gradient) to ``p_out[:n]`` and returns
    ``<p, z> - mu/2 (||p||^2 - 1)``, which lies in ``[max z, max z + mu/2 (1 - 1/n)]``.
    Everything is computed relative to ``max z`` and in the units of ``z``
    (``p = max(z - max z - tau, 0) / mu``, value ``max z + <p, z - max z> - ...``), so a
    small ``mu`` next to large scores loses no accuracy."""
    top, tau = _simplex_threshold(z, n, mu)
    inv = 1.0 / mu
    dot = 0.0
    sq = 0.0
    for j in range(n):
        d = z[j] - top
        pj = max(d - tau, 0.0) * inv
        p_out[j] = pj
        if pj > 0.0:
            dot += pj * d
            sq += pj * pj
    return top + dot - 0.5 * mu * (sq - 1.0)


@inner
def weighted_labelings_direction(Y, p, n, T, L, R, E):
    """``(R, E)`` of ``sum_k p_k phi(x, Y[k])`` over ``k < n`` (the top-K oracle's gradient,
    Definition 1): ``R[t] = sum_k p_k e_{Y[k, t]}`` for ``t < T`` and ``E`` the weighted
    bigram counts (sorted unique keys, from ``transitions.bigram_counts``). Labelings with
    ``p_k = 0`` are skipped."""
    R[:T, :] = 0.0
    keys, vals, size, wk, wv = E
    size[0] = 0
    for k in range(n):
        pk = p[k]
        if pk == 0.0:
            continue
        y = Y[k]
        for t in range(T):
            R[t, y[t]] += pk
        nb_ = transitions.bigram_counts(y, T, L, wk, wv)
        size[0] = transitions.add_sorted(keys, vals, size[0], wk, wv, nb_, pk)


@inner
def topk_oracle(w, ws, dims, U, T, gold, unit, K, mu, casimir_ties, buffers, R, E):
    """Top-K oracle (paper Section 2, Definition 1; Table 1 "Top-K DP"): the value
    ``h_{mu,K}`` of the ``l2^2``-smoothed max over the K best (loss-augmented) scores and
    its gradient ``sum_k p_k phi(x, y_(k))``, ``p = proj_simplex(z_[K] / mu)``, written to
    ``(R, E)``. ``buffers = (work, Y, z, p)`` from :func:`~ssvmbench.tasks.scratch.topk_buffers`; on
    return ``Y``, ``z`` and ``p`` hold the labelings, scores and weights (entries past ``min(K,
    L^T)`` have ``z = -inf``, ``p = 0``); ``casimir_ties``: the tie order of :func:`topk_viterbi`.
    One call is one oracle call. As ``mu -> 0`` it is the max oracle (``p = e_1``); for ``K >= L^T``
    it is the exact ``l2^2`` smoothing."""
    work, Y, z, p = buffers
    n = topk_viterbi(w, ws, dims, U, T, gold, unit, K, casimir_ties, work, Y, z)
    value = l2_smoothed_max(z, n, mu, p)
    for k in range(n, K):
        z[k] = -np.inf
        p[k] = 0.0
    weighted_labelings_direction(Y, p, n, T, dims[1], R, E)
    return value


# ------------------------------------------------------------------- entropy smoothing

_CUTOFF = -40.0     # exp(-40) < 5e-18: terms this far below a sum's max are skipped
_EXP_CUTOFF = np.exp(_CUTOFF)


_SMALLEST_SUM = 1e-280   # a factored column sum at least this holds every term to rounding


@inner
def _transition_factors(w, ws, dims, inv, factors, column_max):
    """``column_max[b] = max_a ws trans[a, b]`` and ``factors[a, b] = exp((ws trans[a, b] -
    column_max[b]) / mu)`` (``inv = 1 / mu``) of the transition block of ``w``."""
    F, L = dims
    trans = w[F * L:F * L + L * L].reshape((L, L))
    for b in range(L):
        column_max[b] = ws * trans[0, b]
    for a in range(1, L):
        for b in range(L):
            v = ws * trans[a, b]
            column_max[b] = v if v > column_max[b] else column_max[b]
    for a in range(L):
        for b in range(L):
            factors[a, b] = np.exp((ws * trans[a, b] - column_max[b]) * inv)


@inner
def _exact_column(w, ws, off_trans, L, prev, b, inv, mu, Pt, St):
    """Column ``b`` of a forward step shifted by its own max (:func:`exp_oracle`, where the
    factored terms underflow): writes ``Pt[:, b]`` and ``St[b]``, returns
    ``M + mu log St[b]``."""
    M = prev[0] + ws * w[off_trans + b]
    for a in range(1, L):
        v = prev[a] + ws * w[off_trans + a * L + b]
        M = v if v > M else M
    St[b] = 0.0
    for a in range(L):
        x = (prev[a] + ws * w[off_trans + a * L + b] - M) * inv
        e = np.exp(x) if x > _CUTOFF else 0.0
        Pt[a, b] = e
        St[b] += e
    return M + mu * np.log(St[b])


@inner
def exp_oracle(w, ws, dims, U, T, gold, unit, mu, work, R, E):
    """Exp oracle (paper Section 2, Definition 1; Table 1 "Sum-Product"): the entropy-
    smoothed max ``h_{-mu H} = mu log sum_y exp(s(y) / mu)`` of the (loss-augmented) scores
    ``s(y)`` of :func:`ssvmbench.tasks.chain.viterbi`, and its gradient
    ``E_{p_mu}[phi(x, y)]``, ``p_mu(y) ~ exp(s(y) / mu)``, written to ``(R, E)``:
    ``R[t]`` the token marginals, ``E`` the expected bigram counts summed over positions,
    dense (all ``L^2`` keys in order).

    Forward pass in score units: ``alpha[t, b] = A + C_b + mu log S[t, b]`` with
    ``S[t, b] = sum_a P[t, a, b]``, ``P[t, a, b] = exp((alpha[t-1, a] - A) / mu)
    exp((trans[a, b] - C_b) / mu)``, ``A = max_a alpha[t-1, a]`` and ``C_b = max_a
    trans[a, b]``: both factors ``<= 1`` (no overflow for any ``mu > 0``), ``L``
    exponentials a token and ``L^2`` a call (the transitions' factors, in ``P[0]``, their
    column maxima in ``S[0]``) instead of ``L^2`` a token; terms below ``exp(-40)`` of their
    column's sum are then dropped (below rounding; the marginals keep their exact zeros). A
    column whose sum is below ``1e-280`` (its terms' factors underflowed) is taken exactly,
    shifted by its own max ``M = max_a alpha[t-1, a] + trans[a, b]`` (terms below
    ``exp(-40)`` of it skipped). The backward pass needs no backward messages: it
    propagates the marginals with the conditionals ``p(y_{t-1} = a | y_t = b) = P[t, a, b]
    / S[t, b]`` (each column in its own scale). ``work`` from
    :func:`~ssvmbench.tasks.scratch.exp_buffers`. One call is one oracle call. The value lies in
    ``[max s, max s + mu log L^T]``.
    """
    F, L = dims
    off_trans = F * L
    off_first = off_trans + L * L
    off_last = off_first + L
    alpha, S, P, M = work
    inv = 1.0 / mu
    first_scores(w, ws, dims, U, T, gold, unit, alpha[0])
    factors, column_max = P[0], S[0]        # (unused by the passes, which start at t = 1)
    if T > 1:
        _transition_factors(w, ws, dims, inv, factors, column_max)
    for t in range(1, T):
        St = S[t]
        Pt = P[t]
        prev = alpha[t - 1]
        A = prev[0]
        for a in range(1, L):
            A = prev[a] if prev[a] > A else A
        for b in range(L):
            St[b] = 0.0
        for a in range(L):
            e = np.exp((prev[a] - A) * inv)
            row = factors[a]
            for b in range(L):
                x = e * row[b]
                Pt[a, b] = x
                St[b] += x
        for b in range(L):
            if St[b] >= _SMALLEST_SUM:
                alpha[t, b] = A + column_max[b] + mu * np.log(St[b]) + U[t, b]
                M[b] = St[b] * _EXP_CUTOFF
            else:
                alpha[t, b] = _exact_column(w, ws, off_trans, L, prev, b, inv, mu, Pt, St) + \
                    U[t, b]
                M[b] = 0.0
            if b != gold[t]:
                alpha[t, b] += unit
        for a in range(L):                # terms below exp(-40) of their sum: exact zeros
            for b in range(L):
                if Pt[a, b] < M[b]:
                    Pt[a, b] = 0.0
    top = -np.inf
    for l in range(L):
        v = alpha[T - 1, l] + ws * w[off_last + l]
        top = v if v > top else top
    s = 0.0
    for l in range(L):
        x = (alpha[T - 1, l] + ws * w[off_last + l] - top) * inv
        s += np.exp(x) if x > _CUTOFF else 0.0
    value = top + mu * np.log(s)
    for l in range(L):
        x = (alpha[T - 1, l] + ws * w[off_last + l] - value) * inv
        R[T - 1, l] = np.exp(x) if x > _CUTOFF else 0.0
    keys, vals, size = E[0], E[1], E[2]
    for q in range(L * L):
        keys[q] = q
        vals[q] = 0.0
    size[0] = L * L
    for t in range(T - 1, 0, -1):
        for b in range(L):
            M[b] = R[t, b] / S[t, b]
        Pt = P[t]
        for a in range(L):
            acc = 0.0
            for b in range(L):
                pr = M[b] * Pt[a, b]
                vals[a * L + b] += pr
                acc += pr
            R[t - 1, a] = acc
    return value
