"""Sequential alternating proximal method (SAP) for the elastic-net structural SVM
(Balamurugan, Shevade, Ravindra Babu; Algorithm 2, Section IV).

In the objective ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (OP5 divided by ``C n``:
``lam = rho2/(C n)``, ``l1 = rho1/(C n)``) the scaled dual OP7 reads, with ``u = 1/n sum_i
sum_y alpha_i(y) psi_i(y)`` and ``b = beta/(C n)`` in the box ``[-l1, l1]^d``,

    max  D(alpha, b) = 1/n sum_i sum_y alpha_i(y) L_i(y) - 1/(2 lam) ||u - b||^2,
    w = (u - b) / lam                                                    (III.6)

(``D = -OP7 / n``; ``l1 = 0`` gives the L2 dual of BCFW). Visiting example ``i``
(Algorithm 2): the violator ``y^ = argmax_y g_i(y)``, ``g_i(y) = L_i(y) - <w, psi_i(y)>``
(IV.15, loss-augmented Viterbi, one oracle call) joins the active set ``V_i``; the alpha-SUB
(IV.13) over ``V_i`` is solved by SMO steps on the maximal violating pair, with the
cost-to-move ``mu`` (``solver.mu``); then the beta step (IV.14) with cost-to-move ``nu``
(``solver.nu``): ``b <- clip((u + kappa b) / (1 + kappa), -l1, l1)`` with ``kappa = nu rho2 C``,
on every coordinate. Costs-to-move are in OP7's units with ``rho1 + rho2 = 1`` (Section V);
the paper sets them to "small positive values". Coordinates that example ``i`` does not touch
keep ``u`` fixed, so their pending beta steps are applied lazily in closed form,
``b_k = clip(u + (b_0 - u) r^k)`` with ``r = kappa / (1 + kappa)`` (the unclipped iterates
move monotonically towards ``u``), and a step costs what the example touches. A visit catches
its rows up before reading ``w``, and leaves them there: from then on ``u`` is fixed again
until a visit that catches them up first, so the closed form from the visit's step also
covers the beta step after its own move.

``V_i`` holds at most ``solver.max_active`` labelings with ``alpha_i(y) > 0`` (entries that
reach zero are dropped, as ``V_i = {y : alpha_i(y) > 0}`` in Section IV-A; a violator that
finds a full set waits). The optimality measure ``zeta_i`` (IV.16) of the last visit of each
example is kept (``SAP.sets.zeta``). It runs on the tasks that declare the kernels of stored
labelings (:data:`~ssvmbench.tasks.base.ACTIVE_SET_KERNELS`; the chain's).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.common.inner import inner
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.base import ACTIVE_SET_KERNELS
from ssvmbench.tasks.kernels import (add_direction, add_direction_scores, decode, direction_gram,
                                     example_features, gram_scratch, labeling_direction,
                                     labeling_score, scores, scratch)


class SplitWeights(NamedTuple):
    """``w = (u - b) / lam`` (III.6) with its parts ``u`` and ``b``, the beta step each row of
    ``w[:F*L].reshape(F, L)`` has reached (``stamp``; the entry ``F`` for the tail after
    ``F*L``), ``powers[k] = r^k`` (:func:`beta_powers`) and the L1 weight ``l1``."""

    w: np.ndarray
    u: np.ndarray
    b: np.ndarray
    stamp: np.ndarray
    powers: np.ndarray
    l1: float


class ActiveSets(NamedTuple):
    """The dual blocks ``alpha_i`` on their active sets ``V_i``: ``count[i]`` stored labelings
    ``Y[k, rows of i]`` with weights ``alpha[i, k]`` and losses ``loss[i, k]``; ``zeta[i]``
    (IV.16) of the last visit; ``ell = [b^T alpha]``."""

    Y: np.ndarray
    alpha: np.ndarray
    loss: np.ndarray
    count: np.ndarray
    zeta: np.ndarray
    ell: np.ndarray


@nb.njit(cache=True, fastmath={"nnan", "ninf", "nsz"})
def _catch_up(lo, hi, row, x, step, lam):
    """Bring the coordinates ``lo:hi`` (one row of ``w``, with one ``stamp``) to beta step
    ``step`` (lazy closed form) and refresh their ``w``; beyond the table of powers ``r^k``
    is 0."""
    k = step - x.stamp[row]
    if k > 0:
        p = x.powers[k] if k < len(x.powers) else 0.0
        inv = 1.0 / lam
        w, u, b, l1 = x.w, x.u, x.b, x.l1
        for j in range(lo, hi):
            v = min(max(u[j] + (b[j] - u[j]) * p, -l1), l1)
            b[j] = v
            w[j] = (u[j] - v) * inv
        x.stamp[row] = step


@inner
def _catch_up_example(dims, data, i, x, step, lam):
    """:func:`_catch_up` on what example ``i`` touches: its feature rows and the tail."""
    F, L = dims
    for f in example_features(data, i):
        _catch_up(f * L, f * L + L, f, x, step, lam)
    _catch_up(F * L, len(x.w), F, x, step, lam)


def beta_powers(r):
    """``r^k`` for ``k = 0, 1, ...`` until it is negligible (``< 1e-300``, at most 10^6
    entries); the lazy beta steps look ``r^k`` up instead of calling ``pow``."""
    if r == 0.0:
        return np.array([1.0])
    count = min(int(np.log(1e-300) / np.log(r)) + 1, 10**6)
    return r ** np.arange(count, dtype=float)


@nb.njit(cache=True)
def sap_steps(problem, x, sets, step, order, mu, max_smo, max_len):
    """Algorithm 2 for the examples ``order`` (``x`` the :class:`SplitWeights`, ``sets`` the
    :class:`ActiveSets`); returns the new beta-step counter."""
    dims, data, lam = problem.dims, problem.data, problem.lam
    w, Y, alpha, loss, count = x.w, sets.Y, sets.alpha, sets.loss, sets.count
    n = len(data[0]) - 1
    cap = Y.shape[0]
    U, delta, y, R, E, dense = scratch(dims, data, max_len)
    gram = gram_scratch(dims, data, max_len)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    moved = np.zeros(cap)
    g = np.empty(cap)
    for i in order:
        t0 = data[0][i]
        _catch_up_example(dims, data, i, x, step, lam)
        T = scores(w, 1.0, dims, data, i, U)
        y_loss = decode(w, dims, data, problem.normalized, i, U, T, delta, y)   # (IV.15)
        top = y_loss + labeling_score(w, dims, data, i, U, T, y)
        gold_score = labeling_score(w, dims, data, i, U, T, Y[0, t0:t0 + T])
        low = np.inf
        known = False
        for k in range(count[i]):
            Yk = Y[k, t0:t0 + T]
            low = min(low, loss[i, k] + labeling_score(w, dims, data, i, U, T, Yk) - gold_score)
            same = True
            for t in range(T):
                if Yk[t] != y[t]:
                    same = False
                    break
            known = known or same
        sets.zeta[i] = (top - gold_score) - low                          # (IV.16)
        if not known and count[i] < cap:
            k = count[i]
            Y[k, t0:t0 + T] = y[:T]
            alpha[i, k] = 0.0
            loss[i, k] = y_loss
            count[i] += 1
        moved[:count[i]] = 0.0
        for _ in range(max_smo):                                         # alpha-SUB (IV.13)
            for k in range(count[i]):
                s = labeling_score(w, dims, data, i, U, T, Y[k, t0:t0 + T])
                g[k] = loss[i, k] + s - mu * moved[k]
            p, q = 0, -1
            for k in range(count[i]):
                if g[k] > g[p]:
                    p = k
            for k in range(count[i]):
                if k != p and alpha[i, k] > 0.0 and (q < 0 or g[k] < g[q]):
                    q = k
            if q < 0 or g[p] - g[q] <= 1e-12:
                break
            labeling_direction(data, i, T, Y[q, t0:t0 + T], Y[p, t0:t0 + T], R, E)
            sq = direction_gram(dims, data, t0, T, R, E, dense, gram)    # phi(y_q) - phi(y_p)
            t = min(alpha[i, q], (g[p] - g[q]) / (sq / (lam * n) + 2.0 * mu))
            alpha[i, p] += t
            alpha[i, q] -= t
            moved[p] += t
            moved[q] -= t
            sets.ell[0] += t * (loss[i, p] - loss[i, q]) / n
            add_direction(x.u, t / n, dims, data, t0, T, R, E, no_U, no_C)
            add_direction(w, t / (lam * n), dims, data, t0, T, R, E, no_U, no_C)
            add_direction_scores(U, t / (lam * n), data, T, R, E, gram)   # = scores of w
        k = 0
        while k < count[i]:                                  # V_i = {y : alpha_i(y) > 0}
            if alpha[i, k] <= 0.0:
                last = count[i] - 1
                Y[k, t0:t0 + T] = Y[last, t0:t0 + T]
                alpha[i, k], loss[i, k] = alpha[i, last], loss[i, last]
                alpha[i, last] = 0.0
                count[i] -= 1
            else:
                k += 1
        # the beta step (IV.14): on the rows the SMO moved too it is left to their next catch-up,
        # since u stays as it is now until then (the closed form from this step covers it)
        step += 1
    return step


@nb.njit(cache=True)
def catch_up_all(dims, x, step, lam):
    """Apply every pending beta step (before ``w`` is read as a whole)."""
    F, L = dims
    for f in range(F):
        _catch_up(f * L, f * L + L, f, x, step, lam)
    _catch_up(F * L, len(x.w), F, x, step, lam)


class SAP(Solver):
    name = "sap"
    elastic_net = True
    shows = ("nnz", "l1", "rho1")   # a sparse model: its #NZ and the elastic net's weights
    needs = ("scratch", "scores", "decode", "add_direction") + ACTIVE_SET_KERNELS
    default_iterates = ("raw",)
    averages_iterates = False   # logs its raw iterate only
    options = {"sampling": ("sequential", "permutation", "uniform")}
    numbers = {"mu": 1e-3, "nu": 1e-3, "max_smo": 3, "max_active": 16, "theta": None}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        mu, nu = self.opts["mu"], self.opts["nu"]
        max_smo, cap = self.opts["max_smo"], self.opts["max_active"]
        if not (mu >= 0 and nu >= 0):
            raise UserError(f"solver.mu={mu}, solver.nu={nu}: costs-to-move must be >= 0")
        if not (max_smo >= 1 and max_smo.is_integer() and cap >= 2 and cap.is_integer()):
            raise UserError(f"solver.max_smo={max_smo} (>= 1) and solver.max_active={cap} "
                            "(>= 2) must be whole numbers")
        n, d = task.n, task.d
        C = 1.0 / (n * (self.lam + self.l1))           # OP5's scale with rho1 + rho2 = 1
        rho2 = self.lam / (self.lam + self.l1)
        kappa = nu * rho2 * C
        self.max_smo = int(max_smo)
        self.x = SplitWeights(np.zeros(d), np.zeros(d), np.zeros(d),
                              np.zeros(task.dims[0] + 1, dtype=np.int64),
                              beta_powers(kappa / (1.0 + kappa)), self.l1)
        self.step = 0
        Y = np.zeros((int(cap), task.n_rows), dtype=np.int32)
        Y[0] = task.gold_labelings()
        alpha = np.zeros((n, int(cap)))
        alpha[:, 0] = 1.0
        self.sets = ActiveSets(Y, alpha, np.zeros((n, int(cap))), np.ones(n, dtype=np.int64),
                               np.full(n, np.inf), np.zeros(1))

    def next_indices(self, budget):
        """Examples in order 1..n (Algorithm 2), unless ``solver.sampling`` (or
        ``+solver.order``) says otherwise."""
        if self.opts["sampling"] != "sequential" or self._replay is not None:
            return super().next_indices(budget)
        start = self.oracle_calls % self.task.n
        return np.arange(start, min(start + budget, self.task.n))

    def advance(self, budget):
        order = self.next_indices(budget)
        self.step = sap_steps(self.problem, self.x, self.sets, self.step, order,
                              self.opts["mu"], self.max_smo, self.task.max_len)
        theta = self.opts["theta"]                 # Algorithm 2: stop when all zeta_i < theta
        self.converged = theta is not None and bool(np.all(self.sets.zeta < theta))
        return len(order)

    def state(self):
        catch_up_all(self.task.dims, self.x, self.step, self.lam)
        return 1.0, self.x.w, self.sets.ell[0]
