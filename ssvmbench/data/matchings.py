"""Compact arrays for bipartite-matching data (word alignment, BCFW Section 6).

Example ``i`` is a pair of sentences of ``m = shapes[i, 0]`` English and ``m' = shapes[i, 1]``
French words; its ``m m'`` candidate edges (word pairs) are rows
``offsets[i]:offsets[i+1]`` of every per-edge array, edge ``(j, k)`` at row
``offsets[i] + j m' + k``. Each edge has a feature vector ``f_jk`` (a row of ``features``),
its membership in the gold Sure and Possible link sets (``possible`` includes ``sure``, the
convention of Och & Ney's AER) and in the training target matching ``target``.
"""

from dataclasses import dataclass

import numpy as np

from ssvmbench.data.sequences import _ranges


@dataclass(frozen=True)
class MatchingDataset:
    """One split of a word-alignment dataset.

    Attributes
    ----------
    offsets : int64 (n+1,)     edge offset of each sentence pair.
    shapes : int64 (n, 2)      English and French sentence lengths.
    features : float64 (N, F)  feature vector of each edge.
    target : bool (N,)         the training target (a matching: one edge per word at most).
    sure, possible : bool (N,) gold Sure links and Possible links (``sure`` within ``possible``).
    ids : (n,)                 identifiers of the pairs (line numbers of the gold file).
    feature_names : tuple      one name per feature column.
    """

    name: str
    offsets: np.ndarray
    shapes: np.ndarray
    features: np.ndarray
    target: np.ndarray
    sure: np.ndarray
    possible: np.ndarray
    ids: np.ndarray
    feature_names: tuple = ()

    def __post_init__(self):
        N = len(self.features)
        if self.offsets[0] != 0 or self.offsets[-1] != N:
            raise ValueError(f"{self.name}: offsets must span 0..{N}")
        if not np.array_equal(np.diff(self.offsets), self.shapes.prod(axis=1)):
            raise ValueError(f"{self.name}: each pair needs m x m' edges")
        if np.any(self.shapes < 1):
            raise ValueError(f"{self.name}: every sentence needs at least one word")
        if any(a.shape != (N,) for a in (self.target, self.sure, self.possible)):
            raise ValueError(f"{self.name}: target, sure and possible need one entry per edge")
        if np.any(self.sure & ~self.possible):
            raise ValueError(f"{self.name}: sure links must also be possible links")
        for i in range(self.n):
            y = self.target[self.offsets[i]:self.offsets[i + 1]].reshape(self.shapes[i])
            if y.sum(axis=0).max(initial=0) > 1 or y.sum(axis=1).max(initial=0) > 1:
                raise ValueError(f"{self.name}: the target of pair {i} is not a matching")
        if len(self.ids) != self.n:
            raise ValueError(f"{self.name}: one id per sentence pair")

    @property
    def n(self) -> int:
        """Number of sentence pairs (examples)."""
        return len(self.offsets) - 1

    @property
    def n_edges(self) -> int:
        return len(self.features)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    def subset(self, idx) -> "MatchingDataset":
        """The pairs ``idx`` (in that order) as a new dataset."""
        idx = np.asarray(idx, dtype=np.int64)
        rows = _ranges(self.offsets[idx], self.offsets[idx + 1])
        counts = self.offsets[idx + 1] - self.offsets[idx]
        return MatchingDataset(self.name, np.concatenate([[0], np.cumsum(counts)]).astype(
            np.int64), self.shapes[idx], self.features[rows], self.target[rows],
            self.sure[rows], self.possible[rows], self.ids[idx], self.feature_names)
