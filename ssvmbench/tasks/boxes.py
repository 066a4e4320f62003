"""Box-localization task: one box per image out of its candidate boxes (Casimir Section 4,
"Visual object localization").

``phi(x, y)`` is the feature vector of candidate box ``y`` (Casimir: AlexNet conv4 features of
the cropped box), so ``w`` has one weight per feature and the score of a candidate is
``<w, phi(x, y)>``. Task loss ``L(y_i, y) = 1 - IoU(y_i, y)`` where, as in the paper, the
ground truth ``y_i`` is replaced by its best-IoU candidate (so ``L(y_i, y_i) = 0``).
The max, top-K and exp oracles are exhaustive over the candidates.

The kernels have the signatures of the chain kernels (:mod:`ssvmbench.tasks.chain`, dispatched
by :mod:`ssvmbench.tasks.kernels`) with the candidates of image ``i`` as the score rows
``offsets[i]:offsets[i+1]`` and one "label": unary scores ``U[j, 0]`` of candidate ``j``, and a
direction ``sum_j R[j, 0] phi(x, j)`` (its transition part ``E`` stays empty). The factored
BCFW dual block of an image is its distribution over candidates, ``mu[t0 + j, 0] = alpha_i(j)``.
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.inner import inner
from ssvmbench.data.boxes import BoxDataset, iou
from ssvmbench.data.scenes import load_scenes
from ssvmbench.tasks import chain, smoothing
from ssvmbench.tasks.base import Task, kernels_named
from ssvmbench.tasks.parts import in_parts, means


class BoxData(NamedTuple):
    """The arrays the kernels take: candidate ``offsets`` (n+1), absolute index of each
    image's ``gold`` candidate (n), candidate ``features`` (N x F), ``loss`` (N) and the
    oracle ``calls`` made on them (see :class:`~ssvmbench.tasks.base.Task`)."""

    offsets: np.ndarray
    gold: np.ndarray
    features: np.ndarray
    loss: np.ndarray
    calls: np.ndarray


class BoxTask(Task):
    """One split of a box dataset in the form the kernels take (attributes as
    :class:`~ssvmbench.tasks.chain_task.ChainTask`: a "row" is a candidate, one "label")."""

    kind = "boxes"
    chain_directions = True
    dataset_type = BoxDataset
    data_type = BoxData                 # kernels: declared below their definitions
    LOSSES = ("one_minus_iou",)
    oracles = ("max", "topk", "exp")   # the hinge oracles it can run

    def __init__(self, ds: BoxDataset, loss="one_minus_iou"):
        self.dataset = ds
        self.loss = loss
        gold = ds.offsets[:-1] + ds.best_candidates()
        gold_boxes = np.repeat(ds.boxes[gold], np.diff(ds.offsets), axis=0)
        self.data = BoxData(ds.offsets, gold.astype(np.int64), ds.features,
                            1.0 - iou(ds.boxes, gold_boxes), np.zeros(1, dtype=np.int64))
        self.normalized = False
        self.dims = (ds.n_features, 1)
        self.n = ds.n
        self.n_rows = ds.n_candidates
        self.n_labels = 1
        self.d = ds.n_features
        self.dense_entries = np.zeros(0, dtype=np.int64)
        self.max_len = int(np.diff(ds.offsets).max())

    def evaluate(self, w, with_hinge=True):
        """``(mean hinge, mean loss 1 - IoU(y_i, y), predictions)``; ``predictions`` holds
        each image's top candidate (index in the image) and its score, for the AP."""
        chosen, score = np.empty(self.n, dtype=np.int64), np.empty(self.n)
        losses, hinges = np.empty(self.n), np.empty(self.n)
        in_parts(evaluate, self.data.offsets, w, self.data, with_hinge, chosen, score, losses,
                 hinges)
        return (*means(hinges, losses, with_hinge), (chosen, score))

    @classmethod
    def tiny(cls):
        return cls(load_scenes(n_train=8, n_test=1, size=32, seed=0).train, cls.LOSSES[0])

    def labelings(self, i, limit):
        """The candidates of image ``i``, one labeling ``y[0] = j`` each."""
        T = int(self.data.offsets[i + 1] - self.data.offsets[i])
        return [np.array([j], dtype=np.int32) for j in range(T)] if T <= limit else None


