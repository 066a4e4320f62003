"""Multiclass splits: one example per row, a sparse feature row and one label out of ``L``.

:class:`MulticlassDataset` is the split type of the ``multiclass`` task
(:attr:`MulticlassTask.dataset_type <ssvmbench_multiclass.task.MulticlassTask.dataset_type>`):
it is deliberately not a :class:`~ssvmbench.data.sequences.ChainDataset` (``make_task``
would then build the chain task) and it has no ``feat_ptr`` (the built-in token ``accuracy``
metric applies to chains only; :mod:`ssvmbench_multiclass.metrics` logs the accuracy).

``ocr_letters`` (:func:`load_ocr_letters`, entry point group ``ssvmbench.datasets``) reads
Taskar's OCR words with ssvmbench's own OCR loader (:func:`ssvmbench.data.ocr.load`: checked
file, 128 binary pixels plus a constant 1 per letter, BCFW Appendix F) and makes every letter
one example of 26 classes, with the loader's split: BCFW's ``'ocr2'`` split, train folds 1-9
(6,251 words, 47,535 letters) and test fold 0 (626 words, 4,617 letters), or with
``fold=k`` SAP's (train fold k, test the other nine).
"""

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ssvmbench.data.sequences import SplitData


@dataclass(frozen=True)
class MulticlassDataset:
    """One split of a multiclass dataset.

    Attributes
    ----------
    name : str
    n_labels : int                    number of classes ``L``.
    features : scipy.sparse.csr_matrix (n, F)  one feature row per example (canonical: sorted,
                                      distinct column ids per row; made so if it is not).
    labels : int32 (n,)               the class of each example, in ``0..n_labels-1``.
    label_names : tuple               a name per class (OCR: ``a``..``z``).
    source_ids : int64 (n,)           where each example comes from in the data the loader read
                                      (OCR: the index of its word in the split); cut along with
                                      the examples by :meth:`subset`.
    """

    name: str
    n_labels: int
    features: sp.csr_matrix
    labels: np.ndarray
    label_names: tuple = field(default=())
    source_ids: np.ndarray = None

    def __post_init__(self):
        X = sp.csr_matrix(self.features, dtype=np.float64)
        if not X.has_canonical_format:         # the kernels' ||x||^2 needs distinct ids
            X = X.copy()
            X.sum_duplicates()
        object.__setattr__(self, "features", X)
        object.__setattr__(self, "labels", np.asarray(self.labels, dtype=np.int32))
        n = X.shape[0]
        if self.labels.shape != (n,):
            raise ValueError(f"{self.name}: one label per feature row ({n}), "
                             f"got {self.labels.shape}")
        if n and (self.labels.min() < 0 or self.labels.max() >= self.n_labels):
            raise ValueError(f"{self.name}: labels outside 0..{self.n_labels - 1}")
        if self.label_names and len(self.label_names) != self.n_labels:
            raise ValueError(f"{self.name}: {len(self.label_names)} label names for "
                             f"{self.n_labels} labels")
        ids = np.arange(n) if self.source_ids is None else np.asarray(self.source_ids)
        if ids.shape != (n,):
            raise ValueError(f"{self.name}: one source id per example")
        object.__setattr__(self, "source_ids", ids.astype(np.int64))

    @property
    def n(self) -> int:
        """Number of examples (the blocks of BCFW)."""
        return self.features.shape[0]

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    def xy(self):
        """``(features, labels)``: the split as ``ssvmbench.load_xy`` gives it and
        :class:`~ssvmbench_multiclass.estimator.MulticlassSSVM` takes it."""
        return self.features, self.labels

    def subset(self, idx) -> "MulticlassDataset":
        """The examples ``idx`` (in that order) as a new dataset (``data.subset`` and
        ``data.holdout`` of ssvmbench's :func:`~ssvmbench.data.load_split` and the run's
        warm-up call it)."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        return replace(self, features=self.features[idx], labels=self.labels[idx],
                       source_ids=self.source_ids[idx])


def random_multiclass(n, n_features, n_labels, density=0.5, seed=0, name="synthetic"):
    """``n`` random examples (not a paper dataset): sparse Gaussian features with a constant
    last feature, and labels of a random linear model plus noise (so they can be learnt)."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n_features)) < density
    mask[:, -1] = True
    X = np.where(mask, rng.normal(size=(n, n_features)), 0.0)
    X[:, -1] = 1.0
    truth = rng.normal(size=(n_features, n_labels))
    labels = np.argmax(X @ truth + rng.normal(scale=0.5, size=(n, n_labels)), axis=1)
    return MulticlassDataset(name=name, n_labels=n_labels, features=sp.csr_matrix(X),
                             labels=labels)


def letters(words, name="ocr_letters"):
    """Every token of a chain split (:class:`~ssvmbench.data.sequences.ChainDataset`) as one
    example: its feature row and its label; ``source_ids`` the index of its sequence."""
    X = sp.csr_matrix((words.feat_val, words.feat_idx, words.feat_ptr),
                      shape=(words.n_tokens, words.n_features))
    return MulticlassDataset(name=name, n_labels=words.n_labels, features=X,
                             labels=words.labels, label_names=tuple(words.label_names),
                             source_ids=np.repeat(np.arange(words.n), np.diff(words.offsets)))


def load_ocr_letters(root=None, fold=None, download=True) -> SplitData:
    """Train and test splits of the OCR letters: ssvmbench's OCR loader
    (:func:`ssvmbench.data.ocr.load`, same options: ``root``, ``fold``, ``download``), each
    letter of its words one example of 26 classes (BCFW Section 2 with ``|Y_i| = 26``)."""
    from ssvmbench.data import ocr  # imports pandas: only when the data is loaded
    words = ocr.load(root=root, fold=fold, download=download)
    return SplitData(train=letters(words.train), test=letters(words.test),
                     variant=f"{words.variant}; one example per letter",
                     checksum=words.checksum, source=words.source, metric="letter_accuracy")
