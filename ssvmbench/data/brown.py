"""Brown corpus part-of-speech tagging (SAP Section V, Table I: "Brown").

NLTK's ``brown.zip`` holds the 500 text files ``brown/ca01`` .. ``brown/cr09``; each non-blank
line is one sentence of whitespace-separated ``word/tag`` tokens (split on the last ``/``):
57,340 sentences, 1,161,192 tokens, 472 distinct tags.

Split: the files in sorted order, sentences in file order; the first 48,242 sentences are
train, the last 9,098 test -- exactly SAP Table I's n and n_test, which sum to the whole
corpus. SAP does not say how it split; this takes its sizes in corpus order, so the test part
is genre-shifted: it starts at sentence 93 of ``cn06`` and holds the rest of adventure (cn),
romance (cp) and humor (cr); train has the other 12 categories and the start of adventure.

Tags (``tagset``):

* ``basic`` (default): lower-cased; of a compound joined by ``+`` (contractions such as
  ``ppss+md``, "I'll") the first part; the suffixes ``-tl`` (title), ``-hl`` (headline),
  ``-nc`` (cited word) removed, repeatedly (``nn-tl-hl`` -> ``nn``); a leading ``fw-``
  (foreign word) removed; ``*`` (negation, ``bez*`` "isn't") dropped unless nothing else is
  left (the tag ``*`` of "not" stays). 92 labels.
* ``full``: the tags as written in the file, 472 labels.

The label set is the sorted set of mapped tags over the whole corpus (train and test), so a
test tag is never unknown. With ``basic`` every label occurs in train (``cd$``, ``dt$``,
``jj$`` and ``nil`` never in test); with ``full`` 22 labels occur in test only (rare
contractions such as ``ppss+bez``), so they have no training example. SAP reports 185
labels for Brown without saying which mapping it used; ours differs (92 or 472), and so
does d. With the default features (:data:`~ssvmbench.data.treebank.POS_FEATURES`; there is no
POS column) there are 503,820 features per label, d = 46,360,088 with the basic tags.
"""

import re
import zipfile

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data.conll import build_split
from ssvmbench.data.fetch import ensure_file, sha256
from ssvmbench.data.treebank import POS_FEATURES

# Counts of the NLTK Brown corpus (datasets/manifest.yaml names its source).
BROWN_COUNTS = {"files": 500, "sentences": 57340, "tokens": 1161192, "tags": 472}
N_TRAIN, N_TEST = 48242, 9098            # SAP Table I
TAGSETS = ("basic", "full")
LABEL_COUNTS = {"basic": 92, "full": 472}
_MEMBER = re.compile(r"brown/c[a-r]\d\d")
_SUFFIXES = ("-tl", "-hl", "-nc")


def read_tagged(text, source):
    """Sentences of one Brown file as lists of ``(word, tag)``: one sentence per non-blank
    line, tokens ``word/tag`` split on the last ``/``. A token without ``/``, or with an empty
    word or tag, is reported with ``source`` and its line number."""
    sentences = []
    for number, line in enumerate(text.splitlines(), start=1):
        sentence = []
        for token in line.split():
            word, slash, tag = token.rpartition("/")
            if not (slash and word and tag):
                raise UserError(f"{source}, line {number}: token {token!r} is not word/tag")
            sentence.append((word, tag))
        if sentence:
            sentences.append(sentence)
    return sentences


def basic_tag(tag):
    """The basic tag of a Brown tag (see the module docstring): ``nn-tl`` -> ``nn``,
    ``fw-nn`` -> ``nn``, ``bez*`` -> ``bez``, ``ppss+md`` -> ``ppss``, ``np$`` -> ``np$``."""
    tag = tag.lower().split("+")[0]
    stripped = True
    while stripped:
        stripped = False
        for suffix in _SUFFIXES:
            if tag.endswith(suffix) and len(tag) > len(suffix):
                tag, stripped = tag[:-len(suffix)], True
    if tag.startswith("fw-"):
        tag = tag[3:]
    return tag.replace("*", "") or tag


def read_corpus(path):
    """All sentences of ``brown.zip`` (files sorted, sentences in file order), checked against
    :data:`BROWN_COUNTS`."""
    sentences = []
    with zipfile.ZipFile(path) as archive:
        members = sorted(m for m in archive.namelist() if _MEMBER.fullmatch(m))
        for member in members:
            sentences.extend(read_tagged(archive.read(member).decode("ascii"),
                                         f"{path}:{member}"))
    found = {"files": len(members), "sentences": len(sentences),
             "tokens": sum(map(len, sentences)),
             "tags": len({tag for s in sentences for _, tag in s})}
    if found != BROWN_COUNTS:
        raise UserError(f"{path}: {found}, expected {BROWN_COUNTS}; delete it and run "
                        "`ssvmbench data fetch brown`")
    return sentences


def split_corpus(sentences):
    """``{"train": first N_TRAIN sentences, "test": the last N_TEST}``."""
    if len(sentences) != N_TRAIN + N_TEST:
        raise UserError(f"Brown: {len(sentences)} sentences, expected {N_TRAIN + N_TEST}")
    return {"train": sentences[:N_TRAIN], "test": sentences[N_TRAIN:]}


def tag_mapping(tagset):
    """The function mapping a file's tag to a label for ``tagset``."""
    if tagset not in TAGSETS:
        raise UserError(f"data.tagset={tagset}: choose one of {list(TAGSETS)}")
    return basic_tag if tagset == "basic" else str


def tables(sentences, tagset="basic"):
    """Token tables ``{"train"|"test": {word, tag, offsets}}`` with mapped tags, and the
    label set (sorted mapped tags of the whole corpus)."""
    mapping = tag_mapping(tagset)
    mapped = {tag: mapping(tag) for tag in {t for s in sentences for _, t in s}}
    labels = tuple(sorted(set(mapped.values())))
    result = {}
    for name, part in split_corpus(sentences).items():
        result[name] = {"word": [w for s in part for w, _ in s],
                        "tag": [mapped[t] for s in part for _, t in s],
                        "offsets": np.concatenate([[0], np.cumsum([len(s) for s in part])])}
    return result, labels


def load_brown(root=None, features_spec=None, tagset="basic", download=True):
    """The Brown corpus: first 48,242 sentences train, last 9,098 test; ``tagset`` basic
    (92 labels) or full (472)."""
    tag_mapping(tagset)                     # a bad tagset fails before any download
    path = ensure_file("brown", "brown/brown.zip", root, download)
    parts, labels = tables(read_corpus(path), tagset)
    if len(labels) != LABEL_COUNTS[tagset]:
        raise UserError(f"{path}: {len(labels)} {tagset} tags, expected "
                        f"{LABEL_COUNTS[tagset]}; delete it and run `ssvmbench data fetch brown`")
    variant = (f"brown: NLTK Brown corpus, files ca01-cr09 in order, first {N_TRAIN} sentences "
               f"train / last {N_TEST} test; tagset {tagset} ("
               + ("lower-cased, first part of + compounds, -tl/-hl/-nc and fw- removed, "
                  "* dropped" if tagset == "basic" else "tags as in the file")
               + f"), {len(labels)} labels")
    return build_split("brown", parts, ("word", "tag"), labels,
                       {**POS_FEATURES, **(features_spec or {})}, sha256(path), str(path),
                       variant, metric="accuracy")
