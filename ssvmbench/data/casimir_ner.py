"""CoNLL-2003 NER as the Casimir authors prepare it (Pillutla et al., NeurIPS 2018, Section 4;
their code: krishnap25/casimir, ``casimir/data/named_entity_recognition/reader.py`` and
``features.pyx``; docs/casimir_authors_code.md, sections 1-2 and 10).

Reader: ``-DOCSTART-`` lines dropped (n = 14,041 training sentences); the tags of the files
(IOB1), numbered in order of first appearance in eng.train (8 tags: I-ORG, O, I-MISC, I-PER,
I-LOC, B-LOC, B-MISC, B-ORG); case-sensitive words seen at least 3 times in eng.train keep
their identity, the others are one unknown word; POS and chunk tags as they are.

Templates (the authors' 27 slots; ``i`` a position, ``START`` / ``STOP`` past the ends):
with the tag ``y_i``: the words at ``i-2 .. i+2`` (``i +- 2`` only inside the sentence),
the POS and chunk tags at ``i-1, i, i+1``; with the previous tag ``y_{i-1}``: the same eleven
observations of position ``i`` again. A template with ``y_{i-1}`` is a function of the tag of
token ``i - 1`` alone, so it is a unary feature of token ``i - 1`` (at ``i = 0`` it multiplies
``START`` and is the same for every labeling); the tag pair ``(y_{i-1}, y_i)`` is the chain's
transition, ``(START, y_0)`` its first-label bias. Slots 11-14 (observations alone) cancel in
``phi(y) - phi(y_i)`` and are left out.

``hashing=True`` (the authors' model): every (slot, observation, tag) and tag pair goes to
bucket ``(506447 + 961 slot + 31 a2 + a3) mod (2^16 - 1)`` of ``features.pyx``, with
``(a2, a3)`` = (observation, tag) for the word slots and (tag, observation) for the POS and
chunk slots, so weights are tied as theirs are (a
:class:`~ssvmbench.data.sequences.HashedChainDataset`; no last-label bias). ``hashing=False``:
every (template, observation) seen in eng.train is a feature of its own (a chain with one
weight per feature and tag, plus a last-label bias the authors' model lacks).
"""

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data import features
from ssvmbench.data.conll import read_conll2003
from ssvmbench.data.sequences import ChainDataset, HashedChainDataset, SplitData

MIN_WORD_COUNT = 3            # reader.py: words with count > 2 keep their identity
START, STOP, UNKNOWN = -1, -2, 0
CACHE_VERSION = "casimir-templates-3"   # 3: the words START and STOP take the padding ids

# features.pyx: hash_function(slot, a2, a3) = (17 * 31^3 + 961 slot + 31 a2 + a3) mod dim
N_BUCKETS = 2**16 - 1
HASH_OFFSET = 17 * 31**3
TRANSITION_SLOT = 10
# the authors' slot of each of the eleven observations (words at -2..+2, POS and chunk at
# -1, 0, +1) with the current tag and with the previous tag; word slots hash (observation,
# tag), the POS and chunk slots (tag, observation)
SLOT_WITH_TAG = (2, 6, 0, 8, 4, 17, 15, 16, 20, 18, 19)
SLOT_WITH_PREVIOUS_TAG = (3, 7, 1, 9, 5, 23, 21, 22, 26, 24, 25)


def load(root=None, test_split="testb", download=True, hashing=True) -> SplitData:
    """Train (eng.train) and test (eng.testb, or eng.testa, the authors' dev set) splits."""
    tables, checksum, source = read_conll2003(root, test_split, download)
    tags = first_appearance(tables["train"]["ner"])
    unseen = set(tables["test"]["ner"]) - set(tags)
    if unseen:
        raise UserError(f"eng.{test_split}: tags {sorted(unseen)} never occur in eng.train")
    encoder, model = ((encode_hashed, f"hashed into {N_BUCKETS} buckets as theirs") if hashing
                      else (encode, "unhashed"))
    arrays = features.cached([checksum, CACHE_VERSION, hashing],
                             lambda: encoder(tables, len(tags)))
    index = {tag: k for k, tag in enumerate(tags)}

    def dataset(split):
        idx = arrays[f"{split}_idx"]
        common = dict(
            name="conll2003", n_labels=len(tags), n_features=int(arrays["n_features"]),
            offsets=tables[split]["offsets"],
            labels=np.array([index[t] for t in tables[split]["ner"]], dtype=np.int32),
            feat_ptr=arrays[f"{split}_ptr"], feat_idx=idx, feat_val=np.ones(len(idx)),
            label_names=tuple(tags))
        if hashing:
            return HashedChainDataset(**common, feat_stride=arrays[f"{split}_stride"],
                                      edge_buckets=arrays["edge_buckets"])
        return ChainDataset(**common)
    if not hashing:
        model += f" ({int(arrays['n_features'])} features per label)"
    return SplitData(train=dataset("train"), test=dataset("test"),
                     variant=f"conll2003: eng.train / eng.{test_split}; the Casimir authors' "
                             f"reader and templates, {model}",
                     checksum=checksum, source=source, metric="tag_f1")


def first_appearance(values):
    """Distinct values in order of first appearance (the authors' id maps)."""
    return list(dict.fromkeys(values))


