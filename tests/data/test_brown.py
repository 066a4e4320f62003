"""Brown corpus POS: counts and SAP's split on the real file, both tag sets, the reader."""

import zipfile

import numpy as np
import pytest

from ssvmbench.common.errors import UserError
from ssvmbench.data import brown, load_split

TEXT = """
\tThe/at Fulton/np-tl County/nn-tl Grand/jj-tl Jury/nn-tl said/vbd ./.

\tI'll/ppss+md n't/* 1/2/cd ./.
"""
NO_FEATURES = {"window": [], "radius": 0, "current": []}   # the constant only: fast


@pytest.fixture(scope="session")
def corpus(brown_root):
    """All sentences of the real brown.zip, read once."""
    return brown.read_corpus(brown_root / "brown" / "brown.zip")


def test_counts_and_split(corpus):
    assert len(corpus) == 57340 and sum(map(len, corpus)) == 1161192
    parts = brown.split_corpus(corpus)
    assert (len(parts["train"]), len(parts["test"])) == (48242, 9098)        # SAP Table I
    assert parts["train"][0][:2] == [("The", "at"), ("Fulton", "np-tl")]       # ca01 first
    assert parts["test"][-1] == corpus[-1]                                    # cr09 last
    assert sum(map(len, parts["train"])) == 1013801


def test_label_counts_of_both_tagsets(corpus):
    tables, basic = brown.tables(corpus, "basic")
    assert len(basic) == 92 and list(basic) == sorted(basic)
    assert {"nn", "np$", "ppss", "bez", "*", "nil"} <= set(basic)
    assert set(tables["test"]["tag"]) <= set(tables["train"]["tag"])   # all basic tags trained
    _, full = brown.tables(corpus, "full")
    assert len(full) == 472 and {"nn-tl", "ppss+md", "bez*", "fw-nn"} <= set(full)


@pytest.mark.parametrize("tag, basic", [
    ("nn-tl", "nn"), ("fw-nn", "nn"), ("bez*", "bez"), ("ppss+md", "ppss"), ("np$", "np$"),
    ("nn-tl-hl", "nn"), ("fw-in+at-tl", "in"), ("*", "*"), ("fw-*", "*"), ("*-hl", "*"),
    ("---hl", "--"), ("NN-TL", "nn"), ("ber*-nc", "ber"), ("wdt+do+pps", "wdt")])
def test_basic_mapping(tag, basic):
    assert brown.basic_tag(tag) == basic


def test_reader_splits_on_the_last_slash():
    assert brown.read_tagged(TEXT, "t") == [
        [("The", "at"), ("Fulton", "np-tl"), ("County", "nn-tl"), ("Grand", "jj-tl"),
         ("Jury", "nn-tl"), ("said", "vbd"), (".", ".")],
        [("I'll", "ppss+md"), ("n't", "*"), ("1/2", "cd"), (".", ".")]]


@pytest.mark.parametrize("token", ["Jury", "/nn", "Jury/"])
def test_reader_names_member_and_line_of_a_bad_token(token):
    text = TEXT.replace("Jury/nn-tl", token)
    with pytest.raises(UserError, match=rf"brown.zip:brown/ca01, line 2: token '{token}'"):
        brown.read_tagged(text, "brown.zip:brown/ca01")


def test_wrong_counts_say_to_fetch_again(tmp_path):
    path = tmp_path / "brown.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("brown/ca01", TEXT)
        archive.writestr("brown/cats.txt", "ca01 news\n")
    with pytest.raises(UserError, match=r"'files': 1, 'sentences': 2, 'tokens': 11.*"
                                        r"delete it and run `ssvmbench data fetch brown`"):
        brown.read_corpus(path)


def test_bad_tagset_is_refused_before_reading(tmp_path):
    with pytest.raises(UserError,
                       match=r"data.tagset=universal: choose one of \['basic', 'full'\]"):
        load_split("brown", root=str(tmp_path), tagset="universal", download=False)


def test_load_split(brown_root):
    split = load_split("brown", root=str(brown_root), features_spec=NO_FEATURES)
    assert (split.train.n, split.test.n) == (48242, 9098)
    assert split.train.n_tokens + split.test.n_tokens == 1161192
    assert split.train.n_labels == split.test.n_labels == 92 and split.metric == "accuracy"
    assert "first 48242 sentences train / last 9098 test" in split.variant
    assert "tagset basic" in split.variant and "92 labels" in split.variant
    names = np.asarray(split.train.label_names)
    assert names[split.train.labels[:4]].tolist() == ["at", "np", "nn", "jj"]   # The Fulton ..
    full = load_split("brown", root=str(brown_root), tagset="full", features_spec=NO_FEATURES)
    assert full.train.n_labels == 472 and "472 labels" in full.variant
