"""Feature templates: conjunctions (names, boundaries, bad templates) and the vectorized
encoding checked against the feature names it stands for."""

import re
import threading

import numpy as np
import pandas as pd
import pytest

from ssvmbench.common.errors import UserError
from ssvmbench.data import conll, features


def table(text):
    return conll.read_columns(text, "t", ("word", "pos", "chunk"), 2, set(conll.CHUNK_TAGS))


def tiny():
    """Two sentences: ``The cat sat`` / ``A dog``."""
    return table("The DT B-NP\ncat NN I-NP\nsat VBD B-VP\n\nA DT B-NP\ndog NN I-NP\n")


def spec(**changes):
    return {"window": [], "radius": 0, "current": [], "conjunctions": [],
            "mode": "dictionary", "hash_bits": 10, "min_count": 1, **changes}


def names_by_token(sentences, spec):
    tokens, names = features.token_strings(sentences, spec)
    return [set(names[tokens == t]) for t in range(int(sentences["offsets"][-1]))]


def test_conjunction_names_with_sentence_boundaries():
    found = names_by_token(tiny(), spec(conjunctions=[
        "word[-1]|word[0]", "pos[-1]|pos[0]|pos[1]", "word[-2]|word[2]"]))
    assert found[0] == {"bias", "word[-1]|word[0]=<s>|The", "pos[-1]|pos[0]|pos[1]=<s>|DT|NN",
                        "word[-2]|word[2]=<s>|sat"}
    assert found[1] == {"bias", "word[-1]|word[0]=The|cat", "pos[-1]|pos[0]|pos[1]=DT|NN|VBD",
                        "word[-2]|word[2]=<s>|</s>"}
    assert found[2] == {"bias", "word[-1]|word[0]=cat|sat", "pos[-1]|pos[0]|pos[1]=NN|VBD|</s>",
                        "word[-2]|word[2]=The|</s>"}
    # the second sentence does not see the first one
    assert found[3] == {"bias", "word[-1]|word[0]=<s>|A", "pos[-1]|pos[0]|pos[1]=<s>|DT|NN",
                        "word[-2]|word[2]=<s>|</s>"}
    assert found[4] == {"bias", "word[-1]|word[0]=A|dog", "pos[-1]|pos[0]|pos[1]=DT|NN|</s>",
                        "word[-2]|word[2]=<s>|</s>"}


def test_conjunctions_mix_attributes_and_spelling_is_canonical():
    found = names_by_token(tiny(), spec(window=["word"], radius=1, conjunctions=[
        "shape[0] | lower[+1]", "word[1]", "word[+2]", "shape[0]|lower[1]"]))
    # "word[1]" is already a window feature, "word[+2]" is the same single-offset template
    # spelled differently: one feature each; the duplicate conjunction is dropped too
    assert found[0] == {"bias", "word[-1]=<s>", "word[0]=The", "word[1]=cat", "word[2]=sat",
                        "shape[0]|lower[1]=Xx|cat"}
    assert "shape[0]|lower[1]=x|</s>" in found[2]
    assert "word[2]=</s>" in found[1]


@pytest.mark.parametrize("template,why", [
    ("word[-1]|wrod[0]", "unknown attribute 'wrod'"),
    ("word-1|word[0]", "cannot read part 'word-1'"),
    ("word[-1]|", "cannot read part ''"),
    ("word[x]", "cannot read part 'word\\[x\\]'"),
    ("word[-1],word[0]", "cannot read part"),
    (["word[0]"], "not a string"),
])
def test_bad_template_names_it_and_the_expected_form(template, why):
    with pytest.raises(UserError) as error:
        features.token_strings(tiny(), spec(conjunctions=["pos[0]|pos[1]", template]))
    message = str(error.value)
    assert repr(template) in message and "bad template" in message
    assert "expected attribute[offset] parts joined by '|', e.g. 'word[-1]|word[0]'" in message
    assert re.search(why, message)


def test_attribute_missing_from_the_data_names_the_template():
    sentences = {"word": ["a", "b"], "offsets": np.array([0, 2])}
    with pytest.raises(UserError, match="'pos' \\(template 'word\\[0\\]\\|pos\\[1\\]'\\) is not "
                                        "available"):
        features.token_strings(sentences, spec(conjunctions=["word[0]|pos[1]"]))