# ----------------------------------------------------------------------------- kernels


@inner
def scores(w, ws, dims, data, i, out):
    """``out[j, 0] = ws * <w, phi(x_i, j)>`` for the candidates of image ``i``; returns their
    number."""
    t0, t1 = data.offsets[i], data.offsets[i + 1]
    X = data.features
    F = X.shape[1]
    for j in range(t1 - t0):
        s = 0.0
        row = X[t0 + j]
        for f in range(F):
            s += row[f] * w[f]
        out[j, 0] = ws * s
    return t1 - t0


@inner
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """Value of the (smoothed) hinge ``f_i`` at ``ws * w`` and its gradient ``sum_j p_j
    phi(j) - phi(y_i)`` written to ``R`` (Casimir Definition 1; exhaustive over the
    candidates). ``kind`` 0 max (``y[0]`` = loss-augmented argmax), 1 top-K (``l2^2``
    smoothing of the K best, :func:`~ssvmbench.tasks.smoothing.l2_smoothed_max`; ``Y[:, 0]``
    of the top-K buffers = the K best candidates), 2 exp (``mu log sum exp(z / mu)``)."""
    t0 = data.offsets[i]
    loss = data.loss
    E[2][0] = 0
    top = -np.inf
    arg = 0
    for j in range(T):
        R[j, 0] = 0.0
        z = U[j, 0] + loss[t0 + j]
        if z > top:
            top, arg = z, j
    if kind == 0:
        value = top
        R[arg, 0] = 1.0
        y[0] = arg
    elif kind == 1:
        _, Y, zk, p = bufs[1]
        codes = Y[:, 0]
        n = 0
        for j in range(T):
            n = smoothing._push(zk, codes, n, K, U[j, 0] + loss[t0 + j], j)
        value = smoothing.l2_smoothed_max(zk, n, mu, p)
        for k in range(n):
            R[codes[k], 0] = p[k]
    else:
        total = 0.0
        for j in range(T):
            e = np.exp((U[j, 0] + loss[t0 + j] - top) / mu)
            R[j, 0] = e
            total += e
        for j in range(T):
            R[j, 0] /= total
        value = top + mu * np.log(total)
    g = data.gold[i] - t0
    R[g, 0] -= 1.0
    return value - U[g, 0]


@inner
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Max oracle for BCFW: the loss-augmented argmax (BCFW eq. 2) written to ``y[0]``;
    returns its loss."""
    t0 = data.offsets[i]
    top = -np.inf
    for j in range(T):
        z = U[j, 0] + data.loss[t0 + j]
        if z > top:
            top, y[0] = z, j
    return data.loss[t0 + y[0]]


@inner
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L_i(y) - <w, phi(y_i) - phi(y)>`` for the candidate ``y[0]`` of image ``i``."""
    t0 = data.offsets[i]
    chosen, gold = data.features[t0 + y[0]], data.features[data.gold[i]]
    s = 0.0
    if t0 + y[0] != data.gold[i]:
        for f in range(len(chosen)):
            s += w[f] * (np.float64(chosen[f]) - np.float64(gold[f]))
    return data.loss[t0 + y[0]] + s


