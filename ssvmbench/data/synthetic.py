"""Small random chain datasets for tests and quick experiments (not a paper dataset)."""

import numpy as np

from ssvmbench.data.sequences import ChainDataset


def random_chains(n, n_labels, n_features, lengths=(1, 5), density=0.5, seed=0):
    """``n`` sequences with lengths in ``lengths`` (inclusive), random sparse token
    features (sorted ids, Gaussian values) and labels that depend on the features."""
    rng = np.random.default_rng(seed)
    seq_len = rng.integers(lengths[0], lengths[1] + 1, size=n)
    n_tokens = int(seq_len.sum())
    mask = rng.random((n_tokens, n_features)) < density
    mask[:, -1] = True                                 # a constant-like last feature
    values = np.where(mask, rng.normal(size=(n_tokens, n_features)), 0.0)
    truth = rng.normal(size=(n_features, n_labels))
    labels = np.argmax(values @ truth + rng.normal(scale=0.5, size=(n_tokens, n_labels)), 1)
    rows, cols = np.nonzero(mask)
    return ChainDataset(
        name="synthetic",
        n_labels=n_labels,
        n_features=n_features,
        offsets=np.concatenate([[0], np.cumsum(seq_len)]).astype(np.int64),
        labels=labels.astype(np.int32),
        feat_ptr=np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64),
        feat_idx=cols.astype(np.int32),
        feat_val=values[rows, cols],
    )
