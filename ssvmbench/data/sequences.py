"""Compact arrays for sequence-labelling data (chains).

All sequences of a split are concatenated token-wise: sequence ``i`` owns tokens
``offsets[i]:offsets[i+1]``. Token features are stored as CSR rows
(``feat_ptr``, ``feat_idx``, ``feat_val``), so the same layout serves the dense
OCR pixels and the sparse NLP templates.
"""

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class ChainDataset:
    """One split of a sequence-labelling dataset.

    Attributes
    ----------
    offsets : int64 (n+1,)   token offset of each sequence.
    labels : int32 (N,)      gold label of each token, in ``0..n_labels-1``.
    feat_ptr : int64 (N+1,)  CSR row pointer of the token features.
    feat_idx : int32 (nnz,)  feature ids in ``0..n_features-1``.
    feat_val : float64 (nnz,) feature values.
    """

    name: str
    n_labels: int
    n_features: int
    offsets: np.ndarray
    labels: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    feat_val: np.ndarray
    label_names: tuple = field(default=())

    def __post_init__(self):
        n_tokens = len(self.labels)
        if self.offsets[0] != 0 or self.offsets[-1] != n_tokens:
            raise ValueError(f"{self.name}: offsets must span 0..{n_tokens}")
        if np.any(np.diff(self.offsets) < 1):
            raise ValueError(f"{self.name}: every sequence needs at least one token")
        if len(self.feat_ptr) != n_tokens + 1 or self.feat_ptr[-1] != len(self.feat_idx):
            raise ValueError(f"{self.name}: feat_ptr does not match the token count")
        if n_tokens and (self.labels.min() < 0 or self.labels.max() >= self.n_labels):
            raise ValueError(f"{self.name}: labels outside 0..{self.n_labels - 1}")

    @property
    def n(self) -> int:
        """Number of sequences (examples)."""
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.labels)

    # arrays with one entry per stored feature (CSR entry), cut along with the tokens
    ENTRY_ARRAYS = ("feat_idx", "feat_val")

    def xy(self):
        """The split as an estimator takes it (:func:`ssvmbench.data.xy.load_xy`): ``X`` one
        CSR matrix of token features per sequence (``T_i x n_features``), ``y`` one label
        array per sequence (``0..n_labels-1``; ``label_names`` names them)."""
        tokens = sp.csr_matrix((self.feat_val, self.feat_idx, self.feat_ptr),
                               shape=(self.n_tokens, self.n_features))
        X = [tokens[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]
        return X, np.split(self.labels, self.offsets[1:-1])

    def subset(self, idx) -> "ChainDataset":
        """The sequences ``idx`` (in that order) as a new dataset of the same kind."""
        idx = np.asarray(idx, dtype=np.int64)
        tokens = _ranges(self.offsets[idx], self.offsets[idx + 1])
        nz = _ranges(self.feat_ptr[tokens], self.feat_ptr[tokens + 1])
        seq_len = self.offsets[idx + 1] - self.offsets[idx]
        row_len = self.feat_ptr[tokens + 1] - self.feat_ptr[tokens]
        return replace(
            self,
            offsets=np.concatenate([[0], np.cumsum(seq_len)]).astype(np.int64),
            labels=self.labels[tokens],
            feat_ptr=np.concatenate([[0], np.cumsum(row_len)]).astype(np.int64),
            **{name: getattr(self, name)[nz] for name in self.ENTRY_ARRAYS})


@dataclass(frozen=True)
class HashedChainDataset(ChainDataset):
    """A chain whose joint features share ``n_features`` buckets through a linear hash (the
    Casimir authors' NER model, ``features.pyx``; docs/casimir_authors_code.md section 2):
    feature entry ``p`` of a token with label ``l`` adds ``feat_val[p]`` to bucket
    ``(feat_idx[p] + feat_stride[p] * l) mod n_features``, and the tag pair ``(a, b)`` of two
    neighbouring tokens adds 1 to bucket ``edge_buckets[(a + 1) * n_labels + b]``, with
    ``a = -1`` for the start of the sentence (a first-label bias; there is no last-label one).

    Extra attributes
    ----------------
    feat_stride : int32 (nnz,)            bucket step per label of each feature entry.
    edge_buckets : int64 ((L+1) * L,)     bucket of each tag pair, START first.
    """

    feat_stride: np.ndarray = None
    edge_buckets: np.ndarray = None

    xy = None   # its features are hashed per label: no X, y form a ChainSSVM could take

    ENTRY_ARRAYS = ("feat_idx", "feat_val", "feat_stride")

    def __post_init__(self):
        super().__post_init__()
        L, D = self.n_labels, self.n_features
        if self.feat_stride is None or len(self.feat_stride) != len(self.feat_idx):
            raise ValueError(f"{self.name}: one feat_stride per feature entry")
        if self.edge_buckets is None or len(self.edge_buckets) != (L + 1) * L:
            raise ValueError(f"{self.name}: edge_buckets needs {(L + 1) * L} entries")
        for array in (self.feat_idx, self.edge_buckets):
            if len(array) and (array.min() < 0 or array.max() >= D):
                raise ValueError(f"{self.name}: buckets outside 0..{D - 1}")
        if len(self.feat_stride) and not (0 <= self.feat_stride.min()
                                          and self.feat_stride.max() * (L - 1) < D):
            raise ValueError(f"{self.name}: strides must satisfy 0 <= stride (L - 1) < {D}")


def _ranges(starts, ends):
    """Concatenation of ``arange(s, e)`` for each pair, without a Python loop."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return (shift + np.arange(total)).astype(np.int64)


@dataclass(frozen=True)
class SplitData:
    """What a loader returns: train and test splits (:class:`ChainDataset`,
    :class:`~ssvmbench.data.boxes.BoxDataset` for box localization or
    :class:`~ssvmbench.data.matchings.MatchingDataset` for word alignment) plus provenance."""

    train: ChainDataset
    test: ChainDataset
    variant: str          # description of the split / variant (generated data: "SYNTHETIC ...")
    checksum: str         # sha256 of the source file(s) the splits were read from
    source: str           # path of the file that was read
    metric: str = "accuracy"   # test_metric: token "accuracy", "chunk_f1" (conlleval), "ap" (VOC),
    #                            "one_minus_aer" (word alignment)
