"""Labelling the nodes of a tree as an ssvmbench task: pairwise structure that is not a chain.

Model (BCFW, Lacoste-Julien et al., ICML 2013, Section 2, eqs. 1-3):

* ``phi(x, y) = sum_t x_t (x) e_{y_t} + sum_{t not root} e_{y_parent(t)} (x) e_{y_t}``:
  ``w = [unary F x L | pairwise L x L]``, unary ``w[f L + l]``, the weight of a parent
  labelled ``a`` with a child labelled ``b`` at ``F L + a L + b`` (``d = F L + L^2``);
* task loss: the Hamming loss over the nodes, divided by their number
  (``normalized_hamming``, default) or not (``hamming``);
* the max oracle (loss-augmented decoding, BCFW eq. 2) is exact max-product on the tree: the
  nodes are stored parents first, so one sweep from the last node to the root sends each
  node's max-message to its parent, and one sweep back reads the labels off; the exp oracle
  (Pillutla et al., NeurIPS 2018, Definition 1) is sum-product in log space, its gradient
  the node and parent-child marginals from the messages up and down.

What this example shows, beyond examples/multiclass (docs/guide/tasks.md):

* ``ws``: ``scores`` and ``example_oracle`` get the weights as ``ws * w``; the unary part
  enters through the scores ``U``, but the pairwise weights are read from ``w`` inside the
  oracle, so it multiplies them by ``ws`` itself (:func:`max_product`).
* its own scratch (:func:`scratch`): ``U``, ``R`` are nodes x labels, ``delta`` the
  max-product beliefs, ``E = (pairs,)`` the pairwise part of a direction as a dense ``L^2``
  vector, ``dense`` an all-zero ``F L`` vector for :func:`direction_sqnorm`; and its own
  oracle buffers (:meth:`TreeTask.oracle_scratch`).
* its dual layout: ``alpha`` (what BCFW averages) is ``(mu, Psum)``, node marginals and the
  *sum* over examples of the pair marginals (``w`` depends on the pair marginals through
  their sum only); each example's own pair marginals, which ``dual_residual`` needs, travel
  in the opaque ``blocks`` (an ``n x L^2`` array) that ``init_marginals`` returns.
"""

import itertools
from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.errors import UserError
from ssvmbench.tasks.base import Scratch, Task, kernels_named
from ssvmbench_tree.dataset import TreeDataset, random_trees


class TreeData(NamedTuple):
    """The arrays the kernels take: node ``offsets`` (n+1; first, the solvers read
    ``data[0]``), node ``labels``, ``parents`` (inside the example, -1 at the root), the CSR
    feature rows of the nodes and the oracle ``calls``."""

    offsets: np.ndarray
    labels: np.ndarray
    parents: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    feat_val: np.ndarray
    calls: np.ndarray


class TreeTask(Task):
    """One split of a :class:`~ssvmbench_tree.dataset.TreeDataset`: a score row per node,
    ``dims = (F, L)``, ``d = F L + L^2``; every example's direction may touch the pairwise
    block (``dense_entries``)."""

    kind = "tree"
    dataset_type = TreeDataset
    data_type = TreeData                # kernels: declared below their definitions
    LOSSES = ("normalized_hamming", "hamming")
    oracles = ("max", "exp")

    def __init__(self, ds: TreeDataset, loss="normalized_hamming"):
        if loss not in self.LOSSES:
            raise UserError(f"loss={loss}: the tree task has the losses {list(self.LOSSES)}")
        self.dataset = ds
        self.loss = loss
        self.normalized = loss == "normalized_hamming"
        X = ds.features
        self.data = TreeData(ds.offsets.astype(np.int64), ds.labels.astype(np.int32),
                             ds.parents.astype(np.int64), X.indptr.astype(np.int64),
                             X.indices.astype(np.int64), X.data.astype(np.float64),
                             np.zeros(1, dtype=np.int64))
        F, L = ds.n_features, ds.n_labels
        self.dims = (F, L)
        self.n = ds.n
        self.n_rows = ds.n_nodes
        self.n_labels = L
        self.d = F * L + L * L
        self.dense_entries = np.arange(F * L, self.d)
        self.max_len = int(np.diff(ds.offsets).max())

    @classmethod
    def tiny(cls):
        return cls(random_trees(10, 3, 4, nodes=(1, 5), seed=0), cls.LOSSES[0])

    def oracle_scratch(self, oracle):
        """The oracles' buffers (``bufs``): beliefs, upward and downward messages (3 x nodes
        x labels; the max oracle uses the beliefs only)."""
        return np.empty((3, self.max_len, self.n_labels))

    def labelings(self, i, limit):
        """The ``L^T`` labellings of tree ``i`` (the test kit's brute force)."""
        T = int(self.dataset.offsets[i + 1] - self.dataset.offsets[i])
        if self.n_labels**T > limit:
            return None
        return [np.array(y, dtype=np.int32)
                for y in itertools.product(range(self.n_labels), repeat=T)]

    def evaluate(self, w, with_hinge=True):
        """``(mean hinge or NaN, mean task loss, predicted label per node)`` at ``w``."""
        predictions = np.empty(self.n_rows, dtype=np.int32)
        hinge, loss = evaluate(np.ascontiguousarray(w, dtype=np.float64), self.dims,
                               self.data, self.normalized, with_hinge, self.max_len,
                               predictions)
        return hinge, loss, predictions