def test_dictionary_counts_training_features_and_drops_unseen_test_ones():
    train = table("The DT B-NP\ncat NN I-NP\nsat VBD B-VP\n\nThe DT B-NP\ndog NN I-NP\n")
    test = table("The DT B-NP\ndog NN I-NP\nsat VBD B-VP\n")
    (ptr, idx, val), (test_ptr, test_idx, _), n_features = features.encode(
        train, test, spec(conjunctions=["word[-1]|word[0]"]))
    # bias, then <s>|The, The|cat, cat|sat, The|dog in order of first appearance
    assert n_features == 5
    assert [list(r) for r in np.split(idx, ptr[1:-1])] == [
        [0, 1], [0, 2], [0, 3], [0, 1], [0, 4]]
    assert np.all(val == 1)
    # test: <s>|The and The|dog were seen in training, dog|sat was not
    assert [list(r) for r in np.split(test_idx, test_ptr[1:-1])] == [[0, 1], [0, 4], [0]]
    # min_count: only the bias (5 times) and <s>|The (twice) stay
    (ptr, idx, _), (test_ptr, test_idx, _), n_features = features.encode(
        train, test, spec(conjunctions=["word[-1]|word[0]"], min_count=2))
    assert n_features == 2
    assert [list(r) for r in np.split(idx, ptr[1:-1])] == [[0, 1], [0], [0], [0, 1], [0]]
    assert [list(r) for r in np.split(test_idx, test_ptr[1:-1])] == [[0, 1], [0], [0]]


def reference_encode(train, test, spec):
    """The encoding spelled out: every feature name as a string, numbered by first
    appearance in training (dictionary) or hashed (hashing)."""
    (train_tok, train_names), (test_tok, test_names) = (features.token_strings(train, spec),
                                                        features.token_strings(test, spec))
    if spec["mode"] == "hashing":
        n_features = 2**spec["hash_bits"]
        train_ids, test_ids = (features._hash(train_names, spec["hash_bits"]),
                               features._hash(test_names, spec["hash_bits"]))
    else:
        codes, vocabulary = pd.factorize(train_names)
        keep = np.bincount(codes) >= spec["min_count"]
        index = pd.Index(vocabulary[keep])
        train_ids, test_ids = index.get_indexer(train_names), index.get_indexer(test_names)
        n_features = len(index)

    def csr(tokens, ids, n_tokens):
        rows = [sorted({int(f) for f in ids[(tokens == t) & (ids >= 0)]}) for t in range(n_tokens)]
        return [np.array(r, dtype=np.int32) for r in rows]
    return (csr(train_tok, train_ids, train["offsets"][-1]),
            csr(test_tok, test_ids, test["offsets"][-1]), n_features)


@pytest.mark.parametrize("mode,min_count,bits", [("dictionary", 1, 10), ("dictionary", 2, 10),
                                                 ("hashing", 1, 4)])
def test_encoding_equals_the_feature_names_it_stands_for(mode, min_count, bits):
    train = table("The DT B-NP\ncat NN I-NP\nsat VBD B-VP\non IN B-PP\nthe DT B-NP\nmat NN I-NP\n"
                  "\nThe DT B-NP\ndog NN I-NP\nsat VBD B-VP\n\n<s> NN B-NP\n")
    test = table("A DT B-NP\ncat NN I-NP\nsat VBD B-VP\n\nThe DT B-NP\n")
    setting = spec(window=["word", "pos"], radius=1, current=["shape", "suffix2"],
                   conjunctions=["word[-1]|word[0]", "pos[-1]|pos[0]|pos[1]",
                                 "lower[0]|pos[-2]", "shape[-1]|shape[0]|shape[1]"],
                   mode=mode, min_count=min_count, hash_bits=bits)
    (ptr, idx, _), (test_ptr, test_idx, _), n_features = features.encode(train, test, setting)
    want_train, want_test, want_n = reference_encode(train, test, setting)
    assert n_features == want_n
    for (p, i), want in (((ptr, idx), want_train), ((test_ptr, test_idx), want_test)):
        got = np.split(i, p[1:-1])
        assert len(got) == len(want)
        for row, expected in zip(got, want):
            np.testing.assert_array_equal(row, expected)


def test_mixed_radix_keys_stay_exact_when_they_would_overflow():
    words = [f"w{k}" for k in range(3000)]
    text = "".join(f"{w} NN B-NP\n" + ("\n" if k % 7 == 6 else "") for k, w in enumerate(words))
    sentences = table(text)
    template = "|".join(f"word[{k}]" for k in range(-3, 3))     # 3002^6 > 2^62
    setting = spec(conjunctions=[template])
    (ptr, idx, _), _, n_features = features.encode(sentences, sentences, setting)
    _, names = features.token_strings(sentences, setting)
    assert n_features == len(set(names))


def test_feature_cache_survives_concurrent_writers(tmp_path, monkeypatch):
    """Two runs of a parallel sweep building the same features at once: both write their
    file before either renames it (a barrier in np.savez), and both succeed."""
    monkeypatch.setenv("SSVMBENCH_CACHE_DIR", str(tmp_path))
    barrier = threading.Barrier(2, timeout=30)
    savez = np.savez

    def savez_then_wait(file, **arrays):
        savez(file, **arrays)
        barrier.wait()

    monkeypatch.setattr(np, "savez", savez_then_wait)
    results, errors = [], []

    def build():
        try:
            results.append(features.cached(["same key"], lambda: {"x": np.arange(3)}))
        except Exception as err:                 # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 2
    monkeypatch.setattr(np, "savez", savez)
    assert features.cached(["same key"], lambda: 1 / 0)["x"].tolist() == [0, 1, 2]
    assert [p.suffix for p in (tmp_path / "features").iterdir()] == [".npz"]
