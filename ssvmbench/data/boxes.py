"""Compact arrays for box-localization data: images with candidate boxes.

The candidates of all images of a split are concatenated: image ``i`` owns candidates
``offsets[i]:offsets[i+1]``, each with a box ``(x1, y1, x2, y2)`` (pixel corners, inclusive
as in PASCAL VOC), a feature vector (one row of ``features``) and its IoU with the image's
ground-truth box.
"""

from dataclasses import dataclass

import numpy as np

from ssvmbench.data.sequences import _ranges


def area(boxes):
    """Areas of ``(x1, y1, x2, y2)`` boxes with inclusive pixel corners (VOC devkit)."""
    return (boxes[..., 2] - boxes[..., 0] + 1) * (boxes[..., 3] - boxes[..., 1] + 1)


def iou(a, b):
    """Intersection over union of the boxes ``a`` and ``b`` (row by row, broadcasting):
    ``Area(a ∩ b) / Area(a ∪ b)`` (Casimir Section 4; VOC 2007 devkit convention)."""
    w = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]) + 1
    h = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]) + 1
    inter = np.clip(w, 0, None) * np.clip(h, 0, None)
    return inter / (area(a) + area(b) - inter)


@dataclass(frozen=True)
class BoxDataset:
    """One split of a box-localization dataset.

    Attributes
    ----------
    offsets : int64 (n+1,)     candidate offset of each image.
    features : float32 (N, F)  feature vector of each candidate box.
    boxes : float64 (N, 4)     candidate boxes ``(x1, y1, x2, y2)``.
    iou : float64 (N,)         IoU of each candidate with its image's ground-truth box.
    image_ids : (n,)           image identifiers (VOC ids, or indices of synthetic scenes).
    """

    name: str
    offsets: np.ndarray
    features: np.ndarray
    boxes: np.ndarray
    iou: np.ndarray
    image_ids: np.ndarray

    def __post_init__(self):
        N = len(self.features)
        if self.offsets[0] != 0 or self.offsets[-1] != N:
            raise ValueError(f"{self.name}: offsets must span 0..{N}")
        if np.any(np.diff(self.offsets) < 1):
            raise ValueError(f"{self.name}: every image needs at least one candidate box")
        if self.boxes.shape != (N, 4) or self.iou.shape != (N,):
            raise ValueError(f"{self.name}: boxes and IoUs must have one row per candidate")
        if len(self.image_ids) != self.n:
            raise ValueError(f"{self.name}: one image id per image")

    @property
    def n(self) -> int:
        """Number of images (examples)."""
        return len(self.offsets) - 1

    @property
    def n_candidates(self) -> int:
        return len(self.features)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    def best_candidates(self):
        """Index (within each image) of the candidate with the highest IoU: the ground truth
        the task trains on (Casimir Section 4)."""
        return np.array([np.argmax(self.iou[a:b])
                         for a, b in zip(self.offsets[:-1], self.offsets[1:])], dtype=np.int64)

    def subset(self, idx) -> "BoxDataset":
        """The images ``idx`` (in that order) as a new dataset."""
        idx = np.asarray(idx, dtype=np.int64)
        rows = _ranges(self.offsets[idx], self.offsets[idx + 1])
        counts = self.offsets[idx + 1] - self.offsets[idx]
        return BoxDataset(self.name, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                          self.features[rows], self.boxes[rows], self.iou[rows],
                          self.image_ids[idx])
