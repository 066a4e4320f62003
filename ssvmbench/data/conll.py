"""Column-format sequence data (CoNLL shared tasks): CoNLL-2000 chunking (BCFW Section 6,
Figure 1d-e; SAP Tables II-IV) and CoNLL-2003 English NER (Casimir Section 4, Figure 2a).

One token per line (``word POS chunk [NER]``), a blank line ends a sentence; the last
column is the label. The reader checks the column count and the tag set and names file and
line of any bad line; loaders check sentence and token counts against the dataset README.
"""

import io
import zipfile

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data import features
from ssvmbench.data.fetch import ensure_file, sha256
from ssvmbench.data.sequences import ChainDataset, SplitData

CHUNK_TYPES = ("ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT", "SBAR", "UCP", "VP")
CHUNK_TAGS = ("O",) + tuple(f"{p}-{t}" for t in CHUNK_TYPES for p in "BI")
# Sentence and token counts of the published files (datasets/manifest.yaml names them).
CONLL2000_COUNTS = {"train": (8936, 211727), "test": (2012, 47377)}
NER_TAGS = ("O",) + tuple(f"{p}-{t}" for t in ("PER", "ORG", "LOC", "MISC") for p in "IB")
CONLL2003_COUNTS = {"train": (14041, 203621), "testa": (3250, 51362), "testb": (3453, 46435)}
NER_COLUMNS = ("word", "pos", "chunk", "ner")
DEFAULT_FEATURES = {"window": ["word", "pos"], "radius": 2,
                    "current": ["lower", "shape", "prefix3", "suffix2", "suffix3"],
                    "conjunctions": [], "mode": "dictionary", "hash_bits": 18, "min_count": 1}
# NER templates tuned on eng.testa (dev; BCFW, 10 passes, lambda in {1..1000}/n): conjunctions
# of shapes, lowercased words and POS of neighbours, features seen at least twice.
NER_FEATURES = {**DEFAULT_FEATURES, "window": ["word", "lower", "pos", "shape", "chunk"],
                "current": ["prefix2", "prefix3", "suffix2", "suffix3", "suffix4"],
                "conjunctions": ["shape[-1]|shape[0]", "shape[0]|shape[1]",
                                 "shape[-1]|shape[0]|shape[1]", "lower[-1]|lower[0]",
                                 "lower[0]|lower[1]", "lower[-1]|lower[1]", "pos[-1]|pos[0]",
                                 "pos[0]|pos[1]", "lower[0]|shape[-1]", "lower[0]|shape[1]",
                                 "lower[-1]|shape[0]", "lower[1]|shape[0]"],
                "min_count": 2, "hash_bits": 16}


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
    texts = {}
    with zipfile.ZipFile(path) as archive:
        for split in ("train", "test"):
            member = f"conll2000/{split}.txt"
            texts[split] = (f"{path}:{member}",
                            io.TextIOWrapper(archive.open(member), encoding="ascii").read())
    return _split("conll2000", texts, ("word", "pos", "chunk"), CHUNK_TAGS, CONLL2000_COUNTS,
                  {**DEFAULT_FEATURES, **(features_spec or {})}, sha256(path), str(path),
                  "conll2000: train.txt / test.txt")


def load_conll2003(root=None, features_spec=None, test_split="testb", download=True):
    """CoNLL-2003 English NER (Casimir Section 4): eng.train, and eng.testb (test) or
    eng.testa (dev) as the test split; original IOB1 tags (9 labels); ``-DOCSTART-`` lines
    are document separators and are dropped, so n counts sentences (14,041), not the
    14,987 blocks Casimir's Figure 2a counts with the document lines."""
    tables, checksum, source = read_conll2003(root, test_split, download)
    spec = {**NER_FEATURES, **(features_spec or {})}
    return build_split("conll2003", tables, NER_COLUMNS, NER_TAGS, spec, checksum, source,
                       f"conll2003: eng.train / eng.{test_split}; -DOCSTART- lines dropped")


def read_conll2003(root, test_split, download):
    """Column tables of eng.train and eng.``test_split`` (testb or testa) without the
    ``-DOCSTART-`` lines, checked against their counts; with their checksum and source."""
    if test_split not in ("testa", "testb"):
        raise UserError(f"data.test_split={test_split}: choose testb (test) or testa (dev)")
    texts, checksums = {}, []
    for split, name in (("train", "eng.train"), ("test", f"eng.{test_split}")):
        path = ensure_file("conll2003", f"conll2003/{name}", root, download)
        lines = path.read_text(encoding="ascii").splitlines()
        texts[split] = (str(path), "\n".join("" if line.startswith("-DOCSTART-") else line
                                               for line in lines))
        checksums.append(sha256(path))
    counts = {"train": CONLL2003_COUNTS["train"], "test": CONLL2003_COUNTS[test_split]}
    tables = read_checked("conll2003", texts, NER_COLUMNS, NER_TAGS, counts)
    return tables, "+".join(checksums), texts["train"][0]


def _split(name, texts, columns, tags, counts, spec, checksum, source, variant):
    """Read the column files and check their counts, then :func:`build_split`."""
    tables = read_checked(name, texts, columns, tags, counts)
    return build_split(name, tables, columns, tags, spec, checksum, source, variant)


def read_checked(name, texts, columns, tags, counts):
    """Column tables of ``{split: (where, text)}``, their sentence and token counts checked."""
    tables = {}
    for split, (where, text) in texts.items():
        table = read_columns(text, where, columns, len(columns) - 1, set(tags))
        found = (len(table["offsets"]) - 1, int(table["offsets"][-1]))
        if found != counts[split]:
            raise UserError(f"{where}: {found} sentences/tokens, expected {counts[split]}; "
                            f"delete it and run `ssvmbench data fetch {name}`")
        tables[split] = table
    return tables


def build_split(name, tables, columns, tags, spec, checksum, source, variant,
                metric="chunk_f1"):
    """Train/test datasets from token tables (``columns``, the last one the labels):
    features extracted (or loaded from the cache), labels indexed by ``tags``."""
    label = columns[-1]
    if any(label == a for _, parts in features.templates(spec) for a, _ in parts):
        raise UserError(f"data.features_spec uses '{label}', the label column of {name}: "
                        "a feature cannot read the labels")
    # Without conjunctions the key is that of the specs before they existed, so caches
    # of those specs stay valid (their features are unchanged).
    key_spec = {k: v for k, v in spec.items() if k != "conjunctions" or v}
    arrays = features.cached([checksum, key_spec, columns], lambda: _encode(tables, spec))
    n_features = int(arrays["n_features"])
    index = {tag: k for k, tag in enumerate(tags)}

    def dataset(split):
        idx = arrays[f"{split}_idx"]
        labels = np.array([index[t] for t in tables[split][columns[-1]]], dtype=np.int32)
        return ChainDataset(name=name, n_labels=len(tags), n_features=n_features,
                            offsets=tables[split]["offsets"], labels=labels,
                            feat_ptr=arrays[f"{split}_ptr"], feat_idx=idx,
                            feat_val=np.ones(len(idx)), label_names=tags)
    return SplitData(train=dataset("train"), test=dataset("test"),
                     variant=f"{variant}; features {spec['mode']} ({n_features} per label)",
                     checksum=checksum, source=source, metric=metric)


def _encode(tables, spec):
    (train_ptr, train_idx, _), (test_ptr, test_idx, _), n_features = features.encode(
        tables["train"], tables["test"], spec)
    return {"train_ptr": train_ptr, "train_idx": train_idx, "test_ptr": test_ptr,
            "test_idx": test_idx, "n_features": np.array(n_features)}
