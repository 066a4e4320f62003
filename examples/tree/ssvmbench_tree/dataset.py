"""Tree splits: examples that are trees of nodes, a sparse feature row and a label per node.

:class:`TreeDataset` is the split type of the ``tree`` task (:attr:`TreeTask.dataset_type
<ssvmbench_tree.task.TreeTask.dataset_type>`); it is not a chain split, so ``make_task``
builds the tree task for it and the built-in metrics do not apply
(:mod:`ssvmbench_tree.metrics` logs the node accuracy). ``random_trees``
(:func:`load_random_trees`, entry point group ``ssvmbench.datasets``) generates a train and a
test split: random trees, each node's label its parent's with probability ``stay`` (else
uniform), features the one-hot label plus Gaussian noise and a constant 1, so that both the
unary and the parent-child weights matter.
"""

import hashlib
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ssvmbench.data.sequences import SplitData


@dataclass(frozen=True)
class TreeDataset:
    """One split of a tree dataset.

    Attributes
    ----------
    name : str
    n_labels : int                 labels ``L`` per node.
    offsets : int64 (n+1,)         node rows of example ``i``: ``offsets[i]:offsets[i+1]``.
    parents : int64 (n_nodes,)     each node's parent as an index inside its example, ``-1``
                                   at the root; node 0 of every example is its root and a
                                   parent comes before its children (``parents[t] < t``).
    features : scipy.sparse.csr_matrix (n_nodes, F)   one feature row per node.
    labels : int32 (n_nodes,)      the label of each node.
    """

    name: str
    n_labels: int
    offsets: np.ndarray
    parents: np.ndarray
    features: sp.csr_matrix
    labels: np.ndarray

    def __post_init__(self):
        local = np.arange(len(self.parents)) - np.repeat(self.offsets[:-1],
                                                          np.diff(self.offsets))
        roots = self.parents == -1
        if not (np.array_equal(roots, local == 0) and np.all(self.parents[~roots]
                                                              < local[~roots])):
            raise ValueError(f"{self.name}: every example's node 0 is its root (parent -1) "
                             "and every other node's parent comes before it")

    @property
    def n(self) -> int:
        """Number of examples (trees)."""
        return len(self.offsets) - 1

    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    def subset(self, idx) -> "TreeDataset":
        """The examples ``idx`` (in that order) as a new split (``+data.subset``,
        ``+data.holdout`` and the run's warm-up call it)."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        rows = np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]
                              or [np.zeros(0, dtype=np.int64)])
        sizes = np.diff(self.offsets)[idx]
        return replace(self, offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                       parents=self.parents[rows], features=self.features[rows],
                       labels=self.labels[rows])


def random_trees(n, n_labels, n_features, nodes=(2, 7), stay=0.8, noise=1.0, seed=0,
                 name="random_trees"):
    """``n`` generated trees of ``nodes[0]..nodes[1]`` nodes (not a paper dataset)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(nodes[0], nodes[1] + 1, size=n)
    parents, labels = [], []
    for T in sizes:
        par = np.array([-1] + [rng.integers(0, t) for t in range(1, T)], dtype=np.int64)
        lab = np.empty(T, dtype=np.int32)
        lab[0] = rng.integers(n_labels)
        for t in range(1, T):
            lab[t] = lab[par[t]] if rng.random() < stay else rng.integers(n_labels)
        parents.append(par)
        labels.append(lab)
    labels = np.concatenate(labels)
    X = rng.normal(scale=noise, size=(len(labels), n_features))
    X[:, :n_labels] += np.eye(n_labels)[labels][:, :n_features]
    X[:, -1] = 1.0
    return TreeDataset(name, n_labels, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                       np.concatenate(parents), sp.csr_matrix(X), labels)


def load_random_trees(n_train=400, n_test=200, n_labels=4, n_features=8, noise=1.0, seed=0):
    """Train and test splits of generated trees (``data=random_trees``; every argument is a
    ``data.KEY=VALUE`` option)."""
    both = random_trees(n_train + n_test, n_labels, n_features, noise=noise, seed=seed)
    settings = f"n_train={n_train} n_test={n_test} L={n_labels} F={n_features} " \
               f"noise={noise} seed={seed}"
    return SplitData(train=both.subset(np.arange(n_train)),
                     test=both.subset(np.arange(n_train, n_train + n_test)),
                     variant=f"SYNTHETIC random trees ({settings})",
                     checksum=hashlib.sha256(settings.encode()).hexdigest(),
                     source="generated", metric="node_accuracy")