# ----------------------------------------------------------------------------- kernels


@nb.njit(cache=True)
def scratch(dims, data, max_len):
    """The work arrays of a pass: scores ``U`` and beliefs ``delta`` (nodes x labels), a
    labelling ``y``, a direction ``(R, E)`` with ``E = (pairs,)`` (``L^2``) and an all-zero
    ``F L`` vector."""
    F, L = dims
    return Scratch(np.empty((max_len, L)), np.empty((max_len, L)),
                   np.zeros(max_len, dtype=np.int32), np.zeros((max_len, L)),
                   (np.zeros(L * L),), np.zeros(F * L))


@nb.njit(cache=True)
def scores(w, ws, dims, data, i, U):
    """``U[t, l] = ws * <w_l, x_t>`` for the nodes of tree ``i``; returns their number."""
    F, L = dims
    t0 = data.offsets[i]
    T = data.offsets[i + 1] - t0
    for t in range(T):
        U[t, :] = 0.0
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            v = ws * data.feat_val[p]
            base = data.feat_idx[p] * L
            for l in range(L):
                U[t, l] += v * w[base + l]
    return T


@nb.njit(cache=True)
def loss_unit(normalized, T):
    return 1.0 / T if normalized else 1.0


@nb.njit(cache=True)
def max_product(w, ws, dims, data, i, U, T, unit, belief, y):
    """``max_y sum_t (U[t, y_t] + unit [y_t != gold_t]) + ws sum_t P[y_parent(t), y_t]`` on
    tree ``i`` (``P`` the pairwise block of ``w``, scaled by ``ws`` here), a maximizer into
    ``y``: messages from the last node to the root, labels from the root down."""
    F, L = dims
    off = F * L
    t0 = data.offsets[i]
    for t in range(T):
        for l in range(L):
            belief[t, l] = U[t, l] + (0.0 if l == data.labels[t0 + t] else unit)
    for t in range(T - 1, 0, -1):
        p = data.parents[t0 + t]
        for a in range(L):
            best = -np.inf
            for b in range(L):
                best = max(best, ws * w[off + a * L + b] + belief[t, b])
            belief[p, a] += best
    y[0] = np.argmax(belief[0])
    top = belief[0, y[0]]
    for t in range(1, T):
        a = y[data.parents[t0 + t]]
        best = -np.inf
        for b in range(L):
            v = ws * w[off + a * L + b] + belief[t, b]
            if v > best:
                best, y[t] = v, b
    return top


@nb.njit(cache=True)
def tree_score(w, ws, dims, data, i, U, T, y):
    """``<ws w, phi(x_i, y)>`` given the scores ``U`` of ``ws w``."""
    F, L = dims
    t0 = data.offsets[i]
    s = 0.0
    for t in range(T):
        s += U[t, y[t]]
        if t > 0:
            s += ws * w[F * L + y[data.parents[t0 + t]] * L + y[t]]
    return s


