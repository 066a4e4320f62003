"""Token feature templates for the NLP chains (Sha & Pereira 2003 style, as used by BCFW
Section 6 via Tsochantaridis et al. 2005): word identity, lower-cased word, prefixes and
suffixes, word shape, the POS tag where the data have one, in a window around the token;
conjunctions of attributes at several offsets (``"word[-1]|word[0]"``: word bigrams and the
like, to reach the d of SAP Table I); plus a constant feature. Features are mapped to ids by
a dictionary built on the training set (exact d, as SAP counts it) or hashed into 2^b
buckets (as Casimir does), stored as CSR, and cached on disk keyed by the data checksum and
the template settings.

Extraction works on integer codes: each attribute is coded once per word type, a
template's value at every token is one integer (mixed radix over its parts), and feature
names are spelled out only for the distinct values a hashing run needs.
"""

import hashlib
import json
import re
import sys
import time
import zipfile

import numpy as np
import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_atomically
from ssvmbench.common.paths import cache_dir

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


_PART = re.compile(r"([a-z0-9]+)\[([+-]?[0-9]+)\]")
TEMPLATE_FORM = ("attribute[offset] parts joined by '|', e.g. 'word[-1]|word[0]' or "
                 "'pos[-1]|pos[0]|pos[1]'")


def parse_template(template):
    """A conjunction template -> ``(label, parts)``: ``"word[-1] | pos[+0]"`` gives
    ``("word[-1]|pos[0]", [("word", -1), ("pos", 0)])``. One part is an attribute at one
    offset (named like a window feature)."""
    def bad(why):
        return UserError(f"data.features_spec.conjunctions: bad template {template!r} ({why}); "
                         f"expected {TEMPLATE_FORM}, attributes from {list(ATTRIBUTES)}")
    if not isinstance(template, str):
        raise bad("not a string")
    parts = []
    for piece in re.sub(r"\s+", "", template).split("|"):
        match = _PART.fullmatch(piece)
        if not match:
            raise bad(f"cannot read part {piece!r}")
        if match.group(1) not in ATTRIBUTES:
            raise bad(f"unknown attribute '{match.group(1)}'")
        parts.append((match.group(1), int(match.group(2))))
    return "|".join(f"{a}[{s}]" for a, s in parts), parts


def templates(spec):
    """The feature templates of ``spec`` in extraction order, as ``(label, parts)``: the
    constant ``bias`` (no parts), ``window`` attributes at offsets ``-radius..radius``,
    ``current`` attributes at offset 0, then ``conjunctions``; duplicates dropped."""
    for name in list(spec["window"]) + list(spec["current"]):
        if name not in ATTRIBUTES:
            raise UserError(f"unknown feature attribute '{name}': choose from {list(ATTRIBUTES)}")
    used = [(a, d) for a in spec["window"] for d in range(-spec["radius"], spec["radius"] + 1)]
    used += [(a, 0) for a in spec["current"] if (a, 0) not in used]
    result = [("bias", [])] + [(f"{a}[{d}]", [(a, d)]) for a, d in used]
    conjunctions = spec.get("conjunctions") or []
    if isinstance(conjunctions, str):
        conjunctions = [conjunctions]
    seen = {label for label, _ in result}
    for template in conjunctions:
        label, parts = parse_template(template)
        if label not in seen:
            seen.add(label)
            result.append((label, parts))
    return result


class _Columns:
    """The attributes of the tokens of several tables (concatenated), as integer codes into
    one string table per attribute that also holds the boundary markers ``<s>`` and ``</s>``
    (so a token spelled ``<s>`` and the start boundary are one value, as with strings)."""

    def __init__(self, tables):
        self.tables = tables
        self.starts = np.cumsum([0] + [int(t["offsets"][-1]) for t in tables])
        self.sent_of = np.concatenate([
            np.repeat(np.arange(len(t["offsets"]) - 1), np.diff(t["offsets"])) + k
            for k, t in zip(np.cumsum([0] + [len(t["offsets"]) for t in tables]), tables)])
        words = np.concatenate([np.asarray(t["word"], dtype=object) for t in tables])
        self.word_codes, self.words = pd.factorize(words)
        self.codes, self.values, self.bounds, self.parts = {}, {}, {}, {}

    def attribute(self, name, template):
        """``(codes per token, values by code, (<s> code, </s> code))`` of an attribute.
        Derived attributes (lower, shape, affixes) are computed once per word type."""
        if name not in self.codes:
            if name in ("pos", "chunk"):
                if any(t.get(name) is None for t in self.tables):
                    raise UserError(f"feature attribute '{name}' (template '{template}') is "
                                    "not available for this dataset")
                column = np.concatenate([np.asarray(t[name], dtype=object)
                                         for t in self.tables])
                codes, values = pd.factorize(column)
            else:
                codes = self.word_codes
                values = np.asarray(attribute(name, list(self.words), None, None),
                                    dtype=object)
            ids, self.values[name] = pd.factorize(
                np.concatenate([values, np.array(["<s>", "</s>"], dtype=object)]))
            ids = ids.astype(np.int32)
            self.codes[name] = ids[:-2][codes]
            self.bounds[name] = (ids[-2], ids[-1])
        return self.codes[name], self.values[name], self.bounds[name]

    def part(self, name, shift, template):
        """Codes of attribute ``name`` at offset ``shift`` of every token (boundary codes
        outside the sentence)."""
        if (name, shift) not in self.parts:
            codes, _, (start, end) = self.attribute(name, template)
            n = len(codes)
            source = np.arange(n) + shift
            inside = (source >= 0) & (source < n)
            inside[inside] &= self.sent_of[source[inside]] == self.sent_of[inside]
            self.parts[name, shift] = np.where(inside, codes[np.clip(source, 0, n - 1)],
                                               start if shift < 0 else end).astype(np.int32)
        return self.parts[name, shift]

    def keys(self, label, parts):
        """One integer per token that identifies the template's value (the feature name)."""
        key = np.zeros(len(self.word_codes), dtype=np.int64)
        bound = 1
        for name, shift in parts:
            codes = self.part(name, shift, label)
            size = len(self.values[name])
            if bound * size >= 2**62:            # keep the mixed radix key inside int64
                key = pd.factorize(key)[0].astype(np.int64)
                bound = int(key.max()) + 1
            key = key * size + codes
            bound *= size
        return key

    def names(self, label, parts, tokens):
        """Feature names (strings) of the template at the given token positions."""
        if not parts:
            return np.full(len(tokens), label, dtype=object)
        joined = None
        for name, shift in parts:
            codes = self.part(name, shift, label)[tokens]
            values = self.values[name][codes]
            joined = values if joined is None else joined + "|" + values
        return label + "=" + joined


