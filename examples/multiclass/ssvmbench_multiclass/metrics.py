"""The test metric of multiclass splits (entry point group ``ssvmbench.metrics``): the share
of test examples whose predicted class is right (for ``ocr_letters``, letters), logged as
column ``test_letter_accuracy`` and, being the splits' default metric
(``SplitData.metric``), as ``test_metric``. The built-in ``accuracy`` metric applies to chain
splits only (it checks chain attributes), so it does not log these."""

import numpy as np

from ssvmbench.metrics import Metric
from ssvmbench_multiclass.dataset import MulticlassDataset


def accuracy(dataset, predictions):
    """``mean_i [prediction_i == y_i]`` (``predictions`` from
    :meth:`MulticlassTask.evaluate <ssvmbench_multiclass.task.MulticlassTask.evaluate>`)."""
    return float(np.mean(np.asarray(predictions) == dataset.labels))


letter_accuracy = Metric("letter_accuracy", "test letter (class) accuracy", accuracy,
                         lambda dataset: isinstance(dataset, MulticlassDataset))
