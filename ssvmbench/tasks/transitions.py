"""Sparse label-bigram parts of chain directions and of the factored BCFW dual state.

The transition block of ``phi(x, y)`` (BCFW Section 6) is the ``L x L`` matrix of label
bigram counts of ``y``: at most ``T - 1`` non-zeros. The transition part ``E`` of a
direction and an example's dual block ``P_i = sum_y alpha_i(y) counts(y)`` are kept as
sorted sparse vectors over the keys ``a * L + b``, so memory and time follow the bigrams
actually used, not ``L^2`` per example (Brown: 92 labels and 48,242 sentences, where one
dense block per sentence would take 3.3 GB).

``E`` is the scratch tuple ``(keys, vals, size, work_keys, work_vals)`` of
:func:`scratch`: entries ``keys[:size[0]]`` (sorted, unique) with values ``vals``.
The blocks ``P_i`` live in one growable pool: example ``i`` owns
``pool_keys/pool_vals[start[i]:start[i] + length[i]]`` (sorted, unique), with room for
``cap[i]`` entries; a block that outgrows its room moves to the end of the pool.
"""

import numpy as np

from ssvmbench.common.inner import inner


@inner
def scratch(max_len, L):
    """An empty transition part ``E`` for sequences of up to ``max_len`` tokens."""
    return (np.empty(L * L + 2 * max_len, dtype=np.int64), np.empty(L * L + 2 * max_len),
            np.zeros(1, dtype=np.int64), np.empty(2 * max_len, dtype=np.int64),
            np.empty(2 * max_len))


@inner
def bigram_counts(y, T, L, keys, vals):
    """Sorted keys ``y[t-1] * L + y[t]`` of the bigrams of ``y[:T]`` with their counts,
    written to ``keys``/``vals``; returns their number."""
    n = 0
    last_key, last_pos = -1, 0       # the previous bigram (a label often repeats)
    for t in range(1, T):
        key = y[t - 1] * L + y[t]
        if key == last_key:
            vals[last_pos] += 1.0
            continue
        last_key = key
        pos = n
        for q in range(n):
            if keys[q] >= key:
                pos = q
                break
        last_pos = pos
        if pos < n and keys[pos] == key:
            vals[pos] += 1.0
            continue
        for q in range(n, pos, -1):
            keys[q] = keys[q - 1]
            vals[q] = vals[q - 1]
        keys[pos] = key
        vals[pos] = 1.0
        n += 1
    return n


@inner
def merge(ak, av, na, bk, bv, nb_, beta, out_k, out_v):
    """``out = a + beta * b`` over the union of the sorted keys; returns its length.
    Entries that cancel are kept, so the result's keys contain both inputs' keys."""
    i = j = n = 0
    while i < na or j < nb_:
        if j >= nb_ or (i < na and ak[i] < bk[j]):
            out_k[n] = ak[i]
            out_v[n] = av[i]
            i += 1
        elif i >= na or bk[j] < ak[i]:
            out_k[n] = bk[j]
            out_v[n] = beta * bv[j]
            j += 1
        else:
            out_k[n] = ak[i]
            out_v[n] = av[i] + beta * bv[j]
            i += 1
            j += 1
        n += 1
    return n


@inner
def add_sorted(keys, vals, n, bk, bv, nb_, beta):
    """``(keys, vals)[:n] += beta * (bk, bv)[:nb_]`` in place over the union of the sorted
    unique keys (merged from the back, so no second buffer); returns the new length."""
    i = j = m = 0
    while i < n or j < nb_:
        if j >= nb_ or (i < n and keys[i] < bk[j]):
            i += 1
        elif i >= n or bk[j] < keys[i]:
            j += 1
        else:
            i += 1
            j += 1
        m += 1
    i, j = n - 1, nb_ - 1
    for q in range(m - 1, -1, -1):         # q >= i throughout: unread entries stay intact
        if j < 0 or (i >= 0 and keys[i] > bk[j]):
            keys[q] = keys[i]
            vals[q] = vals[i]
            i -= 1
        elif i < 0 or bk[j] > keys[i]:
            keys[q] = bk[j]
            vals[q] = beta * bv[j]
            j -= 1
        else:
            keys[q] = keys[i]
            vals[q] = vals[i] + beta * bv[j]
            i -= 1
            j -= 1
    return m


@inner
def set_difference_of_labelings(E, plus, minus, T, L):
    """``E = counts(plus) - counts(minus)`` (the transition part of ``psi_i(y)``)."""
    keys, vals, size, wk, wv = E
    m = len(wk) // 2
    n_plus = bigram_counts(plus, T, L, wk[:m], wv[:m])
    n_minus = bigram_counts(minus, T, L, wk[m:], wv[m:])
    size[0] = merge(wk[:m], wv[:m], n_plus, wk[m:], wv[m:], n_minus, -1.0, keys, vals)


@inner
def set_labeling_minus_block(E, y, T, L, pool_keys, pool_vals, start, length):
    """``E = counts(y) - P_i`` for the block ``P_i`` at ``start`` of ``length`` entries;
    ``E``'s keys contain all of ``P_i``'s (needed by :func:`move_block`)."""
    keys, vals, size, wk, wv = E
    n_y = bigram_counts(y, T, L, wk, wv)
    end = start + length
    size[0] = merge(wk, wv, n_y, pool_keys[start:end], pool_vals[start:end], length, -1.0,
                    keys, vals)


@inner
def move_block(pool_keys, pool_vals, start, length, cap, used, i, E, gamma):
    """``P_i <- P_i + gamma E`` given ``E`` from :func:`set_labeling_minus_block` (its keys
    contain ``P_i``'s); entries that become exactly 0 (``gamma = 1``) are dropped.
    ``used[0]`` is the used length of the pool. Returns the pool arrays, reallocated when
    they had to grow."""
    keys, vals, size = E[0], E[1], E[2]
    ne = size[0]
    if ne > cap[i]:
        room = max(ne, 2 * cap[i])
        if used[0] + room > len(pool_keys):
            grown = max(2 * len(pool_keys), used[0] + room)
            new_keys = np.empty(grown, dtype=np.int64)
            new_vals = np.empty(grown)
            for q in range(used[0]):     # (a slice assignment compiles its error message)
                new_keys[q] = pool_keys[q]
                new_vals[q] = pool_vals[q]
            pool_keys, pool_vals = new_keys, new_vals
        s_old, s_new = start[i], used[0]
        for q in range(length[i]):
            pool_keys[s_new + q] = pool_keys[s_old + q]
            pool_vals[s_new + q] = pool_vals[s_old + q]
        start[i], cap[i] = s_new, room
        used[0] += room
    s = start[i]
    p = length[i] - 1
    for j in range(ne - 1, -1, -1):          # merge from the back, in place
        v = gamma * vals[j]
        if p >= 0 and pool_keys[s + p] == keys[j]:
            v += pool_vals[s + p]
            p -= 1
        pool_keys[s + j] = keys[j]
        pool_vals[s + j] = v
    m = 0
    for j in range(ne):
        if pool_vals[s + j] != 0.0:
            pool_keys[s + m] = pool_keys[s + j]
            pool_vals[s + m] = pool_vals[s + j]
            m += 1
    length[i] = m
    return pool_keys, pool_vals
