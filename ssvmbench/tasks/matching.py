"""Bipartite-matching task: word alignment (BCFW Section 6 and Appendix F, in the setting of
Taskar, Lacoste-Julien & Jordan 2006).

The output ``y`` of a sentence pair is a partial matching between its English and French
words (each word aligned at most once; unaligned words allowed), written as edge indicators
``y_e``, ``e = (j, k)``. Joint feature map ``phi(x, y) = sum_{e in y} f_e`` (the edge
features of :mod:`ssvmbench.data.alignment_features`), so ``w`` has one weight per feature.
Task loss: the asymmetric Hamming loss of BCFW Appendix F against the training target
``y_i``, precision errors (an edge not in ``y_i``) cost ``c_p = 1`` and recall errors (a
missed edge of ``y_i``) ``c_r = 3``: ``L(y_i, y) = c_r |y_i| + sum_e y_e l_e`` with
``l_e = c_p`` off the target and ``-c_r`` on it. Both ``phi`` and ``L`` are linear in the edge
indicators, so the max oracle (BCFW eq. 2) is a best partial matching for the edge scores
``z_e = <w, f_e> + l_e`` (an assignment problem, :mod:`ssvmbench.common.assignment`), the
top-K oracle (Casimir Definition 1, ``l2^2`` smoothing over the K best) uses the K best
matchings by Murty's algorithm (Casimir Table 1), and the exp oracle is intractable
(marginals over matchings are #P-hard: Casimir Table 1, BCFW Section 6) and refused.

Kernels (signatures of :mod:`ssvmbench.tasks.kernels`): a score row is an edge with one
"label", ``U[e, 0] = <w, f_e>`` and a direction ``sum_e R[e, 0] f_e``, exactly as a candidate
box of :mod:`ssvmbench.tasks.boxes`, whose edge-wise kernels serve here too. A labelling ``y``
is the int32 vector of edge indicators. The BCFW dual block of a pair is its edge marginals
``mu[t0 + e, 0] = sum_y alpha_i(y) y_e``, a point of the matching polytope: ``phi`` and ``L``
are linear in ``y``, so ``w = A alpha`` and ``b^T alpha`` depend on ``alpha_i`` only through it.
The assignment solver is scipy, called in ``numba.objmode`` blocks. These compile into the
solvers' ``cache=True`` kernels and are cached with them: numba stores the object-mode block
as a pickled dispatcher in the compiled code (``numba.core.pythonapi.ObjModeUtils``), so a
later process loads the solver kernels from the cache (tested) and the block re-imports the
Python functions below.
"""

import itertools
import math
from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.assignment import best_partial_matching, top_partial_matchings
from ssvmbench.common.inner import inner
from ssvmbench.data.alignment import synthetic_alignment
from ssvmbench.data.matchings import MatchingDataset
from ssvmbench.tasks import boxes, chain, smoothing
from ssvmbench.tasks.base import Task
from ssvmbench.tasks.metrics import alignment_error_rate

PRECISION_COST, RECALL_COST = 1.0, 3.0      # BCFW Appendix F


class MatchingData(NamedTuple):
    """The arrays the kernels take: edge ``offsets`` (n+1), sentence lengths ``shapes``
    (n x 2), edge ``features`` (N x F), ``target`` edge indicators (N), per-edge loss
    ``on_loss`` (N, ``l_e``), ``base`` (n, ``c_r |y_i|``, the loss of the empty matching)
    and the oracle ``calls`` made on them (see :class:`~ssvmbench.tasks.base.Task`)."""

    offsets: np.ndarray
    shapes: np.ndarray
    features: np.ndarray
    target: np.ndarray
    on_loss: np.ndarray
    base: np.ndarray
    calls: np.ndarray