@nb.njit(cache=True)
def mistakes(data, i, T, y):
    t0 = data.offsets[i]
    wrong = 0
    for t in range(T):
        wrong += y[t] != data.labels[t0 + t]
    return wrong


@nb.njit(cache=True)
def set_difference(data, i, T, y, R, E):
    """``(R, E) = phi(x_i, y) - phi(x_i, y_i)``."""
    L = R.shape[1]
    t0 = data.offsets[i]
    pairs = E[0]
    pairs[:] = 0.0
    for t in range(T):
        R[t, :] = 0.0
        R[t, y[t]] += 1.0
        R[t, data.labels[t0 + t]] -= 1.0
        if t > 0:
            p = data.parents[t0 + t]
            pairs[y[p] * L + y[t]] += 1.0
            pairs[data.labels[t0 + p] * L + data.labels[t0 + t]] -= 1.0


@nb.njit(cache=True)
def logsumexp_row(row, L):
    top = row[0]
    for l in range(1, L):
        top = max(top, row[l])
    total = 0.0
    for l in range(L):
        total += np.exp(row[l] - top)
    return top + np.log(total)


@nb.njit(cache=True)
def sum_product(w, ws, dims, data, i, U, T, unit, mu, bufs, R, E):
    """``log sum_y exp(z(y) / mu)`` of the loss-augmented scores ``z(y)`` (those of
    :func:`max_product`) on tree ``i``, and the expectation of ``phi(x_i, y)`` under ``p(y) ~
    exp(z(y) / mu)`` into ``(R, E)`` (node and parent-child marginals): messages up to the
    root (``bufs[0]`` beliefs, ``bufs[1]`` each node's message to its parent), outside
    messages down (``bufs[2]``)."""
    F, L = dims
    off = F * L
    t0 = data.offsets[i]
    belief, up, down = bufs[0], bufs[1], bufs[2]
    col = np.empty(L)
    for t in range(T):
        for l in range(L):
            belief[t, l] = (U[t, l] + (0.0 if l == data.labels[t0 + t] else unit)) / mu
    for t in range(T - 1, 0, -1):
        p = data.parents[t0 + t]
        for a in range(L):
            for b in range(L):
                col[b] = ws * w[off + a * L + b] / mu + belief[t, b]
            up[t, a] = logsumexp_row(col, L)
            belief[p, a] += up[t, a]
    log_z = logsumexp_row(belief[0], L)
    pairs = E[0]
    pairs[:] = 0.0
    down[0, :] = 0.0
    for t in range(T):
        if t > 0:
            p = data.parents[t0 + t]
            for b in range(L):
                for a in range(L):
                    col[a] = down[p, a] + belief[p, a] - up[t, a] + ws * w[off + a * L + b] / mu
                down[t, b] = logsumexp_row(col, L)
                for a in range(L):
                    pairs[a * L + b] += np.exp(col[a] + belief[t, b] - log_z)
        for l in range(L):
            R[t, l] = np.exp(down[t, l] + belief[t, l] - log_z)
    return log_z


@nb.njit(cache=True)
def example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E):
    """The hinge of tree ``i`` at ``ws * w`` and its gradient in ``(R, E)``: ``kind`` 0, the
    max oracle, ``max_y L(y_i, y) + <ws w, phi(y) - phi(y_i)>`` by :func:`max_product` (the
    argmax in ``y``, gradient ``phi(y*) - phi(y_i)``); ``kind`` 2, the exp oracle (Casimir
    Definition 1), ``mu log sum_y exp(z(y) / mu) - <ws w, phi(y_i)>`` by
    :func:`sum_product` (gradient the expected ``phi`` minus ``phi(y_i)``)."""
    gold = data.labels[data.offsets[i]:data.offsets[i] + T]
    unit = loss_unit(normalized, T)
    if kind == 0:
        top = max_product(w, ws, dims, data, i, U, T, unit, bufs[0], y)
        set_difference(data, i, T, y, R, E)
    else:
        top = mu * sum_product(w, ws, dims, data, i, U, T, unit, mu, bufs, R, E)
        L = dims[1]
        t0 = data.offsets[i]
        for t in range(T):
            R[t, gold[t]] -= 1.0
            if t > 0:
                E[0][data.labels[t0 + data.parents[t0 + t]] * L + gold[t]] -= 1.0
    return top - tree_score(w, ws, dims, data, i, U, T, gold)


