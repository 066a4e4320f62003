"""Token feature templates for the NLP chains (Sha & Pereira 2003 style, as used by BCFW
Section 6 via Tsochantaridis et al. 2005): word identity, lower-cased word, prefixes and
suffixes, word shape, the POS tag where the data have one, in a window around the token;
plus a constant feature. Features are mapped to ids by a dictionary built on the training
set (exact d, as SAP counts it) or hashed into 2^b buckets (as Casimir does), stored as CSR,
and cached on disk keyed by the data checksum and the template settings.
"""

import hashlib
import json
import re

import numpy as np
import pandas as pd

from ssvmbench.errors import UserError
from ssvmbench.paths import cache_dir

ATTRIBUTES = ("word", "lower", "pos", "shape", "prefix2", "prefix3", "suffix2", "suffix3",
              "suffix4", "chunk")
FORMAT = 1   # bump when the extraction changes, to invalidate caches


def word_shape(word):
    """``Xx``, ``xx``, ``X``, ``d``, ``x-x`` …: characters mapped to classes, runs merged."""
    shape = re.sub("[A-Z]+", "X", word)
    shape = re.sub("[a-z]+", "x", shape)
    return re.sub("[0-9]+", "d", shape)


def attribute(name, words, pos, chunk):
    """One attribute (a string) for every token of the corpus."""
    if name == "word":
        return words
    if name == "lower":
        return [w.lower() for w in words]
    if name == "pos":
        return pos
    if name == "chunk":
        return chunk
    if name == "shape":
        return [word_shape(w) for w in words]
    kind, size = name[:-1], int(name[-1])
    if kind == "prefix":
        return [w[:size].lower() for w in words]
    return [w[-size:].lower() for w in words]


def token_strings(sentences, spec):
    """Feature names per token: ``(token index, name)`` pairs as two arrays.

    ``sentences`` is a dict of token-aligned lists (``word``, optional ``pos``, ``chunk``)
    plus ``offsets``; ``spec`` has ``window`` (attributes used at offsets ``-radius..radius``),
    ``radius`` and ``current`` (attributes used at offset 0 only)."""
    offsets = sentences["offsets"]
    n_tokens = offsets[-1]
    sent_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    token_ids, names = [np.arange(n_tokens)], [np.full(n_tokens, "bias", dtype=object)]
    used = [(a, d) for a in spec["window"] for d in range(-spec["radius"], spec["radius"] + 1)]
    used += [(a, 0) for a in spec["current"] if (a, 0) not in used]
    cache = {}
    for name, shift in used:
        if name not in ATTRIBUTES:
            raise UserError(f"unknown feature attribute '{name}': choose from {list(ATTRIBUTES)}")
        if name not in cache:
            values = attribute(name, sentences["word"], sentences.get("pos"),
                               sentences.get("chunk"))
            if values is None:
                raise UserError(f"feature attribute '{name}' is not available for this dataset")
            cache[name] = np.asarray(values, dtype=object)
        source = np.arange(n_tokens) + shift
        inside = (source >= 0) & (source < n_tokens)
        inside[inside] &= sent_of[source[inside]] == sent_of[inside]
        values = np.where(inside, cache[name][np.clip(source, 0, n_tokens - 1)],
                          "<s>" if shift < 0 else "</s>")
        token_ids.append(np.arange(n_tokens))
        names.append(np.char.add(f"{name}[{shift}]=", values.astype(str)).astype(object))
    return np.concatenate(token_ids), np.concatenate(names)


def encode(train, test, spec):
    """CSR features ``(ptr, idx, val)`` for the train and test splits and ``n_features``."""
    train_tok, train_names = token_strings(train, spec)
    test_tok, test_names = token_strings(test, spec)
    if spec["mode"] == "hashing":
        bits = int(spec["hash_bits"])
        n_features = 2**bits
        train_ids = _hash(train_names, bits)
        test_ids = _hash(test_names, bits)
    elif spec["mode"] == "dictionary":
        codes, vocabulary = pd.factorize(train_names)
        if spec.get("min_count", 1) > 1:
            counts = np.bincount(codes)
            keep = counts >= spec["min_count"]
            vocabulary = vocabulary[keep]
        index = pd.Index(vocabulary)
        train_ids = index.get_indexer(train_names)
        test_ids = index.get_indexer(test_names)
        n_features = len(index)
    else:
        raise UserError(f"data.features.mode={spec['mode']}: choose dictionary or hashing")
    return (_csr(train_tok, train_ids, train["offsets"][-1], n_features),
            _csr(test_tok, test_ids, test["offsets"][-1], n_features), n_features)


def _hash(names, bits):
    return (pd.util.hash_array(names.astype(object)) % np.uint64(2**bits)).astype(np.int64)


def _csr(token_ids, feature_ids, n_tokens, n_features):
    """Rows per token with sorted, unique feature ids (unknown ids ``-1`` dropped)."""
    known = feature_ids >= 0
    keys = np.unique(token_ids[known].astype(np.int64) * n_features + feature_ids[known])
    tokens, features = np.divmod(keys, n_features)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(tokens, minlength=n_tokens))])
    return ptr.astype(np.int64), features.astype(np.int32), np.ones(len(features))


def cached(key_parts, compute):
    """``compute()`` (a dict of arrays) cached in ``cache_dir()/features`` under a key made
    of ``key_parts`` (data checksums, template settings, extraction format)."""
    key = hashlib.sha256(json.dumps([FORMAT, key_parts], sort_keys=True).encode()).hexdigest()
    path = cache_dir() / "features" / f"{key[:32]}.npz"
    if path.exists():
        with np.load(path) as stored:
            return {name: stored[name] for name in stored.files}
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **result)
    tmp.replace(path)
    return result
