"""CoNLL-2003 as the Casimir authors prepare it (ssvmbench.data.casimir_ner): their counts,
tag order and epoch-0 numbers, and their per-position score (templates with the current and
the previous tag) equal to the chain score of our encoding for every labeling."""

import itertools

import numpy as np
import pytest
from helpers.reference import phi_hashed

from ssvmbench.data import casimir_ner, load_split
from ssvmbench.data.conll import NER_COLUMNS, NER_TAGS, read_columns, read_conll2003
from ssvmbench.tasks import chain, make_task, metrics

TEXT = """EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER

EU NNP I-NP I-ORG
call NN I-NP O
"""


@pytest.mark.parametrize("hashing", [True, False])
@pytest.mark.parametrize("test_split, f1", [("testb", 0.03127), ("testa", 0.01903)])
def test_the_authors_counts_tags_and_epoch_zero_numbers(conll2003_root, test_split, f1,
                                                         hashing):
    """At w = 0 every loss-augmented max is the sentence length, so the train objective is
    the mean length 203621 / 14041 = 14.50189, and every token is tagged with the first tag
    (I-ORG): the authors' F1 is then 0.03127 on eng.testb and 0.01903 on eng.testa
    (docs/casimir_authors_code.md, computed from their code)."""
    split = load_split("conll2003_casimir", root=str(conll2003_root), test_split=test_split,
                       hashing=hashing)
    assert (split.train.n, split.train.n_tokens) == (14041, 203621)
    assert split.train.label_names == ("I-ORG", "O", "I-MISC", "I-PER", "I-LOC", "B-LOC",
                                       "B-MISC", "B-ORG")
    assert split.metric == "tag_f1"
    assert ("hashed into 65535 buckets" if hashing else "unhashed") in split.variant
    train, test = make_task(split.train, "hamming"), make_task(split.test, "hamming")
    assert train.d == (65535 if hashing else 8 * 79316 + 8 * 8 + 2 * 8)
    w = np.zeros(train.d)
    assert train.evaluate(w)[0] == pytest.approx(14.50189, abs=1e-5)
    predictions = test.evaluate(w, with_hinge=False)[2]
    assert not predictions.any()
    assert metrics.test_scores(split.test, predictions)["test_tag_f1"] == pytest.approx(f1, abs=1e-5)


def test_vocabulary_keeps_words_seen_three_times_in_first_appearance_order():
    assert casimir_ner.vocabulary(["b", "a", "b", "c", "a", "b", "a", "c"]) == {
        "b": 1, "a": 2, "START": -1, "STOP": -2}


def test_the_words_start_and_stop_take_the_padding_ids_unless_frequent(conll2003_root):
    """The authors' reader gives the words ``START`` and ``STOP`` the ids of the sentence
    padding (-1, -2) unless they are frequent: eng.train's sentence 2187 ("SOCCER - ... START
    NEW SEASON WITH A WIN .") has ``START`` once, and their objective on it differed from ours
    until the loader did the same (found by scripts/peer_casimir.sh)."""
    assert casimir_ner.vocabulary(["START"] * 3 + ["STOP"]) == {"START": 1, "STOP": -2}
    table = read_conll2003(str(conll2003_root), "testb", download=False)[0]["train"]
    vocab = casimir_ner.vocabulary(table["word"])
    a, b = table["offsets"][2187], table["offsets"][2188]
    words = table["word"][a:b]
    assert words[:4] == ["SOCCER", "-", words[2], "START"] and words[-1] == "."
    assert [vocab.get(w, casimir_ner.UNKNOWN) for w in words][3] == casimir_ner.START


def authors_score(obs, y, W, first, transition):
    """The authors' score sum_i <w, phi_i(x, y_{i-1}, y_i)> with every (template,
    observation, tag) its own weight ``W``: templates 0-10 with ``y_i``, templates 11-21 (the
    same observations of position i) with ``y_{i-1}``, the tag pair, START before the
    first token (label-independent terms left out)."""
    total = first[y[0]]
    for i, labels in enumerate(obs):
        for k, o in enumerate(labels):
            if o is None:
                continue
            total += W.get((k, o, y[i]), 0.0)
            if i > 0:
                total += W.get((11 + k, o, y[i - 1]), 0.0)
        if i > 0:
            total += transition[y[i - 1], y[i]]
    return total


