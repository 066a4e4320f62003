"""PASCAL VOC 2007 box localization in the format of Casimir's authors (Pillutla et al.,
NeurIPS 2018, Section 4): one class at a time (the paper: ``cat`` and ``dog``).

Files under ``<data root>/voc/`` (the box features cannot be redistributed; obtain them from
the authors of https://github.com/krishnap25/casimir, or compute them as Section 4 says:
AlexNet conv4 features of 1000 selective-search boxes per image):

* ``label_file`` (default ``voc/<class>_labels.pkl``): a pickle of the tuple
  ``(image_ids, labels, boxes, projected_boxes, ious)`` with, per image, its candidate boxes
  ``(x1, y1, x2, y2)`` and their IoUs with the ground-truth box (labels and projected boxes are
  not used: the ground truth is the best-IoU candidate, as in the paper);
* ``features_dir`` (default ``voc/features``): one ``{image-ID:06d}_{class}.npy`` per image, the
  features of its candidates (``dim`` numbers each, 2304 for conv4).

Split as the authors' code does: the images in the order of a fixed permutation (NumPy
``RandomState(1)``), the first 3/4 for training and the rest for testing (VOC 2007 test
labels were not used).
"""

import hashlib
import pickle
from pathlib import Path

import numpy as np

from ssvmbench.data.boxes import BoxDataset
from ssvmbench.data.sequences import SplitData
from ssvmbench.errors import UserError
from ssvmbench.paths import data_root

WHERE = ("the preprocessed VOC 2007 box features of Pillutla et al. (ask the authors of "
         "https://github.com/krishnap25/casimir), or use data=voc_synthetic")


def load_voc(root=None, object_class="cat", label_file=None, features_dir=None,
             max_boxes=1000, dim=2304) -> SplitData:
    """Train and test splits of one VOC 2007 class (module docstring)."""
    base = data_root(root) / "voc"
    label_path = Path(label_file) if label_file else base / f"{object_class}_labels.pkl"
    feature_path = Path(features_dir) if features_dir else base / "features"
    if not label_path.exists():
        raise UserError(f"data=voc: label file {label_path} not found. It holds {WHERE}; "
                        "put it there or set data.label_file=PATH")
    try:
        with open(label_path, "rb") as f:
            image_ids, _, boxes, _, ious = pickle.load(f, encoding="latin1")
    except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError) as err:
        raise UserError(f"data=voc: {label_path} is not a label pickle (image_ids, labels, "
                        f"boxes, projected_boxes, ious): {err}") from None
    digest = hashlib.sha256(label_path.read_bytes())
    features, all_boxes, all_ious, counts = [], [], [], []
    for image_id, image_boxes, image_ious in zip(image_ids, boxes, ious):
        path = feature_path / f"{int(image_id):06d}_{object_class}.npy"
        if not path.exists():
            raise UserError(f"data=voc: feature file {path} not found ({WHERE}); "
                            "set data.features_dir=DIR")
        x = np.load(path)
        b = np.asarray(image_boxes, dtype=float)[:max_boxes]
        o = np.asarray(image_ious, dtype=float)[:max_boxes]
        x = x.reshape(-1, dim)[:max_boxes] if x.size % dim == 0 else x.reshape(-1, 1)
        if not (len(x) == len(b) == len(o)) or b.shape[1:] != (4,):
            raise UserError(f"data=voc: image {image_id}: {x.size} feature numbers (not "
                            f"{len(b)} rows of data.dim={dim}), {len(b)} boxes and {len(o)} "
                            "IoUs; they must match (check data.dim and data.max_boxes)")
        digest.update(x.tobytes())
        features.append(x.astype(np.float32))
        all_boxes.append(b)
        all_ious.append(o)
        counts.append(len(x))
    full = BoxDataset(f"voc_{object_class}",
                      np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                      np.concatenate(features), np.concatenate(all_boxes),
                      np.concatenate(all_ious), np.asarray(image_ids))
    order = np.random.RandomState(1).permutation(full.n)
    cut = full.n * 3 // 4
    return SplitData(train=full.subset(order[:cut]), test=full.subset(order[cut:]),
                     variant=f"VOC 2007 {object_class}: {cut} train / {full.n - cut} test "
                             f"images (authors' 3/4 split), up to {max_boxes} boxes, d={dim}",
                     checksum=digest.hexdigest(), source=str(label_path), metric="ap")
