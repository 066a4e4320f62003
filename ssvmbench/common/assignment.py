"""Best and K best partial matchings of a bipartite graph by assignment problems, solved with
scipy's ``linear_sum_assignment`` (Crouse 2016; a maintained solver, not a hand-written one).

A partial matching ``M`` of an ``m x m'`` bipartite graph with edge scores ``Z`` (each node
matched at most once, unmatched nodes allowed) has score ``sum_{(j, k) in M} Z[j, k]``. These
are the inference problems of the matching task (BCFW Section 6 and Appendix F, after Taskar,
Lacoste-Julien & Jordan 2006: loss-augmented decoding of word alignments), called from
compiled code through ``numba.objmode`` (:mod:`ssvmbench.tasks.matching`), and they build
the alignment data's training targets (:mod:`ssvmbench.data.alignment`); a module of its
own so that data modules need not import tasks.
"""

import heapq

import numpy as np


def best_partial_matching(Z):
    """``(rows, cols)`` of a best partial matching for the scores ``Z``.

    It is the assignment on ``max(Z, 0)`` with its non-positive edges dropped. Proof: any
    partial matching ``M`` has ``score(M) <= sum_M max(Z, 0)``, and ``M`` extends to a full
    (``min(m, m')``-edge) assignment ``A'`` with ``sum_{A'} max(Z, 0)`` no smaller (entries
    are ``>= 0``); the optimal assignment ``A`` of ``max(Z, 0)`` is at least that, and
    keeping its edges with ``Z > 0`` gives a matching of score ``sum_A max(Z, 0) >= score(M)``.
    """
    rows, cols = _assignment(np.maximum(Z, 0.0))
    keep = Z[rows, cols] > 0.0
    return rows[keep], cols[keep]


def top_partial_matchings(Z, K):
    """The ``K`` best distinct partial matchings for ``Z`` (fewer if there are fewer), best
    first, as ``[(score, rows, cols)]``: Murty's algorithm (Murty 1968; the top-K oracle
    for matchings of Casimir Table 1, which cites BMMF for the same output).

    Partial matchings of the ``m`` rows (the shorter side) are exactly the assignments of
    every row to a column of ``[Z | N]``, ``N`` the ``m x m`` "unmatched" block (row ``j``
    may take only its own null column ``m' + j``, score 0), so Murty's partition of the
    assignments is a partition of the partial matchings. Each subproblem forces some
    ``(row, column)`` pairs in (rows and columns removed) and others out (entries
    ``-inf``) and is one ``linear_sum_assignment`` call: at most ``1 + (K - 1) m`` calls.
    """
    swap = Z.shape[0] > Z.shape[1]
    S = Z.T if swap else Z
    m, m2 = S.shape
    full = np.full((m, m2 + m), -np.inf)
    full[:, :m2] = S
    full[np.arange(m), m2 + np.arange(m)] = 0.0
    score, assigned = _solve(full, [], ())      # feasible: every row may stay unmatched
    heap = [(-score, 0, assigned, [], ())]
    count, found = 1, []
    while heap and len(found) < K:
        neg, _, assigned, forced, banned = heapq.heappop(heap)
        found.append((-neg, assigned))
        if len(found) == K:
            break
        fixed = list(forced)
        taken = {j for j, _ in forced}
        for j in range(m):
            if j in taken:
                continue
            child = _solve(full, fixed, banned + ((j, assigned[j]),))
            if child is not None:
                heapq.heappush(heap, (-child[0], count, child[1], list(fixed),
                                      banned + ((j, assigned[j]),)))
                count += 1
            fixed.append((j, assigned[j]))
    out = []
    for score, assigned in found:
        rows = np.flatnonzero(assigned < m2)
        cols = assigned[rows]
        out.append((score, cols, rows) if swap else (score, rows, cols))
    return out


def _solve(full, forced, banned):
    """Best assignment of every row of ``full`` with the pairs ``forced`` in and ``banned``
    out: ``(score, column of each row)``, or ``None`` if infeasible."""
    m, width = full.shape
    free_rows, free_cols = np.ones(m, dtype=bool), np.ones(width, dtype=bool)
    assigned = np.full(m, -1)
    score = 0.0
    for j, c in forced:
        free_rows[j] = free_cols[c] = False
        assigned[j] = c
        score += full[j, c]
    sub = full.copy()
    for j, c in banned:
        sub[j, c] = -np.inf
    part = sub[free_rows][:, free_cols]
    try:
        r, c = _assignment(part)
    except ValueError:                           # every completion uses a banned pair
        return None
    assigned[np.flatnonzero(free_rows)[r]] = np.flatnonzero(free_cols)[c]
    return score + part[r, c].sum(), assigned


def _assignment(scores):
    """scipy's ``linear_sum_assignment(scores, maximize=True)``, imported when first used:
    importing ``scipy.optimize`` takes 0.3 s, which every command registering the built-in
    tasks paid, and a cold start's second process before it could compile."""
    from scipy.optimize import linear_sum_assignment
    return linear_sum_assignment(scores, maximize=True)
