"""Precomputed features from a NumPy archive (``data=arrays data.path=FILE.npz``), so that any
featurization can be benchmarked on the chain task.

The archive holds, for ``SPLIT`` = ``train`` and optionally ``test``:

* ``SPLIT_offsets`` int (n+1,): token offset of each sequence (0 first, the token count last);
* ``SPLIT_labels`` int (N,): the tag of each token, ``0 .. L-1``;
* the token features, either ``SPLIT_features`` float (N, F) dense, or CSR rows
  ``SPLIT_indptr`` int (N+1,), ``SPLIT_indices`` int (nnz,), ``SPLIT_values`` float (nnz,)
  (``scipy.sparse.csr_matrix`` parts);

and optionally ``label_names`` str (L,) (with an ``O`` tag: chunk F1 is logged too). Without a
test part the training sequences are the test split as well (say ``+data.holdout=0.2`` to hold
out a part instead). The number of features is the largest of the splits'.
"""

import hashlib
import os
import zipfile
from pathlib import Path

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.data.sequences import ChainDataset, SplitData


def load(path):
    """Train and test splits of the archive ``path``, every array checked before any
    training: one line naming the first that is wrong (an empty split, a shape, a tag or a
    feature index out of range, a model too large for this machine's memory)."""
    file = Path(str(path)).expanduser()
    if not file.is_file():
        raise UserError(f"data.path={path}: no such file")
    if not zipfile.is_zipfile(file):
        raise UserError(f"data.path={path}: not a NumPy .npz archive (write one with "
                        "numpy.savez; the format: ssvmbench/data/arrays.py)")
    try:
        with np.load(file, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise UserError(f"data.path={path}: does not read as a .npz archive ({err})") from None
    splits = [s for s in ("train", "test") if f"{s}_offsets" in arrays]
    if "train" not in splits:
        raise UserError(f"{file}: no train_offsets (the archive format: "
                        "ssvmbench/data/arrays.py)")
    offsets = {split: _offsets(arrays, split, file) for split in splits}
    labels = {split: _labels(arrays, split, file) for split in splits}
    rows = {split: _rows(arrays, split, file, offsets[split]) for split in splits}
    n_features = max(F for _, _, _, F in rows.values())
    names = tuple(str(x) for x in _vector(arrays, "label_names", file, numbers=False)) \
        if "label_names" in arrays else ()
    n_labels = len(names) or int(max(v.max(initial=0) for v in labels.values())) + 1
    _check_size(file, n_features, n_labels, labels)

    def dataset(split):
        indptr, indices, values, _ = rows[split]
        try:
            return ChainDataset(name=file.stem, n_labels=n_labels, n_features=n_features,
                                offsets=offsets[split], labels=labels[split], feat_ptr=indptr,
                                feat_idx=indices, feat_val=values, label_names=names)
        except (ValueError, KeyError) as err:
            raise UserError(f"{file}, {split} split: {err}") from None
    train = dataset("train")
    test = dataset("test") if "test" in splits else train
    return SplitData(train=train, test=test,
                     variant=f"{file.name}: {n_features} features"
                             + ("" if "test" in splits else "; no test part: test = train"),
                     checksum=hashlib.sha256(file.read_bytes()).hexdigest(),
                     source=str(file), metric="chunk_f1" if "O" in names else "accuracy")


def _numbers(arrays, key, file):
    """``arrays[key]`` if it holds numbers (else one line naming it)."""
    values = np.asarray(arrays[key])
    if values.dtype.kind not in "biuf":
        raise UserError(f"{file}: {key} holds {values.dtype} values, not numbers")
    return values


def _vector(arrays, key, file, numbers=True, whole=False):
    """``arrays[key]`` if it is one-dimensional (and holds numbers; ``whole``: whole numbers
    from 0), else one line naming it and what is wrong."""
    values = _numbers(arrays, key, file) if numbers else np.asarray(arrays[key])
    if values.ndim != 1:
        raise UserError(f"{file}: {key} has shape {values.shape}; it must be one-dimensional "
                        "(the format: ssvmbench/data/arrays.py)")
    if whole:
        bad = np.flatnonzero((values != np.round(values)) | (values < 0))
        if len(bad):
            raise UserError(f"{file}: {key}[{bad[0]}] = {values[bad[0]]}: {key} holds whole "
                            "numbers from 0")
    return values


def _offsets(arrays, split, file):
    """A split's sequence offsets (0, then the end of each sequence): whole numbers, at
    least one sequence (an empty split is refused, saying what to do)."""
    offsets = _vector(arrays, f"{split}_offsets", file, whole=True)
    if len(offsets) < 2:
        hint = ("leave the test_ arrays out to test on the training sequences"
                if split == "test" else "give at least one sequence")
        raise UserError(f"{file}: the {split} split is empty ({split}_offsets holds "
                        f"{offsets.tolist()}: 0, then the end of each sequence); {hint}")
    return offsets.astype(np.int64)


def _labels(arrays, split, file):
    """A split's tags as integers ``0 .. L-1``; fractional or negative ones are refused,
    naming the first (never truncated)."""
    key = f"{split}_labels"
    if key not in arrays:
        raise UserError(f"{file}: no {key} (the tag of each token)")
    labels = _vector(arrays, key, file)
    bad = np.flatnonzero((labels != np.round(labels)) | (labels < 0)) if len(labels) else []
    if len(bad):
        raise UserError(f"{file}: {key}[{bad[0]}] = {labels[bad[0]]}: tags are whole numbers "
                        "0 .. L-1")
    if len(labels) and labels.max() >= 2**31:
        raise UserError(f"{file}: {key} holds the tag {labels.max():.0f}: tags are 0 .. L-1")
    return labels.astype(np.int32)


def _check_size(file, n_features, n_labels, labels):
    """Refuse a model whose weights alone (``F L + L^2 + 2 L`` numbers: the chain task's)
    would not fit in this machine's memory, saying its size and, when the transition table
    alone is too large, the largest tag (a typo among the tags?)."""
    memory = _memory_bytes()
    weights = 8 * (n_features * n_labels + n_labels**2 + 2 * n_labels)
    if memory is None or weights <= memory:
        return
    table = 8 * n_labels**2
    largest, split = max((int(v.max(initial=0)), split) for split, v in labels.items())
    tags = (f"; the largest tag is {largest} (in {split}_labels): tags are 0 .. L-1"
            if table > memory else "")
    raise UserError(f"{file}: {n_labels} labels and {n_features} features make a model of "
                    f"{_gib(weights)} (the transition table alone {_gib(table)}), more than "
                    f"this machine's {_gib(memory)} of memory{tags}")


def _memory_bytes():
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _gib(size):
    return f"{size / 2**30:,.1f} GiB"


def _check_finite(values, token_of_value, arrays, split, file, column_of_value):
    """Refuse a NaN or infinite feature, naming its split, example, token and column."""
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        token = int(token_of_value(bad[0]))
        offsets = np.asarray(arrays[f"{split}_offsets"])
        example = int(np.searchsorted(offsets, token, side="right")) - 1
        raise UserError(f"{file}: feature {values[bad[0]]} in the {split} split, example "
                        f"{example}, token {token - int(offsets[example])}, column "
                        f"{int(column_of_value(bad[0]))} ({len(bad)} such values): features "
                        "must be finite numbers")


def _rows(arrays, split, file, offsets):
    """``(indptr, indices, values, n_features)`` of a split's token features: one row per
    token (``offsets[-1]``), CSR parts consistent, feature indices below 2**31."""
    tokens = int(offsets[-1])
    if f"{split}_features" in arrays:
        dense = _numbers(arrays, f"{split}_features", file).astype(float)
        if dense.ndim != 2 or len(dense) != tokens:
            raise UserError(f"{file}: {split}_features has shape {dense.shape}; it must be a "
                            f"(tokens, features) matrix, one row per token ({tokens})")
        flat = dense.ravel()
        _check_finite(flat, lambda k: k // dense.shape[1], arrays, split, file,
                      lambda k: k % dense.shape[1])
        rows, cols = np.nonzero(dense)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(dense)))])
        return (indptr.astype(np.int64), cols.astype(np.int32), dense[rows, cols],
                dense.shape[1])
    parts = [f"{split}_{key}" for key in ("indptr", "indices", "values")]
    missing = [key for key in parts if key not in arrays]
    if missing:
        raise UserError(f"{file}: give {split}_features (dense) or {', '.join(parts)} (CSR); "
                        f"missing {missing}")
    indptr = _vector(arrays, parts[0], file, whole=True)
    indices = _vector(arrays, parts[1], file, whole=True)
    values = _vector(arrays, parts[2], file)
    if len(indices) != len(values):
        raise UserError(f"{file}: {split}_indices and {split}_values must have one index per "
                        f"value ({len(indices)} and {len(values)})")
    if (len(indptr) != tokens + 1 or indptr[0] != 0 or indptr[-1] != len(values)
            or np.any(np.diff(indptr) < 0)):
        raise UserError(f"{file}: {split}_indptr must rise from 0 to the number of values "
                        f"({len(values)}) in one step per token ({tokens} tokens: "
                        f"{tokens + 1} entries; it has {len(indptr)})")
    if len(indices) and indices.max() >= 2**31:
        raise UserError(f"{file}: {split}_indices holds the feature index "
                        f"{indices.max():.0f}; indices are below 2**31")
    values = values.astype(float)
    _check_finite(values, lambda k: np.searchsorted(indptr, k, side="right") - 1, arrays,
                  split, file, lambda k: indices[k])
    return (indptr.astype(np.int64), indices.astype(np.int32), values,
            int(indices.max(initial=-1)) + 1)
