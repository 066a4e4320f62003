"""ssvmbench-multiclass: the multiclass SVM of Crammer and Singer as an ssvmbench task plugin.

Multiclass classification is the simplest structured output (BCFW, Lacoste-Julien et al.,
ICML 2013, Section 2 with ``Y_i = {0, ..., L-1}``): ``phi(x, y) = x (x) e_y``, task loss
``L(y_i, y) = 1[y != y_i]``, and every oracle is an enumeration of the ``L`` labels. The
package adds, through entry points only (nothing in ssvmbench is edited):

* the task ``multiclass`` (:mod:`ssvmbench_multiclass.task`, group ``ssvmbench.tasks``),
* the dataset ``ocr_letters`` (:mod:`ssvmbench_multiclass.dataset`, group
  ``ssvmbench.datasets``): every letter of Taskar's OCR words as one example,
* the metric ``letter_accuracy`` (:mod:`ssvmbench_multiclass.metrics`, group
  ``ssvmbench.metrics``).

The modules are imported by ssvmbench when it reads the entry points; this one stays empty
so that loading the metric or the dataset does not compile or import the task's kernels.
"""

__version__ = "0.1.0"
