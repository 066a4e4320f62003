"""Penn Treebank WSJ part-of-speech tagging (SAP Section V: POS and WSJ-POS, Tables II-III).

What is redistributable is NLTK's 10 % WSJ sample (``treebank.zip``: 199 files wsj_0001 ..
wsj_0199, 3,914 sentences); ``data=pos`` uses it split by file: wsj_0001-0159 train,
wsj_0160-0199 test. ``data=wsjpos`` reads a user's full LDC treebank directory (``.mrg``
files under section folders 00-24) with the usual tagging split: sections 00-18 train,
22-24 test. ``-NONE-`` leaves (empty elements, traces) are not tokens and are dropped.
"""

import hashlib
import re
import zipfile
from pathlib import Path

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data.conll import DEFAULT_FEATURES, build_split
from ssvmbench.data.fetch import ensure_file, sha256

# 45 Penn Treebank POS tags (the sample has all of them; -NONE- is dropped).
POS_TAGS = ("#", "$", "''", ",", "-LRB-", "-RRB-", ".", ":", "CC", "CD", "DT", "EX", "FW",
            "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNP", "NNPS", "NNS", "PDT", "POS",
            "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG",
            "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB", "``")
POS_FEATURES = {**DEFAULT_FEATURES, "window": ["word", "lower", "shape"],
                "current": ["prefix2", "prefix3", "suffix2", "suffix3", "suffix4"]}
SAMPLE_COUNTS = {"sentences": 3914, "tokens": 94084}
_PIECE = re.compile(r"\(\s*([^\s()]+)\s+([^\s()]+)\s*\)|\(|\)")


def read_mrg(text, source):
    """Sentences of a bracketed ``.mrg`` file as lists of ``(word, tag)``, ``-NONE-``
    leaves dropped. Unbalanced brackets are reported with the file name."""
    sentences, current, depth = [], [], 0
    for match in _PIECE.finditer(text):
        if match.group(1) is not None:
            if match.group(1) != "-NONE-":
                current.append((match.group(2), match.group(1)))
        elif match.group(0) == "(":
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                raise UserError(f"{source}: unbalanced ')' at character {match.start()}")
            if depth == 0 and current:
                sentences.append(current)
                current = []
    if depth != 0:
        raise UserError(f"{source}: {depth} bracket(s) left open at the end (truncated?)")
    return sentences


def _table(sentences, source):
    words = [w for s in sentences for w, _ in s]
    tags = [t for s in sentences for _, t in s]
    unknown = sorted(set(tags) - set(POS_TAGS))
    if unknown:
        raise UserError(f"{source}: unknown POS tags {unknown[:5]}")
    return {"word": words, "tag": tags,
            "offsets": np.concatenate([[0], np.cumsum([len(s) for s in sentences])])}


def load_pos(root=None, features_spec=None, download=True):
    """NLTK's WSJ sample: wsj_0001-0159 train, wsj_0160-0199 test."""
    path = ensure_file("treebank", "treebank/treebank.zip", root, download)
    parts = {"train": [], "test": []}
    with zipfile.ZipFile(path) as archive:
        members = sorted(m for m in archive.namelist()
                         if re.search(r"combined/wsj_\d{4}\.mrg$", m))
        for member in members:
            number = int(member[-8:-4])
            sentences = read_mrg(archive.read(member).decode("ascii"), f"{path}:{member}")
            parts["train" if number <= 159 else "test"].extend(sentences)
    found = {"sentences": sum(map(len, parts.values())),
             "tokens": sum(len(s) for p in parts.values() for s in p)}
    if found != SAMPLE_COUNTS:
        raise UserError(f"{path}: {found}, expected {SAMPLE_COUNTS}; delete it and run "
                        "`ssvmbench data fetch treebank`")
    tables = {k: _table(v, str(path)) for k, v in parts.items()}
    return build_split("pos", tables, ("word", "tag"), POS_TAGS,
                       {**POS_FEATURES, **(features_spec or {})}, sha256(path), str(path),
                       "pos: NLTK 10% WSJ sample, wsj_0001-0159 train / wsj_0160-0199 test, "
                       "-NONE- dropped", metric="accuracy")


def load_wsjpos(ldc_dir=None, features_spec=None):
    """The full LDC WSJ treebank (``ldc_dir`` holds section folders 00-24 of ``.mrg``
    files): sections 00-18 train, 22-24 test."""
    if not ldc_dir:
        raise UserError("data=wsjpos needs the licensed Penn Treebank (LDC99T42): pass "
                        "data.ldc_dir=DIR with the folders 00..24 of wsj_*.mrg files; the free "
                        "sample is data=pos")
    base = Path(ldc_dir).expanduser()
    files = sorted(base.glob("[0-2][0-9]/wsj_*.mrg"))
    if not files:
        raise UserError(f"data.ldc_dir={base}: no section folders 00..24 with wsj_*.mrg files")
    parts = {"train": [], "test": []}
    for file in files:
        section = int(file.parent.name)
        split = "train" if section <= 18 else "test" if section >= 22 else None
        if split:
            parts[split].extend(read_mrg(file.read_text(encoding="ascii"), str(file)))
    checksum = sha256_of_files(files)
    tables = {k: _table(v, str(base)) for k, v in parts.items()}
    return build_split("wsjpos", tables, ("word", "tag"), POS_TAGS,
                       {**POS_FEATURES, **(features_spec or {})}, checksum, str(base),
                       "wsjpos: LDC WSJ treebank, sections 00-18 train / 22-24 test, "
                       "-NONE- dropped", metric="accuracy")


def sha256_of_files(files):
    """One checksum over several files (their sha256s in order)."""
    return hashlib.sha256("".join(sha256(f) for f in files).encode()).hexdigest()