def token_strings(sentences, spec):
    """Feature names per token: ``(token index, name)`` pairs as two arrays.

    ``sentences`` is a dict of token-aligned lists (``word``, optional ``pos``, ``chunk``)
    plus ``offsets``; ``spec`` has ``window`` (attributes used at offsets ``-radius..radius``),
    ``radius``, ``current`` (attributes used at offset 0 only) and optionally
    ``conjunctions`` (templates such as ``"word[-1]|word[0]"``: one feature per token named
    by the attribute values at those offsets joined by ``|``, e.g.
    ``word[-1]|word[0]=<s>|The``). Sentence boundaries read as ``<s>`` / ``</s>``."""
    columns = _Columns([sentences])
    n_tokens = int(sentences["offsets"][-1])
    tokens = np.arange(n_tokens)
    found = templates(spec)
    names = [columns.names(label, parts, tokens) for label, parts in found]
    return np.tile(tokens, len(found)), np.concatenate(names).astype(object)


def encode(train, test, spec):
    """CSR features ``(ptr, idx, val)`` for the train and test splits and ``n_features``.

    The ids are those of the feature names of :func:`token_strings`: in dictionary mode,
    numbered in order of first appearance in the training data, template by template
    (test features unseen in training, or seen fewer than ``min_count`` times, dropped); in
    hashing mode, the names' hashes modulo ``2**hash_bits``. Names are never built per
    token: each template's values are integer keys, and only a template's distinct values
    are spelled out (for hashing)."""
    mode = spec["mode"]
    if mode not in ("dictionary", "hashing"):
        raise UserError(f"data.features.mode={mode}: choose dictionary or hashing")
    found = templates(spec)
    columns = _Columns([train, test])
    n_train, n_all = columns.starts[1], columns.starts[2]
    ids = np.empty((n_all, len(found)), dtype=np.int32)
    n_features = 2**int(spec["hash_bits"]) if mode == "hashing" else 0
    for j, (label, parts) in enumerate(found):
        local, distinct = pd.factorize(columns.keys(label, parts))
        if mode == "hashing":
            first = np.unique(local, return_index=True)[1]
            names = columns.names(label, parts, first)
            ids[:, j] = _hash(names, int(spec["hash_bits"]))[local]
            continue
        seen = int(local[:n_train].max()) + 1 if n_train else 0   # train values come first
        keep = np.zeros(len(distinct), dtype=bool)
        if spec.get("min_count", 1) > 1:
            keep[:seen] = np.bincount(local[:n_train], minlength=seen) >= spec["min_count"]
        else:
            keep[:seen] = True
        number = np.where(keep, np.cumsum(keep) - 1 + n_features, -1)
        ids[:, j] = number[local]
        n_features += int(keep.sum())
    return (_csr(ids[:n_train]), _csr(ids[n_train:]), n_features)


def _hash(names, bits):
    return (pd.util.hash_array(names.astype(object)) % np.uint64(2**bits)).astype(np.int64)


def _csr(ids):
    """CSR rows from a ``(tokens, templates)`` table of feature ids: sorted, unique (hash
    collisions merged), unknown ids ``-1`` dropped."""
    ids = np.sort(ids, axis=1)
    keep = ids >= 0
    keep[:, 1:] &= ids[:, 1:] != ids[:, :-1]
    ptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    return ptr.astype(np.int64), ids[keep].astype(np.int32), np.ones(int(ptr[-1]))


ORPHAN_AGE_S = 3600     # a temporary cache file this old belongs to no live process


def cached(key_parts, compute):
    """``compute()`` (a dict of arrays) cached in ``cache_dir()/features`` under a key made
    of ``key_parts`` (data checksums, template settings, extraction format). Safe when
    several processes (a parallel sweep) build the same key at once. A cache file that does
    not read (truncated, empty) is rebuilt; a write that fails or is interrupted leaves no
    temporary file."""
    key = hashlib.sha256(json.dumps([FORMAT, key_parts], sort_keys=True).encode()).hexdigest()
    path = cache_dir() / "features" / f"{key[:32]}.npz"
    if path.exists():
        try:
            with np.load(path) as stored:
                return {name: stored[name] for name in stored.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            print(f"{path}: unreadable feature cache ({type(err).__name__}: {err}); "
                  "rebuilding it", file=sys.stderr)
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    for orphan in path.parent.glob("*.tmp"):     # left by a killed process (SIGKILL)
        if time.time() - orphan.stat().st_mtime > ORPHAN_AGE_S:
            orphan.unlink(missing_ok=True)
    write_atomically(path, lambda out: np.savez(out, **result))  # concurrent runs may build
    return result                                                 # the same key
