"""The test metric of tree splits (entry point group ``ssvmbench.metrics``): the share of test
nodes labelled right, column ``test_node_accuracy`` and, as the splits' default metric
(``SplitData.metric``), ``test_metric``. A new split type needs its own metric: the built-in
ones apply to the built-in split types only."""

import numpy as np

from ssvmbench.metrics import Metric
from ssvmbench_tree.dataset import TreeDataset


def accuracy(dataset, predictions):
    """``mean over nodes [prediction == label]`` (``predictions`` from
    :meth:`TreeTask.evaluate <ssvmbench_tree.task.TreeTask.evaluate>`, one per node)."""
    return float(np.mean(np.asarray(predictions) == dataset.labels))


node_accuracy = Metric("node_accuracy", "test node accuracy", accuracy,
                       lambda dataset: isinstance(dataset, TreeDataset))
