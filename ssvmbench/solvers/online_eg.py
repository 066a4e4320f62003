"""Online exponentiated gradient (Collins, Globerson, Koo, Carreras & Bartlett 2008) on the
structural SVM dual, as run in BCFW Section 6 / Appendix F. Chain tasks only: the exp oracle
(marginals) is intractable for matchings.

Each dual block ``alpha_i`` is kept in log parameterization, ``alpha_i(y) ~ exp(theta_i .
parts(y))`` with a potential per token and label, per label bigram, first and last label
(the gradient of the dual is the same for every position, so one bigram table per example
suffices). A visit of example ``i`` moves ``theta_i += eta_i g_i``, with ``g_i`` the parts of
the loss-augmented scores ``L_i(y) + <w, phi(x_i, y)>`` (the gradient of the dual in
``alpha_i``, up to a constant), and takes the new marginals from the exp oracle
(:func:`ssvmbench.tasks.smoothing.exp_oracle` on the potentials, mu = 1): one oracle call per
trial. Backtracking (Appendix F, from Collins et al.'s egstra): ``eta_i`` is halved until the
dual objective increases, at most 2 times in the first pass and 5 afterwards (the block is
left unchanged if no trial increases it), then multiplied by 1.05; ``eta_i`` starts at 0.5.
``alpha_i`` starts uniform, so ``w`` starts at ``1/(lam n) sum_i (phi(y_i) - E_unif phi)``.
The dual ``b^T alpha - lam/2 ||w||^2`` makes the gap a certificate. Memory: per example an
``L x L`` table of potentials and one of bigram marginals (OCR: 2 x 34 MB).
"""

import numba as nb
import numpy as np

from ssvmbench.errors import UserError
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.chain import add_direction, buffers, direction_dot, direction_sqnorm, \
    loss_unit, unary_scores
from ssvmbench.tasks.smoothing import exp_buffers, exp_oracle
from ssvmbench.tasks.transitions import scratch


@nb.njit(cache=True)
def _block_loss(gold, R, T, unit):
    """``E_alpha_i L_i(y)`` from the token marginals ``R``."""
    s = 0.0
    for t in range(T):
        s += unit * (1.0 - R[t, gold[t]])
    return s


@nb.njit(cache=True)
def init_uniform(w, mu, pairs, dims, data, normalized, lam):
    """``alpha_i`` uniform: marginals ``1/L`` per token, ``(T - 1)/L^2`` per bigram; sets
    ``w = 1/(lam n) sum_i (phi(y_i) - E phi)`` and returns ``b^T alpha``."""
    offsets, labels = data[0], data[1]
    n = len(offsets) - 1
    L = dims[1]
    max_len = np.max(offsets[1:] - offsets[:-1])
    _, _, _, R, E = buffers(max_len, L)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    ell = 0.0
    for i in range(n):
        t0, T = offsets[i], offsets[i + 1] - offsets[i]
        mu[t0:t0 + T, :] = 1.0 / L
        pairs[i, :] = (T - 1) / (L * L)
        for t in range(T):
            R[t, :] = -1.0 / L
            R[t, labels[t0 + t]] += 1.0
        for q in range(L * L):
            E[0][q] = q
            E[1][q] = -pairs[i, q]
        for t in range(1, T):
            E[1][labels[t0 + t - 1] * L + labels[t0 + t]] += 1.0
        E[2][0] = L * L
        add_direction(w, 1.0 / (lam * n), dims, data, t0, T, R, E, no_U, no_C)
        ell += _block_loss(labels[t0:t0 + T], mu[t0:t0 + T], T, loss_unit(normalized, T)) / n
    return ell


