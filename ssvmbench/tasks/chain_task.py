"""The chain (sequence-labelling) task's declaration: the kernels of
:mod:`ssvmbench.tasks.chain` and the chain's hinge oracles (:mod:`ssvmbench.tasks.chain_oracles`),
for splits of a :class:`~ssvmbench.data.sequences.ChainDataset` (BCFW Section 6, Casimir
Section 4)."""

import itertools
from typing import NamedTuple

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data.sequences import ChainDataset
from ssvmbench.data.synthetic import random_chains
from ssvmbench.tasks import chain, chain_oracles, chain_parts
from ssvmbench.tasks.base import ACTIVE_SET_KERNELS, MARGINAL_KERNELS, Task
from ssvmbench.tasks.parts import in_parts, means


class SideBySide(NamedTuple):
    """A group of a checkpoint's iterates as the chain's evaluation takes them
    (:func:`ssvmbench.tasks.chain.evaluate`): ``side``, their unary blocks (``F x L``) side
    by side (``F x kL``), and ``edges[j]``, iterate ``j``'s transitions and first and last
    biases in the chain layout of ``dims = (0, L)``."""

    side: np.ndarray
    edges: np.ndarray


class ChainTask(Task):
    """One split of a chain dataset in the form the kernels take.

    ``data`` is a :class:`~ssvmbench.tasks.chain.ChainData`, ``dims = (F, L)``, ``d`` the
    length of ``w`` (layout in :mod:`ssvmbench.tasks.chain`); ``dense_entries`` the entries
    of ``w`` that every example touches (transitions and biases; SVRG updates them densely
    and the rest lazily). ``loss``: the task loss, ``normalized_hamming`` (BCFW Appendix F,
    the default) or ``hamming`` (Casimir Section 4).
    """

    kind = "chain"
    chain_directions = True
    dataset_type = ChainDataset
    data_type = chain.ChainData
    kernels = {
        "scratch": chain.scratch, "scores": chain.unary_scores,
        "example_oracle": chain_oracles.example_oracle, "decode": chain.decode,
        "add_direction": chain.add_direction, "subtract_direction": chain.subtract_direction,
        "direction_sqnorm": chain.direction_sqnorm, "direction_dot": chain.direction_dot,
        "init_marginals": chain.init_marginals, "dual_residual": chain.marginals_residual,
        "move_marginals": chain.move_marginals,
        "weights_from_average": chain.weights_from_average,
        "labeling_hinge": chain.labeling_hinge, "add_labeling": chain.add_labeling,
        **{name: getattr(chain_parts, name) for name in ACTIVE_SET_KERNELS + MARGINAL_KERNELS},
    }
    LOSSES = ("normalized_hamming", "hamming")
    oracles = ("max", "topk", "exp")
    topk_ties = ("scan", "casimir")     # casimir: the authors' NER code's order (issue 32)

    def __init__(self, ds: ChainDataset, loss="normalized_hamming"):
        if loss not in self.LOSSES:
            raise UserError(f"loss={loss}: choose one of {list(self.LOSSES)}")
        self.dataset = ds
        self.loss = loss
        self.normalized = loss == "normalized_hamming"
        self.data = chain.ChainData(ds.offsets, ds.labels, ds.feat_ptr, ds.feat_idx,
                                    ds.feat_val, np.zeros(1, dtype=np.int64),
                                    *chain.token_gram_store(ds.offsets))
        self.dims = (ds.n_features, ds.n_labels)
        self.n = ds.n
        self.n_rows = ds.n_tokens              # score rows of the kernels: the tokens
        self.n_labels = ds.n_labels
        self.d = ds.n_features * ds.n_labels + ds.n_labels**2 + 2 * ds.n_labels
        self.dense_entries = np.arange(ds.n_features * ds.n_labels, self.d)
        self.max_len = int(np.diff(ds.offsets).max())

    @classmethod
    def tiny(cls):
        return cls(random_chains(12, 3, 5, lengths=(1, 4), seed=0), cls.LOSSES[0])

    def gold_labelings(self):
        return self.dataset.labels

    def labelings(self, i, limit):
        """The ``L^T`` label sequences of sequence ``i``."""
        T = int(self.dataset.offsets[i + 1] - self.dataset.offsets[i])
        if self.n_labels**T > limit:
            return None
        return [np.array(y, dtype=np.int32)
                for y in itertools.product(range(self.n_labels), repeat=T)]

    def marginal_sizes(self):
        """Transitions, first and last label per sequence; the bigram marginals."""
        L = self.n_labels
        return L * L + 2 * L, L * L

    def oracle_scratch(self, oracle):
        """The chosen oracle's parts of :meth:`Oracle.buffers
        <ssvmbench.tasks.oracle.Oracle.buffers>`, the others None: a solver's kernels then
        compile that oracle only (:func:`~ssvmbench.tasks.chain_oracles.hinge_oracle`)."""
        delta, topk, exp = oracle.buffers(self.max_len, self.n_labels)
        return (delta if oracle.name == "max" else None, topk if oracle.name == "topk" else None,
                exp if oracle.name == "exp" else None)

    SIDE_BY_SIDE_BYTES = 1 << 28     # at most this much copied for a pass's iterates at once

    def evaluate(self, w, with_hinge=True):
        """``(mean hinge, mean normalized Hamming, predicted labels)`` at ``w``."""
        return self._passes(self._groups([w]), with_hinge)[0]

    def batch(self, ws):
        """The iterates ``ws`` as :class:`SideBySide` groups, as many in a group as copying
        them side by side allows (:data:`SIDE_BY_SIDE_BYTES`; one alone is not copied). A
        subclass that overrides :meth:`evaluate` gets the default (its checkpoints call it
        for each iterate), as the hashed chain does (its token scores are scattered loads,
        which iterates side by side do not share)."""
        return super().batch(ws) if self._own_evaluate() else self._groups(ws)

    def evaluate_many(self, batch, with_hinge=True):
        """:meth:`evaluate` of each iterate of ``batch`` (:meth:`batch`), one pass over the
        examples per group (:func:`ssvmbench.tasks.chain.evaluate`): the same numbers, bit for
        bit, as one pass each."""
        if self._own_evaluate():
            return super().evaluate_many(batch, with_hinge)
        return self._passes(batch, with_hinge)

    def _own_evaluate(self):
        return type(self).evaluate is not ChainTask.evaluate

    def _groups(self, ws):
        size = max(1, self.SIDE_BY_SIDE_BYTES // (8 * self.d))
        return [self._side_by_side([np.ascontiguousarray(w, dtype=np.float64)
                                    for w in ws[start:start + size]])
                for start in range(0, len(ws), size)]

    def _side_by_side(self, ws):
        """:class:`SideBySide` of the iterates ``ws`` (views of a lone iterate)."""
        F, L = self.dims
        if len(ws) == 1:
            return SideBySide(ws[0][:F * L].reshape(F, L), ws[0][None, F * L:])
        return SideBySide(np.concatenate([w[:F * L].reshape(F, L) for w in ws], axis=1),
                          np.array([w[F * L:] for w in ws]))

    def _passes(self, groups, with_hinge):
        """One evaluation pass per group of :class:`SideBySide` iterates: a triple each."""
        out = []
        for group in groups:
            k = len(group.edges)
            predictions = np.empty((k, self.n_rows), dtype=np.int32)
            hinges, errors = np.empty((k, self.n)), np.empty((k, self.n))
            in_parts(chain.evaluate, self.data.offsets, group.side, group.edges, self.data,
                     self.normalized, with_hinge, self.max_len, predictions, hinges, errors)
            out += [(*means(hinges[j], errors[j], with_hinge), predictions[j])
                    for j in range(k)]
        return out
