"""Column-format sequence data (CoNLL shared tasks): CoNLL-2000 chunking (BCFW Section 6,
Figure 1d-e; SAP Tables II-IV).

One token per line (``word POS chunk`` for CoNLL-2000), a blank line ends a sentence. The
reader checks the column count and the tag set and names file and line of any bad line.
"""

import io
import zipfile

import numpy as np

from ssvmbench.data import features
from ssvmbench.data.fetch import ensure_file, sha256
from ssvmbench.data.sequences import ChainDataset, SplitData
from ssvmbench.errors import UserError

CHUNK_TYPES = ("ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT", "SBAR", "UCP", "VP")
CHUNK_TAGS = ("O",) + tuple(f"{p}-{t}" for t in CHUNK_TYPES for p in "BI")
# Sentence and token counts from ../shared/datasets/README.md.
CONLL2000_COUNTS = {"train": (8936, 211727), "test": (2012, 47377)}
DEFAULT_FEATURES = {"window": ["word", "pos"], "radius": 2,
                    "current": ["lower", "shape", "prefix3", "suffix2", "suffix3"],
                    "mode": "dictionary", "hash_bits": 18, "min_count": 1}


def read_columns(text, source, columns, label_column, tags):
    """Sentences of a column file as token-aligned lists and ``offsets``."""
    table = {name: [] for name in columns}
    offsets = [0]
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            if len(table[columns[0]]) > offsets[-1]:
                offsets.append(len(table[columns[0]]))
            continue
        if len(fields) != len(columns):
            raise UserError(f"{source}, line {number}: expected {len(columns)} columns "
                            f"({' '.join(columns)}), found {len(fields)}: {line!r}")
        if fields[label_column] not in tags:
            raise UserError(f"{source}, line {number}: unknown tag {fields[label_column]!r}")
        for name, value in zip(columns, fields):
            table[name].append(value)
    if len(table[columns[0]]) > offsets[-1]:
        offsets.append(len(table[columns[0]]))
    table["offsets"] = np.array(offsets, dtype=np.int64)
    return table


def load_conll2000(root=None, features_spec=None, download=True) -> SplitData:
    """CoNLL-2000 chunking: train 8,936 / test 2,012 sentences, 23 IOB2 chunk tags."""
    path = ensure_file("conll2000", "conll2000/conll2000.zip", root, download)
    spec = {**DEFAULT_FEATURES, **(features_spec or {})}
    splits = {}
    with zipfile.ZipFile(path) as archive:
        for split in ("train", "test"):
            member = f"conll2000/{split}.txt"
            text = io.TextIOWrapper(archive.open(member), encoding="ascii").read()
            table = read_columns(text, f"{path}:{member}", ("word", "pos", "chunk"), 2,
                                 set(CHUNK_TAGS))
            counts = (len(table["offsets"]) - 1, int(table["offsets"][-1]))
            if counts != CONLL2000_COUNTS[split]:
                raise UserError(f"{path}:{member}: {counts} sentences/tokens, expected "
                                f"{CONLL2000_COUNTS[split]}; delete it and run "
                                "`ssvmbench data fetch conll2000`")
            splits[split] = table
    checksum = sha256(path)
    arrays = features.cached([checksum, spec], lambda: _encode(splits, spec))
    return SplitData(
        train=_dataset(splits["train"], arrays, "train"),
        test=_dataset(splits["test"], arrays, "test"),
        variant=f"conll2000: train.txt / test.txt; features {spec['mode']} "
                f"(d per label {int(arrays['n_features'])})",
        checksum=checksum, source=str(path), metric="chunk_f1")


def _encode(splits, spec):
    (train_ptr, train_idx, _), (test_ptr, test_idx, _), n_features = features.encode(
        splits["train"], splits["test"], spec)
    return {"train_ptr": train_ptr, "train_idx": train_idx, "test_ptr": test_ptr,
            "test_idx": test_idx, "n_features": np.array(n_features)}


def _dataset(table, arrays, split):
    index = {tag: k for k, tag in enumerate(CHUNK_TAGS)}
    idx = arrays[f"{split}_idx"]
    return ChainDataset(
        name="conll2000", n_labels=len(CHUNK_TAGS), n_features=int(arrays["n_features"]),
        offsets=table["offsets"], labels=np.array([index[t] for t in table["chunk"]], np.int32),
        feat_ptr=arrays[f"{split}_ptr"], feat_idx=idx, feat_val=np.ones(len(idx)),
        label_names=CHUNK_TAGS)
