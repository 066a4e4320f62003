"""CoNLL-2003 as the Casimir authors prepare it (ssvmbench.data.casimir_ner): their counts,
tag order and epoch-0 numbers, and their per-position score (templates with the current and
the previous tag) equal to the chain score of our encoding for every labeling."""

import itertools

import numpy as np
import pytest

from ssvmbench.data import casimir_ner, load_split
from ssvmbench.data.conll import NER_COLUMNS, NER_TAGS, read_columns
from ssvmbench import metrics
from ssvmbench.tasks import chain, make_task

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


@pytest.mark.parametrize("test_split, f1", [("testb", 0.03127), ("testa", 0.01903)])
def test_the_authors_counts_tags_and_epoch_zero_numbers(conll2003_root, test_split, f1):
    """At w = 0 every loss-augmented max is the sentence length, so the train objective is
    the mean length 203621 / 14041 = 14.50189, and every token is tagged with the first tag
    (I-ORG): the authors' F1 is then 0.03127 on eng.testb and 0.01903 on eng.testa
    (docs/casimir_authors_code.md, computed from their code)."""
    split = load_split("conll2003_casimir", root=str(conll2003_root), test_split=test_split)
    assert (split.train.n, split.train.n_tokens) == (14041, 203621)
    assert split.train.label_names == ("I-ORG", "O", "I-MISC", "I-PER", "I-LOC", "B-LOC",
                                       "B-MISC", "B-ORG")
    assert split.metric == "tag_f1" and "unhashed" in split.variant
    train, test = make_task(split.train, "hamming"), make_task(split.test, "hamming")
    w = np.zeros(train.d)
    assert train.evaluate(w)[0] == pytest.approx(14.50189, abs=1e-5)
    predictions = test.evaluate(w, with_hinge=False)[2]
    assert not predictions.any()
    assert metrics.test_scores(split.test, predictions)["test_tag_f1"] == pytest.approx(f1, abs=1e-5)


def test_vocabulary_keeps_words_seen_three_times_in_first_appearance_order():
    assert casimir_ner.vocabulary(["b", "a", "b", "c", "a", "b", "a", "c"]) == {"b": 1, "a": 2}


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
