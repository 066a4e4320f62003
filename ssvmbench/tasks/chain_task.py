"""The chain (sequence-labelling) task's declaration: the kernels of
:mod:`ssvmbench.tasks.chain` and the chain's hinge oracles (:mod:`ssvmbench.tasks.oracles`),
for splits of a :class:`~ssvmbench.data.sequences.ChainDataset` (BCFW Section 6, Casimir
Section 4)."""

import itertools

import numpy as np

from ssvmbench.data.sequences import ChainDataset
from ssvmbench.data.synthetic import random_chains
from ssvmbench.errors import UserError
from ssvmbench.tasks import chain, chain_parts, oracles
from ssvmbench.tasks.base import ACTIVE_SET_KERNELS, MARGINAL_KERNELS, Task


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
        "example_oracle": oracles.example_oracle, "decode": chain.decode,
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
                                    ds.feat_val, np.zeros(1, dtype=np.int64))
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
        <ssvmbench.tasks.oracles.Oracle.buffers>`, the others None: a solver's kernels then
        compile that oracle only (:func:`~ssvmbench.tasks.oracles.hinge_oracle`)."""
        delta, topk, exp = oracle.buffers(self.max_len, self.n_labels)
        return (delta if oracle.name == "max" else None, topk if oracle.name == "topk" else None,
                exp if oracle.name == "exp" else None)

    def evaluate(self, w, with_hinge=True):
        """``(mean hinge, mean normalized Hamming, predicted labels)`` at ``w``."""
        predictions = np.empty(self.n_rows, dtype=np.int32)
        hinge, error = chain.evaluate(w, self.dims, self.data, self.normalized, with_hinge,
                                      self.max_len, predictions)
        return hinge, error, predictions
