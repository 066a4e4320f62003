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

from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import data_root
from ssvmbench.data.boxes import BoxDataset
from ssvmbench.data.sequences import SplitData

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
    except PermissionError:      # not corrupt: one line from the command line
        raise
    except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError) as err:
        raise UserError(f"data=voc: {label_path} is not a label pickle (image_ids, labels, "
                        f"boxes, projected_boxes, ious): {err}") from None
    digest = hashlib.sha256(label_path.read_bytes())
    order = np.random.RandomState(1).permutation(len(image_ids))
    cut = len(order) * 3 // 4
    train, test = (_read_images(f"voc_{object_class}", picks, image_ids, boxes, ious,
                                feature_path, object_class, max_boxes, dim, digest)
                   for picks in (order[:cut], order[cut:]))
    return SplitData(train=train, test=test,
                     variant=f"VOC 2007 {object_class}: {cut} train / {len(order) - cut} test "
                             f"images (authors' 3/4 split), up to {max_boxes} boxes, d={dim}",
                     checksum=digest.hexdigest(), source=str(label_path), metric="ap")


def _read_images(name, picks, image_ids, boxes, ious, feature_path, object_class, max_boxes,
                 dim, digest):
    """The images ``picks`` as a :class:`BoxDataset`, features read straight into one
    preallocated float32 array (memory: the split's features once)."""
    all_boxes = [np.asarray(boxes[k], dtype=float)[:max_boxes] for k in picks]
    all_ious = [np.asarray(ious[k], dtype=float)[:max_boxes] for k in picks]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in all_boxes])]).astype(np.int64)
    features = np.empty((offsets[-1], dim), dtype=np.float32)
    for j, k in enumerate(picks):
        path = feature_path / f"{int(image_ids[k]):06d}_{object_class}.npy"
        if not path.exists():
            raise UserError(f"data=voc: feature file {path} not found ({WHERE}); "
                            "set data.features_dir=DIR")
        x = np.load(path)
        x = x.reshape(-1, dim)[:max_boxes] if x.size % dim == 0 else x.reshape(-1, 1)
        b, o = all_boxes[j], all_ious[j]
        if not (len(x) == len(b) == len(o)) or b.shape[1:] != (4,):
            raise UserError(f"data=voc: image {image_ids[k]}: {x.size} feature numbers (not "
                            f"{len(b)} rows of data.dim={dim}), {len(b)} boxes and {len(o)} "
                            "IoUs; they must match (check data.dim and data.max_boxes)")
        digest.update(x.tobytes())
        features[offsets[j]:offsets[j + 1]] = x
    return BoxDataset(name, offsets, features, np.concatenate(all_boxes),
                      np.concatenate(all_ious), np.asarray(image_ids)[picks])
