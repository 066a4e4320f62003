"""``MulticlassSSVM``: the multiclass task as a scikit-learn classifier, and the pattern of an
estimator for any task plugin whose data take the ``X, y`` form.

    >>> from ssvmbench_multiclass.estimator import MulticlassSSVM
    >>> model = MulticlassSSVM(solver="bcfw", lam=0.01, passes=20).fit(X, y)
    >>> model.predict(X[:3]), model.score(X, y)

``X``: one feature row per example (``n x F``, NumPy or scipy.sparse), ``y``: one class per
example (any values; ``classes_`` holds them sorted). ssvmbench's
:class:`~ssvmbench.estimator.SSVMEstimator` does the rest: the parameters (``solver``,
``lam``, ``passes``, ``iterate``, ``seed``, ``loss``, ``options``, ``oracle``), training by
any solver on the task this split type selects, prediction through the task's ``evaluate``;
with scikit-learn installed, its protocol (clone, search, pipelines). This module only says
how ``X, y`` become a :class:`~ssvmbench_multiclass.dataset.MulticlassDataset` and back.
"""

import numpy as np

from ssvmbench.estimator import SSVMEstimator
from ssvmbench.sklearn_support import ClassifierMixin, rows
from ssvmbench_multiclass.dataset import MulticlassDataset


class MulticlassSSVM(ClassifierMixin, SSVMEstimator):
    """The Crammer-Singer multiclass SVM (``C = 1 / (lam n)``) trained by any ssvmbench
    solver; ``score`` is the accuracy."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _split(self, X, y, fitting):
        X, y = rows(self, X, y, fitting)
        if fitting:
            self.classes_, labels = np.unique(y, return_inverse=True)
        else:
            labels = np.zeros(X.shape[0], dtype=np.int64)
        return MulticlassDataset(name="MulticlassSSVM", n_labels=len(self.classes_),
                                 features=X, labels=labels)

    def _outputs(self, predictions, split):
        return self.classes_[predictions]