class MatchingTask(Task):
    """One split of a word-alignment dataset in the form the kernels take (attributes as
    :class:`~ssvmbench.tasks.chain_task.ChainTask`: a "row" is an edge, one "label")."""

    kind = "matching"
    chain_directions = True
    dataset_type = MatchingDataset
    data_type = MatchingData            # kernels: declared below their definitions
    LOSSES = ("asymmetric_hamming",)
    oracles = ("max", "topk")   # exp: intractable for matchings (Casimir Table 1)

    def __init__(self, ds: MatchingDataset, loss="asymmetric_hamming"):
        self.dataset = ds
        self.loss = loss
        target = ds.target.astype(float)
        self.data = MatchingData(ds.offsets, ds.shapes,
                                 np.ascontiguousarray(ds.features, dtype=float), target,
                                 np.where(ds.target, -RECALL_COST, PRECISION_COST),
                                 RECALL_COST * np.add.reduceat(target, ds.offsets[:-1]),
                                 np.zeros(1, dtype=np.int64))
        self.normalized = False
        self.dims = (ds.n_features, 1)
        self.n = ds.n
        self.n_rows = ds.n_edges
        self.n_labels = 1
        self.d = ds.n_features
        self.dense_entries = np.zeros(0, dtype=np.int64)
        self.max_len = int(np.diff(ds.offsets).max())

    def evaluate(self, w, with_hinge=True):
        """``(mean hinge, AER of the predictions, predictions)``; the predictions are the
        best partial matchings (edge indicators) and the AER (BCFW Appendix F's test error)
        is computed over the split against the Sure and Possible links."""
        predicted = np.zeros(self.n_rows, dtype=np.int32)
        hinge = evaluate(w, self.data, with_hinge, self.max_len, predicted)
        predicted = predicted.astype(bool)
        ds = self.dataset
        return hinge, alignment_error_rate(predicted, ds.sure, ds.possible), predicted

    @classmethod
    def tiny(cls):
        return cls(synthetic_alignment(n_train=8, n_test=1, seed=0).train, cls.LOSSES[0])

    def labelings(self, i, limit):
        """Every partial matching of pair ``i`` (``m x m'`` edges) as edge indicators."""
        m, m2 = (int(k) for k in self.data.shapes[i])
        count = sum(math.comb(m, r) * math.perm(m2, r) for r in range(min(m, m2) + 1))
        if count > limit:
            return None
        out = []
        for r in range(min(m, m2) + 1):
            for rows in itertools.combinations(range(m), r):
                for cols in itertools.permutations(range(m2), r):
                    y = np.zeros(m * m2, dtype=np.int32)
                    y[[a * m2 + b for a, b in zip(rows, cols)]] = 1
                    out.append(y)
        return out


# --------------------------------------------------------- assignment solver (object mode)


def _best_into(Z, y):
    """Object-mode body of :func:`best_matching`."""
    rows, cols = best_partial_matching(Z)
    y[:Z.size] = 0
    y[rows * Z.shape[1] + cols] = 1
    return float(Z[rows, cols].sum())


def _top_into(Z, K, Y, z):
    """Object-mode body of :func:`top_matchings`."""
    found = top_partial_matchings(Z, K)
    for k, (score, rows, cols) in enumerate(found):
        Y[k, :Z.size] = 0
        Y[k, rows * Z.shape[1] + cols] = 1
        z[k] = score
    return len(found)


@inner
def best_matching(Z, y):
    """``y[:m m']`` = edge indicators of a best partial matching for the ``m x m'`` scores
    ``Z`` (scipy, in object mode); returns its score."""
    with nb.objmode(score="float64"):
        score = _best_into(Z, y)
    return score


@inner
def top_matchings(Z, K, Y, z):
    """The ``n <= K`` best partial matchings for ``Z`` (Murty, in object mode): indicators
    in ``Y[:n, :m m']``, scores (decreasing) in ``z[:n]``; returns ``n``."""
    with nb.objmode(n="int64"):
        n = _top_into(Z, K, Y, z)
    return n


