"""Small random chain datasets and word-aligned bitexts for tests and quick experiments (not
paper datasets)."""

import numpy as np

from ssvmbench.data.sequences import ChainDataset, HashedChainDataset


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


def random_hashed_chains(n, n_labels, n_features, n_buckets, lengths=(1, 5), seed=0):
    """:func:`random_chains` with its features and tag pairs hashed into ``n_buckets`` shared
    buckets (random bucket bases, strides 1 or 3 per entry): a small instance of the hashed
    chain, with collisions when ``n_buckets`` is small."""
    ds = random_chains(n, n_labels, n_features, lengths, seed=seed)
    rng = np.random.default_rng(seed + 1)
    bases = rng.integers(0, n_buckets, size=n_features)
    strides = rng.choice([1, 3], size=n_features)
    return HashedChainDataset(
        name="synthetic_hashed", n_labels=n_labels, n_features=n_buckets, offsets=ds.offsets,
        labels=ds.labels, feat_ptr=ds.feat_ptr, feat_idx=bases[ds.feat_idx].astype(np.int32),
        feat_val=ds.feat_val, feat_stride=strides[ds.feat_idx].astype(np.int32),
        edge_buckets=rng.integers(0, n_buckets, size=(n_labels + 1) * n_labels))


def random_bitext(n, vocab_size=40, lengths=(2, 8), seed=0):
    """``n`` random sentence pairs with a known word alignment (not a paper dataset):
    ``[(english, french)]`` token lists and ``[(sure, possible)]`` link sets of
    ``(english, french)`` positions (``possible`` includes ``sure``).

    English words are drawn Zipf-like from ``e0 .. e{vocab_size-1}`` plus ``.`` and numbers;
    each is translated by a fixed random dictionary (``.`` and numbers unchanged, so some
    pairs are identical strings) with probability 0.85, else dropped (unaligned, with a
    possible link to the next translated word); translations are locally reordered (adjacent
    swaps) and unaligned French noise words ``x*`` are inserted. The links are those of
    the translations (sure)."""
    rng = np.random.default_rng(seed)
    dictionary = rng.permutation(vocab_size)
    weights = 1.0 / np.arange(1, vocab_size + 1)
    weights /= weights.sum()
    pairs, links = [], []
    for _ in range(n):
        m = int(rng.integers(lengths[0], lengths[1] + 1))
        english = [f"e{q}" for q in rng.choice(vocab_size, size=m, p=weights)]
        for j in rng.choice(m, size=min(m, int(rng.integers(0, 2))), replace=False):
            english[j] = str(int(rng.integers(1, 100)))
        if rng.random() < 0.5:
            english[-1] = "."
        french, source, dropped = [], [], []
        for j, word in enumerate(english):
            if rng.random() < 0.15:
                dropped.append(j)
                continue
            french.append(f"f{dictionary[int(word[1:])]}" if word.startswith("e") else word)
            source.append(j)
            if rng.random() < 0.15:
                french.append(f"x{int(rng.integers(vocab_size))}")
                source.append(-1)
        for k in range(len(french) - 1):
            if rng.random() < 0.2 and source[k] >= 0 and source[k + 1] >= 0:
                french[k], french[k + 1] = french[k + 1], french[k]
                source[k], source[k + 1] = source[k + 1], source[k]
        if not french:
            french, source = ["x0"], [-1]
        sure = {(j, k) for k, j in enumerate(source) if j >= 0}
        possible = set(sure)
        for j in dropped:
            after = [k for k, s in enumerate(source) if s > j]
            if after:
                possible.add((j, after[0]))
        pairs.append((english, french))
        links.append((sure, possible))
    return pairs, links