def test_previous_tag_templates_are_unary_features_of_the_previous_token():
    """Our encoding scores every labeling of every sentence as the authors' definition does."""
    table = read_columns(TEXT, "text", NER_COLUMNS, 3, set(NER_TAGS))
    arrays = casimir_ner.encode({"train": table, "test": table})
    tags = casimir_ner.first_appearance(table["ner"])
    L, F = len(tags), int(arrays["n_features"])
    vocab = casimir_ner.vocabulary(table["word"])
    pos_ids = {p: k for k, p in enumerate(casimir_ner.first_appearance(table["pos"]))}
    chunk_ids = {c: k for k, c in enumerate(casimir_ner.first_appearance(table["chunk"]))}
    obs = casimir_ner.observations(table, vocab, pos_ids, chunk_ids)
    rng = np.random.default_rng(0)
    keys = {}
    for s in range(len(table["offsets"]) - 1):
        a, b = table["offsets"][s], table["offsets"][s + 1]
        for t in range(a, b):
            for key in casimir_ner.token_templates(obs[a:b], t - a, t == b - 1):
                keys.setdefault(key, len(keys))
    assert len(keys) == F
    w = rng.normal(size=F * L + L * L + 2 * L)
    w[F * L + L * L + L:] = 0.0                       # the authors have no last-label bias
    W = {(k, o, label): w[j * L + label] for (k, o), j in keys.items() for label in range(L)}
    transition = w[F * L:F * L + L * L].reshape(L, L)
    first = w[F * L + L * L:F * L + L * L + L]
    data = (table["offsets"], np.zeros(len(obs), dtype=np.int32), arrays["train_ptr"],
            arrays["train_idx"], np.ones(len(arrays["train_idx"])))
    U = np.empty((5, L))
    for s in range(len(table["offsets"]) - 1):
        a, b = table["offsets"][s], table["offsets"][s + 1]
        T = chain.unary_scores(w, 1.0, (F, L), data, s, U)
        for y in itertools.product(range(L), repeat=T):
            y = np.array(y, dtype=np.int32)
            ours = chain.labeling_score(w, 1.0, (F, L), U, T, y)
            assert ours == pytest.approx(authors_score(obs[a:b], y, W, first, transition))


def authors_hash(a1, a2, a3):
    """``hash_function`` of features.pyx, with dim = 2^16 - 1."""
    h = 17
    for a in (a1, a2, a3):
        h = 31 * h + a
    return h % 65535


def authors_features(words, i, pos, chunk, y_prev, y_cur):
    """The 27 indices of ``_generate_features`` (docs/casimir_authors_code.md section 2.2),
    written out slot by slot."""
    n = len(words)
    prev_word, next_word = (words[i - 1] if i > 0 else -1), (words[i + 1] if i < n - 1 else -2)
    prev_pos, next_pos = (pos[i - 1] if i > 0 else -1), (pos[i + 1] if i < n - 1 else -2)
    prev_chunk = chunk[i - 1] if i > 0 else -1
    next_chunk = chunk[i + 1] if i < n - 1 else -2
    far_left = words[i - 2] if i > 1 else None
    far_right = words[i + 2] if i < n - 2 else None
    h = authors_hash
    return [
        h(0, words[i], y_cur), h(1, words[i], y_prev),
        h(2, far_left, y_cur) if far_left is not None else 0,
        h(3, far_left, y_prev) if far_left is not None else 0,
        h(4, far_right, y_cur) if far_right is not None else 0,
        h(5, far_right, y_prev) if far_right is not None else 0,
        h(6, prev_word, y_cur), h(7, prev_word, y_prev),
        h(8, next_word, y_cur), h(9, next_word, y_prev),
        h(10, y_prev, y_cur),
        h(11, prev_pos, pos[i]), h(12, pos[i], next_pos),
        h(13, prev_chunk, chunk[i]), h(14, chunk[i], next_chunk),
        h(15, y_cur, pos[i]), h(16, y_cur, next_pos), h(17, y_cur, prev_pos),
        h(18, y_cur, chunk[i]), h(19, y_cur, next_chunk), h(20, y_cur, prev_chunk),
        h(21, y_prev, pos[i]), h(22, y_prev, next_pos), h(23, y_prev, prev_pos),
        h(24, y_prev, chunk[i]), h(25, y_prev, next_chunk), h(26, y_prev, prev_chunk)]


def test_hashed_features_are_the_authors_up_to_labeling_independent_terms(conll2003_root):
    """``phi(y) - phi(y')`` of our hashed encoding equals the authors' count vectors
    (``generate_feature_vector``) for random labelings of real sentences of both splits:
    the same buckets, collisions included; what we leave out is the same for every labeling."""
    split = load_split("conll2003_casimir", root=str(conll2003_root))
    tables, _, _ = read_conll2003(str(conll2003_root), "testb", download=False)
    train = tables["train"]
    counts = {}
    for word in train["word"]:
        counts[word] = counts.get(word, 0) + 1
    word_id = {}
    for word in counts:                      # reader.py: count > 2, first-occurrence order
        if counts[word] > 2:
            word_id[word] = len(word_id) + 1
    pos_id = {p: k for k, p in enumerate(dict.fromkeys(train["pos"]))}
    chunk_id = {c: k for k, c in enumerate(dict.fromkeys(train["chunk"]))}
    rng = np.random.default_rng(0)
    for dataset, table in ((split.train, train), (split.test, tables["test"])):
        task = make_task(dataset)
        for s in list(range(12)) + [int(np.argmax(np.diff(table["offsets"])))]:
            a, b = table["offsets"][s], table["offsets"][s + 1]
            words = [word_id.get(w, 0) for w in table["word"][a:b]]
            pos = [pos_id[p] for p in table["pos"][a:b]]
            chunk = [chunk_id[c] for c in table["chunk"][a:b]]

            def authors_phi(y):
                phi = np.zeros(65535)
                for i in range(b - a):
                    for q in authors_features(words, i, pos, chunk,
                                              y[i - 1] if i > 0 else -1, y[i]):
                        phi[q] += 1
                return phi
            for _ in range(3):
                y, z = rng.integers(0, 8, size=(2, b - a))
                np.testing.assert_array_equal(phi_hashed(task, s, y) - phi_hashed(task, s, z),
                                              authors_phi(y) - authors_phi(z))
