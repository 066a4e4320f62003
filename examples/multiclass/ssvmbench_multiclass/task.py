"""The multiclass SVM (Crammer and Singer 2001) as an ssvmbench task: the simplest structured
output, ``Y_i = {0, ..., L-1}`` (BCFW, Lacoste-Julien et al., ICML 2013, Section 2).

Model (BCFW Section 2, eqs. 1-2):

* joint feature map ``phi(x, y) = x (x) e_y``: ``w`` holds one weight per feature and label,
  ``w[f * L + l]`` (``d = F L``; the chain's unary block, :mod:`ssvmbench.tasks.chain`,
  without transitions or biases; OCR's constant feature is the per-class bias);
* task loss ``L(y_i, y) = 1[y != y_i]`` (the 0/1 loss; BCFW Appendix F's normalized Hamming
  loss of a one-letter word);
* structured hinge ``H_i(w) = max_y L(y_i, y) + <w, phi(x_i, y)> - <w, phi(x_i, y_i)>`` (eq.
  2), the Crammer-Singer hinge; the objective ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` (eq. 3) is
  Crammer and Singer's with ``C = 1 / (lam n)``.

Oracles, exact by enumeration of the ``L`` labels: the max oracle (loss-augmented decoding,
eq. 2), and the smoothed oracles of Pillutla et al. (NeurIPS 2018, Section 2, Definition 1):
top-K (``l2^2`` smoothing over the K best loss-augmented scores, with ssvmbench's simplex
projection :func:`ssvmbench.tasks.smoothing.l2_smoothed_max`) and exp (``mu log sum_y exp(z_y /
mu)``, gradient the softmax expectation of ``phi``).

Dual (BCFW eq. 4): ``alpha_i`` is a distribution over the 26 labels, so the block of example
``i`` is explicit, not factored: ``mu[i, y] = alpha_i(y)`` (``n x L``; there are no bigram
marginals, so ``Psum`` is empty: :meth:`MulticlassTask.dual_size`). ``w = A alpha = 1/(lam n)
sum_i x_i (x) (e_{y_i} - alpha_i)``. BCFW (Algorithm 4, Section 5) on this dual is the
block-coordinate method of a block-separable problem: each step moves one simplex
``alpha_i``, with the line search in closed form, so the dual never decreases (in the binary
case it is the dual coordinate descent of Hsieh et al. 2008, BCFW Section 7).

Kernel layout (the API of :mod:`ssvmbench.tasks.kernels`): one score row per example, ``T =
1`` (``offsets = 0..n``, ``max_len = 1``), ``U[0, l] = <w_l, x_i>``; a direction in
``w``-space is ``x_i (x) R[0]`` (``R[0, l]``: the weight of label ``l``), its transition part
``E`` stays empty (``E[2][0] = 0``), so the chain's ``scratch`` and ``subtract_direction`` are
reused as they are.
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.errors import UserError
from ssvmbench.tasks import chain, smoothing
from ssvmbench.tasks.base import Task, kernels_named
from ssvmbench.tasks.chain import gather_add, scatter_add
from ssvmbench.tasks.parts import in_parts, means
from ssvmbench_multiclass.dataset import MulticlassDataset, random_multiclass

_CUTOFF = -40.0     # exp(-40) < 5e-18: softmax terms this far below the max are 0


class MulticlassData(NamedTuple):
    """The arrays the kernels take: ``offsets`` ``0..n`` (one score row per example; the
    first field, which the solvers read as ``data[0]``), the gold ``labels`` (n), the CSR
    feature rows (``feat_ptr`` (n+1), ``feat_idx``, ``feat_val``; distinct ids per row) and
    the oracle ``calls`` (see :class:`~ssvmbench.tasks.base.Task`)."""

    offsets: np.ndarray
    labels: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    feat_val: np.ndarray
    calls: np.ndarray


class MulticlassTask(Task):
    """One split of a :class:`~ssvmbench_multiclass.dataset.MulticlassDataset` in the form
    the kernels take: a "row" is an example, ``n_labels`` labels per row, ``dims = (F, L)``,
    ``d = F L``; no entry of ``w`` is touched by every example (``dense_entries`` empty)."""

    kind = "multiclass"
    dataset_type = MulticlassDataset
    data_type = MulticlassData          # kernels: declared below their definitions
    LOSSES = ("zero_one",)
    oracles = ("max", "topk", "exp")

    def __init__(self, ds: MulticlassDataset, loss="zero_one"):
        if loss not in self.LOSSES:
            raise UserError(f"loss={loss}: the multiclass task has the 0/1 loss only "
                            f"({list(self.LOSSES)})")
        self.dataset = ds
        self.loss = loss
        X = ds.features
        self.data = MulticlassData(np.arange(ds.n + 1, dtype=np.int64),
                                   ds.labels.astype(np.int64), X.indptr.astype(np.int64),
                                   X.indices.astype(np.int32), X.data.astype(np.float64),
                                   np.zeros(1, dtype=np.int64))
        self.normalized = False          # 0/1: one "token", nothing to normalize by
        self.dims = (ds.n_features, ds.n_labels)
        self.n = ds.n
        self.n_rows = ds.n
        self.n_labels = ds.n_labels
        self.d = ds.n_features * ds.n_labels
        self.dense_entries = np.zeros(0, dtype=np.int64)
        self.max_len = 1

    @classmethod
    def tiny(cls):
        return cls(random_multiclass(12, 5, 4, seed=0), cls.LOSSES[0])

    def gold_labelings(self):
        return self.dataset.labels.astype(np.int32)

    def labelings(self, i, limit):
        """The ``L`` classes, one labeling ``y[0] = l`` each (the test kit's brute force)."""
        return [np.array([l], dtype=np.int32) for l in range(self.n_labels)]

    def dual_size(self):
        """The dual state is ``mu`` alone (``n x L``): no label-bigram marginals."""
        return self.n_rows * self.n_labels

    def evaluate(self, w, with_hinge=True):
        """``(mean Crammer-Singer hinge or NaN, mean 0/1 loss, predicted labels)`` at ``w``
        (not counted as oracle calls)."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.d,):
            raise ValueError(f"w has shape {w.shape}, the {self.kind} task's weights ({self.d},)"
                             f" (F = {self.dims[0]} features x L = {self.dims[1]} labels)")
        predictions = np.empty(self.n, dtype=np.int32)
        losses, hinges = np.empty(self.n), np.empty(self.n)
        in_parts(evaluate, np.arange(self.n + 1), w, self.dims, self.data, with_hinge,
                 predictions, losses, hinges)
        return (*means(hinges, losses, with_hinge), predictions)


# ----------------------------------------------------------------------------- kernels


@nb.njit(cache=True)
def scores(w, ws, dims, data, i, out):
    """``out[0, l] = ws * <w_l, x_i>`` (``w_l = w[l::L]``); returns the row count 1."""
    F, L = dims
    gather_add(w[:F * L].reshape((F, L)), ws, data.feat_idx, data.feat_val,
               data.feat_ptr[i], data.feat_ptr[i + 1], out[0])
    return 1


@nb.njit(cache=True)
def loss_augmented_argmax(U, gold, L):
    """``(max_y z_y, first argmax)`` of the loss-augmented scores ``z_y = U[0, y] + 1[y !=
    gold]`` (BCFW eq. 2)."""
    top = -np.inf
    arg = 0
    for l in range(L):
        z = U[0, l] + (0.0 if l == gold else 1.0)
        if z > top:
            top, arg = z, l
    return top, arg


@nb.njit(cache=True)
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """The (smoothed) Crammer-Singer hinge ``f_i = h(z) - U[0, y_i]`` of example ``i`` at
    ``ws * w`` (``U``: its scores) and its gradient ``x_i (x) (p - e_{y_i})`` written to
    ``R[0] = p - e_{y_i}``, by enumeration of the labels (Casimir Definition 1):

    * ``kind`` 0, max: ``h = max_y z_y``, ``p = e_{y*}``; ``y[0] = y*``, the loss-augmented
      argmax (BCFW eq. 2; ties to the first label);
    * 1, top-K: ``h = max_{u in simplex} <u, z_[K]> - mu/2 (||u||^2 - 1)`` over the K best
      ``z`` (:func:`ssvmbench.tasks.smoothing.l2_smoothed_max`), ``p`` its maximizer; the top-K
      buffers' ``Y[:, 0]`` hold the K best labels and ``z``, ``p`` their scores and weights;
    * 2, exp: ``h = mu log sum_y exp(z_y / mu)``, ``p = softmax(z / mu)``.

    ``y[0]`` is the loss-augmented argmax for every kind; ``E`` is left empty."""
    L = dims[1]
    gold = data.labels[i]
    E[2][0] = 0
    r = R[0]
    top, arg = loss_augmented_argmax(U, gold, L)
    y[0] = arg
    for l in range(L):
        r[l] = 0.0
    if kind == 0:
        value = top
        r[arg] = 1.0
    elif kind == 1:
        _, Y, zk, p = bufs[1]
        codes = Y[:, 0]
        m = 0
        for l in range(L):
            m = smoothing._push(zk, codes, m, K, U[0, l] + (0.0 if l == gold else 1.0), l)
        value = smoothing.l2_smoothed_max(zk, m, mu, p)
        for k in range(m):
            r[codes[k]] += p[k]
    else:
        inv = 1.0 / mu
        total = 0.0
        for l in range(L):
            x = (U[0, l] + (0.0 if l == gold else 1.0) - top) * inv
            e = np.exp(x) if x > _CUTOFF else 0.0
            r[l] = e
            total += e
        for l in range(L):
            r[l] /= total
        value = top + mu * np.log(total)
    r[gold] -= 1.0
    return value - U[0, gold]


@nb.njit(cache=True)
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Max oracle for BCFW: the loss-augmented argmax (BCFW eq. 2) into ``y[0]``; returns
    its 0/1 loss."""
    gold = data.labels[i]
    _, arg = loss_augmented_argmax(U, gold, dims[1])
    y[0] = arg
    return 0.0 if arg == gold else 1.0


@nb.njit(cache=True)
def add_direction(w, coef, dims, data, t0, T, R, E, U, C):
    """``w += coef * x_{t0} (x) R[0]`` (the features of example ``t0`` only), each change
    also recorded in the lazy averages ``U`` with weights ``C``
    (:mod:`ssvmbench.solvers.averaging`; empty ``C``: none)."""
    F, L = dims
    p, p1 = data.feat_ptr[t0], data.feat_ptr[t0 + 1]
    scatter_add(w[:F * L].reshape((F, L)), coef, data.feat_idx, data.feat_val, p, p1, R[0])
    for j in range(len(C)):
        scatter_add(U[j, :F * L].reshape((F, L)), coef * C[j], data.feat_idx, data.feat_val,
                    p, p1, R[0])


@nb.njit(cache=True)
def direction_sqnorm(dims, data, t0, T, R, E, x_dense):
    """``||x_{t0} (x) R[0]||^2 = ||x_{t0}||^2 ||R[0]||^2`` (distinct feature ids per row);
    ``x_dense`` is not needed."""
    return feature_sqnorm(data, t0) * (R[0] @ R[0])


@nb.njit(cache=True)
def feature_sqnorm(data, i):
    """``||x_i||^2``."""
    x = data.feat_val[data.feat_ptr[i]:data.feat_ptr[i + 1]]
    return x @ x


@nb.njit(cache=True)
def direction_dot(w, dims, data, U, T, R, E):
    """``<w, x (x) R[0]> = sum_l R[0, l] U[0, l]`` given the scores ``U`` of ``w``."""
    s = 0.0
    for l in range(dims[1]):
        s += R[0, l] * U[0, l]
    return s


@nb.njit(cache=True)
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L(y_i, y) - <w, phi(x_i, y_i) - phi(x_i, y)>`` for the label ``y[0]``."""
    L = dims[1]
    a, b = y[0], data.labels[i]
    if a == b:
        return 0.0
    s = 0.0
    for p in range(data.feat_ptr[i], data.feat_ptr[i + 1]):
        base = data.feat_idx[p] * L
        s += data.feat_val[p] * (w[base + a] - w[base + b])
    return 1.0 + s


@nb.njit(cache=True)
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(x_i, y) - phi(x_i, y_i))`` for the label ``y[0]``."""
    L = dims[1]
    a, b = y[0], data.labels[i]
    if a == b:
        return
    for p in range(data.feat_ptr[i], data.feat_ptr[i + 1]):
        base = data.feat_idx[p] * L
        v = coef * data.feat_val[p]
        g[base + a] += v
        g[base + b] -= v


@nb.njit(cache=True)
def init_marginals(data, mu, Psum):
    """``alpha_i = e_{y_i}`` (BCFW Algorithm 4 start, ``w = 0``); returns the (unused)
    blocks, of the type the box task returns."""
    mu[:, :] = 0.0
    Psum[:] = 0.0
    n = len(data.labels)
    for i in range(n):
        mu[i, data.labels[i]] = 1.0
    none = np.zeros(n, dtype=np.int64)
    return (np.zeros(0, dtype=np.int64), np.zeros(0), none, none.copy(), none.copy(),
            np.zeros(1, dtype=np.int64))


@nb.njit(cache=True)
def dual_residual(mu, blocks, data, i, t0, y, T, R, E):
    """``R[0] = e_{y[0]} - alpha_i``: the direction ``phi(x_i, y) - sum_y' alpha_i(y')
    phi(x_i, y')`` of a BCFW step (Algorithm 4)."""
    for l in range(mu.shape[1]):
        R[0, l] = -mu[t0, l]
    R[0, y[0]] += 1.0
    E[2][0] = 0


@nb.njit(cache=True)
def move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C):
    """``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` given the residual of
    :func:`dual_residual`, recorded in the lazy averages ``U`` (flat index ``i L + l``) with
    weights ``C``."""
    L = mu.shape[1]
    for l in range(L):
        delta = gamma * R[0, l]
        mu[t0, l] += delta
        for k in range(len(C)):
            U[k, t0 * L + l] += C[k] * delta
    return blocks


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar = 1/(lam n) sum_i x_i (x) (e_{y_i} - alpha_bar_i)`` (BCFW Section 2,
    eq. 4 and Appendix E) for the averaged dual state ``alpha_bar = (c alpha - U) / s``."""
    F, L = dims
    n = len(data.labels)
    W = w[:F * L].reshape((F, L))
    r = np.empty(L)
    w[:] = 0.0
    for i in range(n):
        for l in range(L):
            r[l] = -(c * alpha[i * L + l] - U[i * L + l]) / s
        r[data.labels[i]] += 1.0
        scatter_add(W, 1.0 / (lam * n), data.feat_idx, data.feat_val, data.feat_ptr[i],
                    data.feat_ptr[i + 1], r)


@nb.njit(cache=True, nogil=True)
def evaluate(w, dims, data, with_hinge, predictions, losses, hinges, first, last):
    """The examples ``first`` to ``last - 1`` of one pass at fixed ``w`` (a part per
    evaluation thread, :func:`ssvmbench.tasks.parts.in_parts`): each one's top-scoring label
    into ``predictions``, its 0/1 loss and, if ``with_hinge``, its hinge (else 0)."""
    L = dims[1]
    U = np.empty((1, L))
    for i in range(first, last):
        scores(w, 1.0, dims, data, i, U)
        best = 0
        for l in range(1, L):
            if U[0, l] > U[0, best]:
                best = l
        predictions[i] = best
        gold = data.labels[i]
        losses[i] = 0.0 if best == gold else 1.0
        hinges[i] = 0.0
        if with_hinge:
            top, _ = loss_augmented_argmax(U, gold, L)
            hinges[i] = top - U[0, gold]


# ----------------------------------- stored labels (SAP's active sets: the elastic-net SVM)


@nb.njit(cache=True)
def labeling_score(w, dims, data, i, U, T, y):
    """``<w, phi(x_i, y)> = U[0, y[0]]``."""
    return U[0, y[0]]


@nb.njit(cache=True)
def labeling_direction(data, i, T, y_plus, y_minus, R, E):
    """``R[0] = e_{y_plus} - e_{y_minus}``: ``phi(x_i, y_plus) - phi(x_i, y_minus)``."""
    R[0, :] = 0.0
    R[0, y_plus[0]] += 1.0
    R[0, y_minus[0]] -= 1.0
    E[2][0] = 0


@nb.njit(cache=True)
def gram_scratch(dims, data, max_len):
    """The record of :func:`direction_gram`: ``||x_i||^2``."""
    return np.zeros(1)


@nb.njit(cache=True)
def direction_gram(dims, data, t0, T, R, E, dense, gram):
    """:func:`direction_sqnorm`, keeping ``||x_i||^2`` in ``gram``."""
    gram[0] = feature_sqnorm(data, t0)
    return gram[0] * (R[0] @ R[0])


@nb.njit(cache=True)
def add_direction_scores(U, coef, data, T, R, E, gram):
    """The scores after ``w += coef * x_i (x) R[0]``: ``U[0] += coef ||x_i||^2 R[0]``."""
    U[0] += coef * gram[0] * R[0]


@nb.njit(cache=True)
def example_features(data, i):
    """The feature rows of ``w`` example ``i`` touches: its features."""
    return data.feat_idx[data.feat_ptr[i]:data.feat_ptr[i + 1]]


# one score row per example: the chain's scratch and subtraction
MulticlassTask.kernels = kernels_named(
    vars(), scratch=chain.scratch, subtract_direction=chain.subtract_direction)
