"""Edge features for word alignment, in the spirit of Taskar, Lacoste-Julien & Klein (2005)
and Taskar, Lacoste-Julien & Jordan (2006) (the features of BCFW Section 6's matching task,
d = 82 there): association of the word pair in a bitext (Dice coefficient), relative position
in the two sentences, and orthography.

The features of edge ``(j, k)`` between English word ``e_j`` and French word ``f_k`` of a
pair of lengths ``m, m'`` (:data:`FEATURE_NAMES`):

* ``bias``; ``dice`` = ``Dice(e_j, f_k) = 2 C(e, f) / (C(e) + C(f))`` with ``C`` the number of
  bitext sentence pairs holding the word(s) (Dice 1945, as in Taskar et al. 2005), and 10
  indicator bins of it (``[0, 0.1), ..., [0.9, 1]``);
* ``dice_best_e`` / ``dice_best_f`` / ``dice_best_both``: ``f_k`` has the highest positive
  Dice with ``e_j`` in the French sentence / ``e_j`` with ``f_k`` in the English one / both;
* ``dice_diagonal``: mean Dice of the diagonal neighbours ``(j-1, k-1)`` and ``(j+1, k+1)``;
* ``position`` = ``|(j + 1/2)/m - (k + 1/2)/m'|`` and 6 indicator bins of it (edges 0.05,
  0.1, 0.2, 0.3, 0.5);
* orthography: identical strings (lower-cased), common prefix of at least 3 / 4 / 5
  characters, common prefix length over the longer word, both punctuation, exactly one
  punctuation, both numbers, character length ratio (shorter / longer);
* ``freq_e``, ``freq_f``: ``log(1 + C(word)) / log(1 + bitext size)``, how frequent each word is
  (frequent words have unreliable Dice).
"""

import numpy as np

DICE_BINS = 10
POSITION_EDGES = (0.05, 0.1, 0.2, 0.3, 0.5)
FEATURE_NAMES = (
    ("bias", "dice") + tuple(f"dice_bin{b}" for b in range(DICE_BINS))
    + ("dice_best_e", "dice_best_f", "dice_best_both", "dice_diagonal", "position")
    + tuple(f"position_bin{b}" for b in range(len(POSITION_EDGES) + 1))
    + ("identical", "prefix3", "prefix4", "prefix5", "prefix_ratio", "both_punct",
       "one_punct", "both_number", "length_ratio", "freq_e", "freq_f"))


class DiceTable:
    """Sentence-level counts ``C(e)``, ``C(f)`` and ``C(e, f)`` over a bitext, kept only for
    the words and word pairs of ``pairs`` (the labelled sentence pairs), so that a bitext of
    a million pairs is counted in one vectorized pass per chunk of sentences."""

    def __init__(self, pairs, bitext, chunk=20000):
        self.e_ids = {w: q for q, w in enumerate(sorted({w for e, _ in pairs for w in e}))}
        self.f_ids = {w: q for q, w in enumerate(sorted({w for _, f in pairs for w in f}))}
        width = len(self.f_ids)
        self.width = width
        keys = np.unique(np.concatenate(
            [np.add.outer(self._ids(e, self.e_ids) * width, self._ids(f, self.f_ids)).ravel()
             for e, f in pairs]))
        self.keys = keys
        self.pair_count = np.zeros(len(keys), dtype=np.int64)
        self.e_count = np.zeros(len(self.e_ids), dtype=np.int64)
        self.f_count = np.zeros(width, dtype=np.int64)
        self.size = 0
        batch = []
        for e, f in bitext:
            self.size += 1
            ei = np.unique(self._ids(e, self.e_ids, known=True))
            fi = np.unique(self._ids(f, self.f_ids, known=True))
            self.e_count[ei] += 1
            self.f_count[fi] += 1
            batch.append(np.add.outer(ei * width, fi).ravel())
            if len(batch) == chunk:
                self._add_pairs(batch)
                batch = []
        self._add_pairs(batch)

    @staticmethod
    def _ids(words, vocab, known=False):
        ids = np.array([vocab.get(w, -1) for w in words], dtype=np.int64)
        return ids[ids >= 0] if known else ids

    def _add_pairs(self, batch):
        if not batch:
            return
        found = np.concatenate(batch)
        pos = np.searchsorted(self.keys, found)
        hit = pos < len(self.keys)
        hit[hit] = self.keys[pos[hit]] == found[hit]
        self.pair_count += np.bincount(pos[hit], minlength=len(self.keys))

    def dice(self, e, f):
        """``(Dice matrix m x m', C(e_j), C(f_k))`` of a labelled sentence pair."""
        ei, fi = self._ids(e, self.e_ids), self._ids(f, self.f_ids)
        pos = np.searchsorted(self.keys, np.add.outer(ei * self.width, fi))
        both = self.pair_count[pos]
        ce, cf = self.e_count[ei], self.f_count[fi]
        denominator = np.add.outer(ce, cf)
        return (np.divide(2.0 * both, denominator, out=np.zeros(both.shape),
                          where=denominator > 0), ce, cf)


def edge_features(e, f, table):
    """The ``(m m', F)`` feature rows of the edges ``(j, k)`` (row ``j m' + k``) of one
    sentence pair (module docstring)."""
    m, m2 = len(e), len(f)
    D, ce, cf = table.dice(e, f)
    cols = [np.ones((m, m2)), D]
    bins = np.minimum((D * DICE_BINS).astype(int), DICE_BINS - 1)
    cols += [bins == b for b in range(DICE_BINS)]
    best_e = (D == D.max(axis=1, keepdims=True)) & (D > 0)
    best_f = (D == D.max(axis=0, keepdims=True)) & (D > 0)
    padded = np.pad(D, 1)
    cols += [best_e, best_f, best_e & best_f, (padded[:-2, :-2] + padded[2:, 2:]) / 2]
    dist = np.abs(np.subtract.outer((np.arange(m) + 0.5) / m, (np.arange(m2) + 0.5) / m2))
    place = np.searchsorted(POSITION_EDGES, dist, side="right")
    cols += [dist] + [place == b for b in range(len(POSITION_EDGES) + 1)]
    el, fl = [w.lower() for w in e], [w.lower() for w in f]
    prefix = np.array([[_common_prefix(a, b) for b in fl] for a in el], dtype=float)
    longer = np.maximum.outer([len(w) for w in el], [len(w) for w in fl])
    shorter = np.minimum.outer([len(w) for w in el], [len(w) for w in fl])
    punct_e, punct_f = _flags(el, _is_punct), _flags(fl, _is_punct)
    number_e, number_f = _flags(el, _is_number), _flags(fl, _is_number)
    cols += [np.equal.outer(np.array(el, dtype=object), np.array(fl, dtype=object)),
             prefix >= 3, prefix >= 4, prefix >= 5, prefix / longer,
             np.logical_and.outer(punct_e, punct_f), np.logical_xor.outer(punct_e, punct_f),
             np.logical_and.outer(number_e, number_f), shorter / longer]
    scale = np.log1p(max(table.size, 1))
    cols += [np.repeat(np.log1p(ce)[:, None] / scale, m2, axis=1),
             np.repeat(np.log1p(cf)[None, :] / scale, m, axis=0)]
    return np.stack([np.asarray(c, dtype=float).ravel() for c in cols], axis=1)


def _common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _flags(words, test):
    return np.array([test(w) for w in words], dtype=bool)


def _is_punct(word):
    return not any(c.isalnum() for c in word)


def _is_number(word):
    return any(c.isdigit() for c in word)
