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
from pathlib import Path

import numpy as np

from ssvmbench.data.sequences import ChainDataset, SplitData
from ssvmbench.errors import UserError


def load(path):
    """Train and test splits of the archive ``path``."""
    file = Path(str(path)).expanduser()
    if not file.is_file():
        raise UserError(f"data.path={path}: no such file")
    with np.load(file, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    splits = [s for s in ("train", "test") if f"{s}_offsets" in arrays]
    if "train" not in splits:
        raise UserError(f"{file}: no train_offsets (the archive format: "
                        "ssvmbench/data/arrays.py)")
    rows = {split: _rows(arrays, split, file) for split in splits}
    n_features = max(F for _, _, _, F in rows.values())
    labels = {split: np.asarray(arrays.get(f"{split}_labels"), dtype=np.int32)
              for split in splits}
    names = tuple(str(x) for x in arrays.get("label_names", ()))
    n_labels = len(names) or int(max(v.max(initial=0) for v in labels.values())) + 1

    def dataset(split):
        indptr, indices, values, _ = rows[split]
        try:
            return ChainDataset(name=file.stem, n_labels=n_labels, n_features=n_features,
                                offsets=np.asarray(arrays[f"{split}_offsets"], dtype=np.int64),
                                labels=labels[split], feat_ptr=indptr, feat_idx=indices,
                                feat_val=values, label_names=names)
        except (ValueError, KeyError) as err:
            raise UserError(f"{file}, {split} split: {err}") from None
    train = dataset("train")
    test = dataset("test") if "test" in splits else train
    return SplitData(train=train, test=test,
                     variant=f"{file.name}: {n_features} features"
                             + ("" if "test" in splits else "; no test part: test = train"),
                     checksum=hashlib.sha256(file.read_bytes()).hexdigest(),
                     source=str(file), metric="chunk_f1" if "O" in names else "accuracy")


def _rows(arrays, split, file):
    """``(indptr, indices, values, n_features)`` of a split's token features."""
    if f"{split}_features" in arrays:
        dense = np.asarray(arrays[f"{split}_features"], dtype=float)
        if dense.ndim != 2:
            raise UserError(f"{file}: {split}_features must be a (tokens, features) matrix")
        rows, cols = np.nonzero(dense)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(dense)))])
        return (indptr.astype(np.int64), cols.astype(np.int32), dense[rows, cols],
                dense.shape[1])
    parts = [f"{split}_{key}" for key in ("indptr", "indices", "values")]
    missing = [key for key in parts if key not in arrays]
    if missing:
        raise UserError(f"{file}: give {split}_features (dense) or {', '.join(parts)} (CSR); "
                        f"missing {missing}")
    indptr, indices, values = (arrays[key] for key in parts)
    if len(indices) != len(values) or (len(indices) and indices.min() < 0):
        raise UserError(f"{file}: {split}_indices and {split}_values must have one "
                        "non-negative index per value")
    return (indptr.astype(np.int64), indices.astype(np.int32), values.astype(float),
            int(indices.max(initial=-1)) + 1)