@inner
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(y) - phi(y_i))`` for the candidate ``y[0]`` of image ``i``."""
    t0 = data.offsets[i]
    if t0 + y[0] != data.gold[i]:
        chosen, gold = data.features[t0 + y[0]], data.features[data.gold[i]]
        for f in range(len(chosen)):
            g[f] += coef * (np.float64(chosen[f]) - np.float64(gold[f]))


@inner
def add_direction(w, coef, dims, data, t0, T, R, E, U, C):
    """``w += coef * sum_j R[j, 0] phi(j)``, each change also recorded in the lazy averages
    ``U`` with weights ``C`` (:mod:`ssvmbench.solvers.averaging`)."""
    X = data.features
    F = X.shape[1]
    for j in range(T):
        r = coef * R[j, 0]
        if r == 0.0:
            continue
        row = X[t0 + j]
        for f in range(F):
            w[f] += r * row[f]
        for k in range(len(C)):
            u = U[k]
            c = C[k] * r
            for f in range(F):
                u[f] += c * row[f]


@inner
def direction_sqnorm(dims, data, t0, T, R, E, x_dense):
    """``||sum_j R[j, 0] phi(j)||^2``, accumulated in the all-zero ``(F,)`` scratch
    ``x_dense`` (left all-zero)."""
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    add_direction(x_dense, 1.0, dims, data, t0, T, R, E, no_U, no_C)
    s = 0.0
    for f in range(len(x_dense)):
        s += x_dense[f] * x_dense[f]
        x_dense[f] = 0.0
    return s


@inner
def direction_dot(w, dims, data, U, T, R, E):
    """``<w, direction>`` given the scores ``U`` of ``w``."""
    s = 0.0
    for j in range(T):
        s += R[j, 0] * U[j, 0]
    return s


@inner
def dual_residual(mu, blocks, data, i, t0, y, T, R, E):
    """``(R, E)`` of ``phi(y) - sum_j alpha_i(j) phi(j)``."""
    for j in range(T):
        R[j, 0] = -mu[t0 + j, 0]
    R[y[0], 0] += 1.0
    E[2][0] = 0


@nb.njit(cache=True)
def init_marginals(data, mu, Psum):
    """``alpha_i = e_{y_i}`` (BCFW Algorithm 4 start); no transition blocks."""
    mu[:, :] = 0.0
    Psum[:] = 0.0
    for i in range(len(data.gold)):
        mu[data.gold[i], 0] = 1.0
    n = len(data.gold)
    none = np.zeros(n, dtype=np.int64)
    return (np.zeros(0, dtype=np.int64), np.zeros(0), none, none.copy(), none.copy(),
            np.zeros(1, dtype=np.int64))


@inner
def move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C):
    """``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` given the residual of
    :func:`dual_residual`, recorded in the lazy averages ``U`` with weights ``C``."""
    for j in range(T):
        delta = gamma * R[j, 0]
        mu[t0 + j, 0] += delta
        for k in range(len(C)):
            U[k, t0 + j] += C[k] * delta
    return blocks


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar = 1/(lam n) sum_i (phi(y_i) - sum_j alpha_bar_i(j) phi(j))`` for the
    averaged dual state ``alpha_bar = (c alpha - U) / s`` (BCFW Section 3)."""
    n = len(data.gold)
    X = data.features
    F = X.shape[1]
    w[:] = 0.0
    for i in range(n):
        for q in range(data.offsets[i], data.offsets[i + 1]):
            a = (c * alpha[q] - U[q]) / s - (1.0 if q == data.gold[i] else 0.0)
            if a != 0.0:
                for f in range(F):
                    w[f] -= a * X[q, f]
    w /= lam * n


@nb.njit(cache=True, nogil=True)
def evaluate(w, data, with_hinge, chosen, score, losses, hinges, first, last):
    """The images ``first`` to ``last - 1`` of one pass at fixed ``w`` (a part per
    evaluation thread, :func:`ssvmbench.tasks.parts.in_parts`): each image's top-scoring
    candidate (index in the image) and its score, its loss and, if ``with_hinge``, its
    hinge (else 0)."""
    longest = np.max(np.diff(data.offsets))
    U = np.empty((longest, 1))
    for i in range(first, last):
        t0 = data.offsets[i]
        T = scores(w, 1.0, None, data, i, U)
        s = U[:T, 0]
        j = int(np.argmax(s))
        chosen[i], score[i] = j, s[j]
        losses[i] = data.loss[t0 + j]
        hinges[i] = np.max(s + data.loss[t0:t0 + T]) - s[data.gold[i] - t0] if with_hinge else 0.0


# a candidate is a score row with one label: the chain's scratch and subtraction
BoxTask.kernels = kernels_named(
    vars(), scratch=chain.scratch, subtract_direction=chain.subtract_direction)