@nb.njit(cache=True)
def decode(w, dims, data, normalized, i, U, T, delta, y):
    """Loss-augmented max-product (BCFW eq. 2) of tree ``i`` into ``y``; returns its loss."""
    unit = loss_unit(normalized, T)
    max_product(w, 1.0, dims, data, i, U, T, unit, delta, y)
    return unit * mistakes(data, i, T, y)


@nb.njit(cache=True)
def scatter(W, coef, data, t0, T, R, E):
    """``W += coef * (R, E)`` (``W`` a d-vector) for the nodes from row ``t0``."""
    L = R.shape[1]
    for t in range(T):
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            v = coef * data.feat_val[p]
            base = data.feat_idx[p] * L
            for l in range(L):
                W[base + l] += v * R[t, l]
    off = len(W) - L * L
    for q in range(L * L):
        W[off + q] += coef * E[0][q]


@nb.njit(cache=True)
def add_direction(w, coef, dims, data, t0, T, R, E, U, C):
    """``w += coef * (R, E)``, each change also recorded in the lazy averages: ``U[j] +=
    C[j] coef (R, E)``."""
    scatter(w, coef, data, t0, T, R, E)
    for j in range(len(C)):
        scatter(U[j], coef * C[j], data, t0, T, R, E)


@nb.njit(cache=True)
def subtract_direction(data, T, R, E, R2, E2):
    R[:T] -= R2[:T]
    E[0][:] -= E2[0]


@nb.njit(cache=True)
def direction_sqnorm(dims, data, t0, T, R, E, dense):
    """``||(R, E)||^2``: the unary part scattered into the all-zero ``dense`` (``F L``), read
    and cleared entry by entry (an entry read twice gives 0 the second time)."""
    F, L = dims
    for t in range(T):
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            base = data.feat_idx[p] * L
            for l in range(L):
                dense[base + l] += data.feat_val[p] * R[t, l]
    s = E[0] @ E[0]
    for t in range(T):
        for p in range(data.feat_ptr[t0 + t], data.feat_ptr[t0 + t + 1]):
            base = data.feat_idx[p] * L
            for l in range(L):
                s += dense[base + l] ** 2
                dense[base + l] = 0.0
    return s


@nb.njit(cache=True)
def direction_dot(w, dims, data, U, T, R, E):
    """``<w, (R, E)>`` given the scores ``U`` of ``w``."""
    F, L = dims
    s = 0.0
    for t in range(T):
        for l in range(L):
            s += R[t, l] * U[t, l]
    return s + E[0] @ w[F * L:]


@nb.njit(cache=True)
def labeling_hinge(w, dims, data, normalized, i, T, y):
    """``L(y_i, y) + <w, phi(y) - phi(y_i)>`` for the labelling ``y[:T]``."""
    F, L = dims
    R, E = np.zeros((T, L)), (np.zeros(L * L),)
    set_difference(data, i, T, y, R, E)
    g = np.zeros(F * L + L * L)
    scatter(g, 1.0, data, data.offsets[i], T, R, E)
    return loss_unit(normalized, T) * mistakes(data, i, T, y) + g @ w


@nb.njit(cache=True)
def add_labeling(g, coef, dims, data, i, T, y):
    """``g += coef * (phi(x_i, y) - phi(x_i, y_i))``."""
    R, E = np.zeros((T, dims[1])), (np.zeros(dims[1] ** 2),)
    set_difference(data, i, T, y, R, E)
    scatter(g, coef, data, data.offsets[i], T, R, E)


@nb.njit(cache=True)
def init_marginals(data, mu, Psum):
    """``alpha_i = e_{y_i}``: node marginals one-hot, ``Psum`` the gold pair counts; returns
    the blocks, each tree's own pair marginals (``n x L^2``)."""
    n = len(data.offsets) - 1
    L = mu.shape[1]
    mu[:, :] = 0.0
    Psum[:] = 0.0
    P = np.zeros((n, L * L))
    for i in range(n):
        t0 = data.offsets[i]
        for t in range(data.offsets[i + 1] - t0):
            mu[t0 + t, data.labels[t0 + t]] = 1.0
            if t > 0:
                q = data.labels[t0 + data.parents[t0 + t]] * L + data.labels[t0 + t]
                P[i, q] += 1.0
                Psum[q] += 1.0
    return P