@inner
def edge_matrix(U, data, i, T, loss):
    """``Z[j, k] = U[e, 0]`` (plus ``l_e`` if ``loss``) for the edges ``e = j m' + k`` of
    pair ``i``."""
    t0 = data.offsets[i]
    m2 = data.shapes[i, 1]
    Z = np.empty((data.shapes[i, 0], m2))
    for e in range(T):
        Z[e // m2, e % m2] = U[e, 0] + (data.on_loss[t0 + e] if loss else 0.0)
    return Z


@inner
def target_score(U, data, t0, T):
    """``<w, phi(x_i, y_i)>`` from the edge scores ``U``."""
    s = 0.0
    for e in range(T):
        s += data.target[t0 + e] * U[e, 0]
    return s


# ----------------------------------------------------------------------------- kernels


@inner
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """Value of the (smoothed) hinge ``f_i`` at ``ws * w`` (``U``: its edge scores) and its
    gradient ``sum_y p(y) phi(y) - phi(y_i)`` written to ``R`` (Casimir Definition 1).
    ``kind`` 0 max (``y`` = the loss-augmented best matching), 1 top-K (``l2^2`` smoothing of
    the K best matchings, kept in the top-K buffers ``bufs[1]``); 2 (exp) is refused before
    a solver starts (``MatchingTask.oracles``, checked by the solver base class)."""
    t0 = data.offsets[i]
    E[2][0] = 0
    Z = edge_matrix(U, data, i, T, True)
    if kind == 0:
        top = best_matching(Z, y)
        for e in range(T):
            R[e, 0] = y[e] - data.target[t0 + e]
    elif kind == 1:
        _, Y, zk, p = bufs[1]
        n = top_matchings(Z, K, Y, zk)
        top = smoothing.l2_smoothed_max(zk, n, mu, p)
        for e in range(T):
            R[e, 0] = -data.target[t0 + e]
        for k in range(n):
            if p[k] > 0.0:
                for e in range(T):
                    R[e, 0] += p[k] * Y[k, e]
    else:
        raise ValueError("the exp oracle is intractable for matchings")
    return top + data.base[i] - target_score(U, data, t0, T)


@inner
def task_loss(data, i, y, T):
    """The asymmetric Hamming loss ``L(y_i, y) = c_r |y_i| + sum_e y_e l_e`` of the edge
    indicators ``y[:T]`` of pair ``i``."""
    t0 = data.offsets[i]
    loss = data.base[i]
    for e in range(T):
        loss += y[e] * data.on_loss[t0 + e]
    return loss


@inner
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L_i(y) - <w, phi(y_i) - phi(y)>`` for the edge indicators ``y[:T]`` of pair ``i``,
    read from the features of the edges where ``y`` differs from ``y_i`` only."""
    t0 = data.offsets[i]
    X = data.features
    s = 0.0
    for e in range(T):
        diff = y[e] - data.target[t0 + e]
        if diff != 0.0:
            row = X[t0 + e]
            for f in range(len(row)):
                s += diff * w[f] * row[f]
    return task_loss(data, i, y, T) + s


@inner
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(y) - phi(y_i))`` for the edge indicators ``y[:T]`` of pair ``i``,
    written from the edges where ``y`` differs from ``y_i`` only."""
    t0 = data.offsets[i]
    X = data.features
    for e in range(T):
        diff = y[e] - data.target[t0 + e]
        if diff != 0.0:
            row = X[t0 + e]
            for f in range(len(row)):
                g[f] += coef * diff * row[f]


@inner
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Max oracle for BCFW: the loss-augmented best matching (BCFW eq. 2) written to ``y``
    (edge indicators); returns its loss ``L(y_i, y)``."""
    best_matching(edge_matrix(U, data, i, T, True), y)
    return task_loss(data, i, y, T)


@inner
def dual_residual(mu, blocks, data, i, t0, y, T, R, E):
    """``(R, E)`` of ``phi(y) - sum_y' alpha_i(y') phi(y')`` (edge marginals ``mu``)."""
    for e in range(T):
        R[e, 0] = y[e] - mu[t0 + e, 0]
    E[2][0] = 0


@nb.njit(cache=True)
def init_marginals(data, mu, Psum):
    """``alpha_i = e_{y_i}``: edge marginals = the target (BCFW Algorithm 4 start)."""
    mu[:, 0] = data.target
    Psum[:] = 0.0
    n = len(data.base)
    none = np.zeros(n, dtype=np.int64)
    return (np.zeros(0, dtype=np.int64), np.zeros(0), none, none.copy(), none.copy(),
            np.zeros(1, dtype=np.int64))


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar = 1/(lam n) sum_i sum_e (y_i,e - mu_bar_e) f_e`` for the averaged edge
    marginals ``mu_bar = (c alpha - U) / s`` (BCFW Section 3)."""
    X = data.features
    F = X.shape[1]
    w[:] = 0.0
    for q in range(len(data.target)):
        a = (c * alpha[q] - U[q]) / s - data.target[q]
        if a != 0.0:
            for f in range(F):
                w[f] -= a * X[q, f]
    w /= lam * len(data.base)


@nb.njit(cache=True)
def evaluate(w, data, with_hinge, max_len, predicted):
    """Best partial matching of every pair at ``w`` (edge indicators into ``predicted``);
    returns the mean hinge (NaN unless ``with_hinge``). Not counted as oracle calls."""
    n = len(data.base)
    U = np.empty((max_len, 1))
    y = np.empty(max_len, dtype=np.int32)
    hinge = 0.0
    for i in range(n):
        t0 = data.offsets[i]
        T = boxes.scores(w, 1.0, None, data, i, U)
        best_matching(edge_matrix(U, data, i, T, False), predicted[t0:t0 + T])
        if with_hinge:
            top = best_matching(edge_matrix(U, data, i, T, True), y)
            hinge += top + data.base[i] - target_score(U, data, t0, T)
    return hinge / n if with_hinge else np.nan


MatchingTask.kernels = {    # an edge is a score row with one label, as a candidate box
    "scratch": chain.scratch, "scores": boxes.scores, "example_oracle": example_oracle,
    "decode": decode, "add_direction": boxes.add_direction,
    "subtract_direction": chain.subtract_direction,
    "direction_sqnorm": boxes.direction_sqnorm, "direction_dot": boxes.direction_dot,
    "init_marginals": init_marginals, "dual_residual": dual_residual,
    "move_marginals": boxes.move_marginals, "weights_from_average": weights_from_average,
    "labeling_hinge": labeling_hinge, "add_labeling": add_labeling,
}