def vocabulary(words):
    """Word ids: 1, 2, ... for words seen at least ``MIN_WORD_COUNT`` times in first-appearance
    order; every other word is ``UNKNOWN`` (0), except the words ``START`` and ``STOP``, which
    keep the ids of the sentence padding, ``START`` / ``STOP`` (reader.py sets
    ``word_to_idx['START'], word_to_idx['STOP'] = -1, -2`` before the frequent words: eng.train
    has ``START`` once, in sentence 2187)."""
    counts = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    kept = [w for w in counts if counts[w] >= MIN_WORD_COUNT]
    return {"START": START, "STOP": STOP, **{word: k + 1 for k, word in enumerate(kept)}}


def observations(table, vocab, pos_ids, chunk_ids):
    """Per token, the eleven observations of the authors' templates at its position: words at
    -2, -1, 0, +1, +2 (None where +-2 falls outside: the authors' literal index 0, the same
    for every labeling), then POS and chunk at -1, 0, +1 (``START`` / ``STOP`` outside)."""
    offsets = table["offsets"]
    word = [vocab.get(w, UNKNOWN) for w in table["word"]]
    pos = [pos_ids.get(p, len(pos_ids)) for p in table["pos"]]
    chunk = [chunk_ids.get(c, len(chunk_ids)) for c in table["chunk"]]
    out = []
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        for t in range(a, b):
            def at(seq, k, far=False):
                if a <= t + k < b:
                    return seq[t + k]
                return None if far else (START if k < 0 else STOP)
            out.append((at(word, -2, True), at(word, -1), word[t], at(word, 1),
                        at(word, 2, True), at(pos, -1), pos[t], at(pos, 1),
                        at(chunk, -1), chunk[t], at(chunk, 1)))
    return out


def token_templates(obs, t, last):
    """Keys ``(template, observation)`` of token ``t``'s unary features: its own eleven with the
    current tag (templates 0-10) and, unless it ends the sentence, the eleven of the next
    position with the previous tag (templates 11-21)."""
    keys = [(k, o) for k, o in enumerate(obs[t]) if o is not None]
    if not last:
        keys += [(11 + k, o) for k, o in enumerate(obs[t + 1]) if o is not None]
    return keys


def encode(tables, n_labels=None):
    """CSR feature rows of both splits; the dictionary of (template, observation) keys is
    built on eng.train (a key unseen there has no weight). ``n_labels``: unused (the
    signature of :func:`encode_hashed`)."""
    train = tables["train"]
    vocab = vocabulary(train["word"])
    pos_ids = {p: k for k, p in enumerate(first_appearance(train["pos"]))}
    chunk_ids = {c: k for k, c in enumerate(first_appearance(train["chunk"]))}
    index, arrays = {}, {}
    for split in ("train", "test"):
        table = tables[split]
        obs = observations(table, vocab, pos_ids, chunk_ids)
        ends = set(table["offsets"][1:] - 1)
        ptr, idx = [0], []
        for t in range(len(obs)):
            for key in token_templates(obs, t, t in ends):
                j = index.setdefault(key, len(index)) if split == "train" else index.get(key)
                if j is not None:
                    idx.append(j)
            ptr.append(len(idx))
        arrays[f"{split}_ptr"] = np.array(ptr, dtype=np.int64)
        arrays[f"{split}_idx"] = np.array(idx, dtype=np.int32)
    arrays["n_features"] = np.array(len(index))
    return arrays


def bucket_base(slot, observation):
    """``(feat_idx, feat_stride)`` of a (slot, observation) pair: with tag ``l`` it hashes to
    ``(feat_idx + feat_stride * l) mod N_BUCKETS`` (``features.pyx``; word slots hash
    (observation, tag), the others (tag, observation))."""
    if slot < 10:
        return (HASH_OFFSET + 961 * slot + 31 * observation) % N_BUCKETS, 1
    return (HASH_OFFSET + 961 * slot + observation) % N_BUCKETS, 31


def encode_hashed(tables, n_labels):
    """Bucketed CSR rows of both splits (every key hashed, none dropped, as the authors do at
    test time too) and the buckets of the tag pairs, START first."""
    train = tables["train"]
    vocab = vocabulary(train["word"])
    pos_ids = {p: k for k, p in enumerate(first_appearance(train["pos"]))}
    chunk_ids = {c: k for k, c in enumerate(first_appearance(train["chunk"]))}
    arrays = {}
    for split in ("train", "test"):
        table = tables[split]
        obs = observations(table, vocab, pos_ids, chunk_ids)
        ends = set(table["offsets"][1:] - 1)
        ptr, idx, stride = [0], [], []
        for t in range(len(obs)):
            for key in token_templates(obs, t, t in ends):
                k, o = key[0] % 11, key[1]
                slot = (SLOT_WITH_TAG if key[0] < 11 else SLOT_WITH_PREVIOUS_TAG)[k]
                base, step = bucket_base(slot, o)
                idx.append(base)
                stride.append(step)
            ptr.append(len(idx))
        arrays[f"{split}_ptr"] = np.array(ptr, dtype=np.int64)
        arrays[f"{split}_idx"] = np.array(idx, dtype=np.int32)
        arrays[f"{split}_stride"] = np.array(stride, dtype=np.int32)
    arrays["edge_buckets"] = np.array(
        [(HASH_OFFSET + 961 * TRANSITION_SLOT + 31 * a + b) % N_BUCKETS
         for a in range(-1, n_labels) for b in range(n_labels)], dtype=np.int64)
    arrays["n_features"] = np.array(N_BUCKETS)
    return arrays