@nb.njit(cache=True)
def dual_residual(mu, blocks, data, i, t0, y, T, R, E):
    """``(R, E) = phi(x_i, y) - sum_y' alpha_i(y') phi(x_i, y')``: node rows ``e_{y_t} -
    mu_t``, pairs ``counts(y) - P_i``."""
    L = mu.shape[1]
    pairs = E[0]
    pairs[:] = -blocks[i]
    for t in range(T):
        R[t, :] = -mu[t0 + t]
        R[t, y[t]] += 1.0
        if t > 0:
            pairs[y[data.parents[t0 + t]] * L + y[t]] += 1.0


@nb.njit(cache=True)
def move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, U, C):
    """``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` given the residual of
    :func:`dual_residual`; each change of ``alpha = (mu, Psum)`` recorded in the lazy
    averages at its flat index (``U[j, k] += C[j] delta``)."""
    L = mu.shape[1]
    n_mu = mu.size
    for t in range(T):
        for l in range(L):
            delta = gamma * R[t, l]
            mu[t0 + t, l] += delta
            for j in range(len(C)):
                U[j, (t0 + t) * L + l] += C[j] * delta
    for q in range(L * L):
        delta = gamma * E[0][q]
        Psum[q] += delta
        blocks[i, q] += delta
        for j in range(len(C)):
            U[j, n_mu + q] += C[j] * delta
    return blocks


@nb.njit(cache=True)
def weights_from_average(alpha, U, c, s, dims, data, lam, w):
    """``w = A alpha_bar = 1/(lam n) sum_i (phi(x_i, y_i) - phi(alpha_bar_i))`` for the
    averaged state ``alpha_bar = (c alpha - U) / s`` (entry by entry)."""
    F, L = dims
    n = len(data.offsets) - 1
    n_mu = len(data.labels) * L
    scale = 1.0 / (lam * n)
    w[:] = 0.0
    for i in range(n):
        t0 = data.offsets[i]
        for t in range(data.offsets[i + 1] - t0):
            r = t0 + t
            for p in range(data.feat_ptr[r], data.feat_ptr[r + 1]):
                base = data.feat_idx[p] * L
                v = scale * data.feat_val[p]
                w[base + data.labels[r]] += v
                for l in range(L):
                    w[base + l] -= v * (c * alpha[r * L + l] - U[r * L + l]) / s
            if t > 0:
                w[F * L + data.labels[t0 + data.parents[r]] * L + data.labels[r]] += scale
    for q in range(L * L):
        w[F * L + q] -= scale * (c * alpha[n_mu + q] - U[n_mu + q]) / s


@nb.njit(cache=True)
def evaluate(w, dims, data, normalized, with_hinge, max_len, predictions):
    """Predictions (max-product without the loss) into ``predictions``; returns ``(mean
    hinge or NaN, mean task loss)``."""
    n = len(data.offsets) - 1
    L = dims[1]
    U, belief = np.empty((max_len, L)), np.empty((max_len, L))
    y = np.empty(max_len, dtype=np.int32)
    hinge, loss = 0.0, 0.0
    for i in range(n):
        t0 = data.offsets[i]
        T = scores(w, 1.0, dims, data, i, U)
        max_product(w, 1.0, dims, data, i, U, T, 0.0, belief, y)
        predictions[t0:t0 + T] = y[:T]
        loss += loss_unit(normalized, T) * mistakes(data, i, T, y)
        if with_hinge:
            top = max_product(w, 1.0, dims, data, i, U, T, loss_unit(normalized, T), belief,
                              y)
            hinge += top - tree_score(w, 1.0, dims, data, i, U, T,
                                          data.labels[t0:t0 + T])
    return (hinge / n if with_hinge else np.nan), loss / n


# every function above named like a kernel of the API (scratch, scores, ...) is adopted
TreeTask.kernels = kernels_named(vars())
