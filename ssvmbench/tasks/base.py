"""The contract of a task (one split of a dataset in the form the kernels take), which every
solver relies on; a new output structure is a subclass, one module of kernels
(:mod:`ssvmbench.tasks.kernels` documents their signatures) and one row of
``kernels.TASK_OF_DATA``."""

from abc import ABC, abstractmethod


class Task(ABC):
    """Attributes a subclass sets in ``__init__``:

    ``dataset``        the split it was built from;
    ``data``           the arrays the kernels take: a NamedTuple whose type selects the
                       kernels (its row of ``kernels.TASK_OF_DATA``), with a field ``calls``,
                       a one-entry int64 array that the kernel API's oracles
                       (``example_oracle``, ``decode``) increment at every call, so the calls
                       a solver makes can be checked against those it reports;
    ``loss``, ``normalized``  the task loss and whether it is divided by the length;
    ``dims``           ``(F, L)``: features and labels per score row;
    ``n``              examples (the blocks of BCFW, the steps of a stochastic pass);
    ``n_rows``         score rows (tokens, candidate boxes, candidate edges);
    ``n_labels``       labels per row;
    ``d``              length of the weight vector ``w``;
    ``dense_entries``  entries of ``w`` that every example's direction touches (SVRG updates
                       them densely, the rest lazily);
    ``max_len``        rows of the longest example (scratch sizes).
    """

    kind = ""                 # the name solvers declare in their ``tasks``
    LOSSES = ()               # task losses it supports, the first its default
    oracles = ("max",)        # the hinge oracles it can run (Casimir Table 1)

    @abstractmethod
    def evaluate(self, w, with_hinge=True):
        """``(mean structured hinge or NaN, mean task loss, predictions)`` at ``w``: one
        pass that is not counted as oracle calls; the predictions feed the metrics."""
