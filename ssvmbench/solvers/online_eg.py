"""Online exponentiated gradient (Collins, Globerson, Koo, Carreras & Bartlett 2008) on the
structural SVM dual, as run in BCFW Section 6 / Appendix F. It runs on the tasks that declare
the marginal kernels (:data:`~ssvmbench.tasks.base.MARGINAL_KERNELS`; the chain's: marginals
are intractable for matchings).

Each dual block ``alpha_i`` is kept in log parameterization, ``alpha_i(y) ~ exp(theta_i .
parts(y))`` with a potential per token and label, per label bigram, first and last label
(the gradient of the dual is the same for every position, so one bigram table per example
suffices). A visit of example ``i`` moves ``theta_i += eta_i g_i``, with ``g_i`` the parts of
the loss-augmented scores ``L_i(y) + <w, phi(x_i, y)>`` (the gradient of the dual in
``alpha_i``, up to a constant), and takes the new marginals from the task's
``part_marginals`` (the chain's: the exp oracle on the potentials, mu = 1): one oracle call
per trial. Backtracking (Appendix F, from Collins et al.'s egstra): ``eta_i`` is halved until
the dual objective increases, at most 2 times in the first pass and 5 afterwards (the block is
left unchanged if no trial increases it), then multiplied by 1.05; ``eta_i`` starts at 0.5.
``alpha_i`` starts uniform, so ``w`` starts at ``1/(lam n) sum_i (phi(y_i) - E_unif phi)``.
The dual ``b^T alpha - lam/2 ||w||^2`` makes the gap a certificate. Memory: per example an
``L x L`` table of potentials and one of bigram marginals (OCR: 2 x 34 MB).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.common.inner import inner
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.base import MARGINAL_KERNELS
from ssvmbench.tasks.kernels import (add_direction, direction_dot, direction_sqnorm, expected_loss,
                                     gold_marginals, marginals_scratch, part_marginals, part_scores,
                                     scores, scratch, store_marginals)


class Blocks(NamedTuple):
    """The dual blocks in log parameterization: potentials ``theta`` per row and label and
    ``theta_pairs`` per example, the marginals of ``alpha_i`` (``rows``, ``pairs``), each
    block's step ``eta``; ``w = A alpha`` and ``ell = [b^T alpha]``."""

    theta: np.ndarray
    theta_pairs: np.ndarray
    rows: np.ndarray
    pairs: np.ndarray
    eta: np.ndarray
    w: np.ndarray
    ell: np.ndarray


@nb.njit(cache=True, inline="always")
def _try(problem, blocks, i, t0, T, V, v, bufs, old_loss, accept_all):
    """Move block ``i`` to the marginals of the potentials ``(V, v)`` if the dual increases
    (or ``accept_all``): returns whether it moved. ``bufs``: :func:`_buffers`."""
    dims, data, lam = problem.dims, problem.data, problem.lam
    work, U, R, E, D, Ed, dense, no_U, no_C = bufs
    n = len(data[0]) - 1
    coef = 1.0 / (lam * n)
    rows = blocks.rows[t0:t0 + T]
    d_ell = (part_marginals(dims, data, problem.normalized, i, T, V, v, work, rows,
                            blocks.pairs[i], R, E, D, Ed) - old_loss) / n
    if not accept_all:
        dot = -coef * direction_dot(blocks.w, dims, data, U, T, D, Ed)
        sq = coef * coef * direction_sqnorm(dims, data, t0, T, D, Ed, dense)
        if not d_ell - lam * (dot + 0.5 * sq) > 0.0:
            return False
    add_direction(blocks.w, -coef, dims, data, t0, T, D, Ed, no_U, no_C)
    blocks.ell[0] += d_ell
    store_marginals(data, T, R, E, rows, blocks.pairs[i])
    blocks.theta[t0:t0 + T, :] = V[:T, :]
    blocks.theta_pairs[i, :] = v
    return True


@inner
def _buffers(dims, data, max_len):
    """Work arrays of a pass: the marginals' work, scores ``U``, marginals ``(R, E)``, a
    direction ``(D, Ed)``, the all-zero vector and an empty lazy-average record."""
    U, _, _, R, E, dense = scratch(dims, data, max_len)
    _, _, _, D, Ed, _ = scratch(dims, data, max_len)
    return (marginals_scratch(dims, data, max_len), U, R, E, D, Ed, dense, np.empty((0, 0)),
            np.empty(0))


@nb.njit(cache=True)
def init_uniform(problem, blocks, max_len):
    """``alpha_i`` uniform (the marginals at zero potentials), moved to from ``e_{y_i}``
    (``w = 0``): ``w = 1/(lam n) sum_i (phi(y_i) - E phi)`` and ``ell = sum_i E L_i / n``."""
    dims, data = problem.dims, problem.data
    n = len(data[0]) - 1
    bufs = _buffers(dims, data, max_len)
    V, v = np.zeros((max_len, dims[1])), np.zeros(blocks.theta_pairs.shape[1])
    for i in range(n):
        t0, T = data[0][i], data[0][i + 1] - data[0][i]
        gold_marginals(data, i, T, blocks.rows[t0:t0 + T], blocks.pairs[i])
        _try(problem, blocks, i, t0, T, V, v, bufs, 0.0, True)


@nb.njit(cache=True)
def eg_steps(problem, blocks, order, max_halvings, max_len):
    """Visits ``order``; returns the exp-oracle calls made (one per trial step)."""
    dims, data = problem.dims, problem.data
    bufs = _buffers(dims, data, max_len)
    U = bufs[1]
    G, V = np.empty((max_len, dims[1])), np.empty((max_len, dims[1]))
    g, v = np.empty(blocks.theta_pairs.shape[1]), np.empty(blocks.theta_pairs.shape[1])
    calls = 0
    for i in order:
        t0 = data[0][i]
        T = scores(blocks.w, 1.0, dims, data, i, U)
        part_scores(blocks.w, dims, data, problem.normalized, i, U, T, G, g)
        old_loss = expected_loss(data, problem.normalized, i, T, blocks.rows[t0:t0 + T])
        step = blocks.eta[i]
        for trial in range(max_halvings + 1):
            for t in range(T):
                for l in range(dims[1]):
                    V[t, l] = blocks.theta[t0 + t, l] + step * G[t, l]
            for q in range(len(v)):
                v[q] = blocks.theta_pairs[i, q] + step * g[q]
            calls += 1
            if _try(problem, blocks, i, t0, T, V, v, bufs, old_loss, False):
                break
            step *= 0.5
        blocks.eta[i] = 1.05 * step
    return calls


class OnlineEG(Solver):
    name = "online_eg"
    needs = ("scratch", "scores", "add_direction", "direction_dot",
             "direction_sqnorm") + MARGINAL_KERNELS
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
        n_potentials, n_marginals = task.marginal_sizes()
        self.blocks = Blocks(np.zeros((task.n_rows, L)), np.zeros((task.n, n_potentials)),
                             np.empty((task.n_rows, L)), np.empty((task.n, n_marginals)),
                             np.full(task.n, float(self.opts["eta0"])), np.zeros(task.d),
                             np.zeros(1))
        init_uniform(self.problem, self.blocks, task.max_len)
        self.visits = 0

    def advance(self, budget):
        t = self.task
        order = self.next_indices(max(1, budget // 2))
        first_pass = self.visits < t.n
        self.visits += len(order)
        return eg_steps(self.problem, self.blocks, order, 2 if first_pass else 5, t.max_len)

    def state(self):
        return 1.0, self.blocks.w, self.blocks.ell[0]