@nb.njit(cache=True)
def eg_steps(w, ell, theta, theta_pairs, mu, pairs, eta, dims, data, normalized, order, lam,
             max_halvings, max_len):
    """Visits ``order``; returns the exp-oracle calls made (one per trial step)."""
    offsets, labels = data[0], data[1]
    n = len(offsets) - 1
    F, L = dims
    off_trans = F * L
    U, _, _, R, E = buffers(max_len, L)
    D = np.empty((max_len, L))
    Ed = scratch(max_len, L)
    V = np.empty((max_len, L))
    v = np.empty(L * L + 2 * L)
    work = exp_buffers(max_len, L)
    x_dense = np.zeros(F)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    coef = 1.0 / (lam * n)
    calls = 0
    for i in order:
        t0, T = offsets[i], offsets[i + 1] - offsets[i]
        gold = labels[t0:t0 + T]
        unit = loss_unit(normalized, T)
        unary_scores(w, 1.0, dims, data, i, U)
        old_loss = _block_loss(gold, mu[t0:t0 + T], T, unit)
        step = eta[i]
        for trial in range(max_halvings + 1):
            for t in range(T):
                for l in range(L):
                    g = U[t, l] + (unit if l != gold[t] else 0.0)
                    V[t, l] = theta[t0 + t, l] + step * g
            for q in range(L * L + 2 * L):
                v[q] = theta_pairs[i, q] + step * w[off_trans + q]
            exp_oracle(v, 1.0, (0, L), V, T, gold, 0.0, 1.0, work, R, E)
            calls += 1
            for t in range(T):                    # direction phi(alpha_new) - phi(alpha_old)
                for l in range(L):
                    D[t, l] = R[t, l] - mu[t0 + t, l]
            for q in range(L * L):
                Ed[0][q] = q
                Ed[1][q] = E[1][q] - pairs[i, q]
            Ed[2][0] = L * L
            d_ell = (_block_loss(gold, R, T, unit) - old_loss) / n
            dot = -coef * direction_dot(w, dims, data, U, T, D, Ed)
            sq = coef * coef * direction_sqnorm(dims, data, t0, T, D, Ed, x_dense)
            if d_ell - lam * (dot + 0.5 * sq) > 0.0:       # the dual increases: accept
                add_direction(w, -coef, dims, data, t0, T, D, Ed, no_U, no_C)
                ell[0] += d_ell
                mu[t0:t0 + T, :] = R[:T, :]
                pairs[i, :] = E[1][:L * L]
                theta[t0:t0 + T, :] = V[:T, :]
                theta_pairs[i, :] = v
                break
            step *= 0.5
        eta[i] = 1.05 * step
    return calls


class OnlineEG(Solver):
    name = "online_eg"
    parts = "chain"         # its steps read and write the chain's token and bigram parts
    default_iterates = ("raw",)
    averages_iterates = False
    kernel_oracles = False   # its oracle is exp_oracle on the dual's own potentials
    numbers = {"eta0": 0.5}
    options = {"sampling": ("permutation", "uniform")}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        if not self.opts["eta0"] > 0:
            raise UserError(f"solver.eta0={self.opts['eta0']} must be > 0")
        L = task.n_labels
        self.w = np.zeros(task.d)
        self.mu = np.empty((task.n_rows, L))
        self.pairs = np.empty((task.n, L * L))
        self.theta = np.zeros((task.n_rows, L))
        self.theta_pairs = np.zeros((task.n, L * L + 2 * L))
        self.eta = np.full(task.n, float(self.opts["eta0"]))
        self.ell = np.array([init_uniform(self.w, self.mu, self.pairs, task.dims, task.data,
                                          task.normalized, self.lam)])
        self.visits = 0

    def advance(self, budget):
        t = self.task
        order = self.next_indices(max(1, budget // 2))
        first_pass = self.visits < t.n
        self.visits += len(order)
        return eg_steps(self.w, self.ell, self.theta, self.theta_pairs, self.mu, self.pairs,
                        self.eta, t.dims, t.data, t.normalized, order, self.lam,
                        2 if first_pass else 5, t.max_len)

    def state(self):
        return 1.0, self.w, self.ell[0]
