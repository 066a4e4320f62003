"""ssvmbench-tree: labelling the nodes of trees as an ssvmbench task plugin.

Each example is a tree whose nodes carry feature vectors; a labelling gives every node one of
``L`` labels, scored by unary weights per feature and label and one ``L x L`` table of
parent-child weights, so the loss-augmented decoding (BCFW eq. 2) is max-product on the tree.
The package adds, through entry points only (nothing in ssvmbench is edited):

* the task ``tree`` (:mod:`ssvmbench_tree.task`, group ``ssvmbench.tasks``),
* the dataset ``random_trees`` (:mod:`ssvmbench_tree.dataset`, group ``ssvmbench.datasets``):
  generated trees whose labels follow their parents',
* the metric ``node_accuracy`` (:mod:`ssvmbench_tree.metrics`, group ``ssvmbench.metrics``).

This module stays empty so that loading the metric or the dataset does not compile the
task's kernels.
"""

__version__ = "0.1.0"
