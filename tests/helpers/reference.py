"""Reference implementations the tests compare the kernels with (written independently)."""

import numpy as np


def phi_dense(task, i, y):
    """Reference joint feature map, written independently of the kernels."""
    F, L = task.dims
    ds = task.dataset
    t0, t1 = ds.offsets[i], ds.offsets[i + 1]
    phi = np.zeros(task.d)
    for t in range(t0, t1):
        for p in range(ds.feat_ptr[t], ds.feat_ptr[t + 1]):
            phi[ds.feat_idx[p] * L + y[t - t0]] += ds.feat_val[p]
        if t > t0:
            phi[F * L + y[t - t0 - 1] * L + y[t - t0]] += 1
    phi[F * L + L * L + y[0]] += 1
    phi[F * L + L * L + L + y[-1]] += 1
    return phi


def phi_hashed(task, i, y):
    """Reference joint feature map of the hashed chain (every entry and tag pair to its bucket,
    ``mod D`` written out), independent of the kernels."""
    ds = task.dataset
    D, L = ds.n_features, ds.n_labels
    t0, t1 = ds.offsets[i], ds.offsets[i + 1]
    phi = np.zeros(D)
    previous = -1                       # START
    for t in range(t0, t1):
        label = y[t - t0]
        for p in range(ds.feat_ptr[t], ds.feat_ptr[t + 1]):
            phi[(int(ds.feat_idx[p]) + int(ds.feat_stride[p]) * label) % D] += ds.feat_val[p]
        phi[ds.edge_buckets[(previous + 1) * L + label]] += 1
        previous = label
    return phi


def chunks_python(tags, offsets):
    """conlleval's chunks ``(start, end, type)`` of a tag sequence, in plain Python (the
    implementation ssvmbench had before its compiled one)."""
    found = set()
    for s in range(len(offsets) - 1):
        start, kind = None, None
        for t in range(offsets[s], offsets[s + 1] + 1):
            tag = tags[t] if t < offsets[s + 1] else "O"
            prefix, _, typ = tag.partition("-")
            begins = prefix == "B" or (prefix == "I" and typ != kind)
            if kind is not None and (prefix == "O" or begins):
                found.add((start, t, kind))
                kind = None
            if prefix != "O" and (begins or kind is None):
                start, kind = t, typ
    return found
