"""The contract of a task: one split of a dataset in the form the kernels take, and the one
declaration that makes it usable by every solver whose needs it meets.

A task is a subclass of :class:`Task` that declares, as class attributes, the split type it
is built from (``dataset_type``), the named tuple of arrays its kernels take (``data_type``),
its kernels (``kernels``: name -> compiled function, the API of
:mod:`ssvmbench.tasks.kernels`), its losses, the hinge oracles it can run and a tiny instance
for ``ssvmbench check-solver`` (:meth:`Task.tiny`). The built-in tasks are listed in
:mod:`ssvmbench.tasks`; another package adds one through the entry-point group
``ssvmbench.tasks`` (docs/guide/tasks.md). Nothing else is registered by hand:
:func:`ssvmbench.tasks.make_task`, the kernel dispatch, the solvers' compatibility checks and
``check-solver`` all read these declarations.
"""

from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np

# The kernel API (signatures in ssvmbench.tasks.kernels) and what each group of it serves.
# A solver declares the kernels it calls (Solver.needs); it runs on every task declaring them.
CORE_KERNELS = ("scratch", "scores", "example_oracle", "add_direction")   # primal steps
DIRECTION_KERNELS = ("direction_sqnorm", "direction_dot", "subtract_direction", "decode")
DUAL_KERNELS = ("init_marginals", "dual_residual", "move_marginals",
                "weights_from_average")        # the factored BCFW dual state ("marginals")
LABELING_KERNELS = ("labeling_hinge", "add_labeling")   # stored labelings (cutting plane)
ACTIVE_SET_KERNELS = ("labeling_score", "labeling_direction", "gram_scratch", "direction_gram",
                      "add_direction_scores", "example_features")   # SAP's alpha-SUB, beta steps
MARGINAL_KERNELS = ("part_scores", "marginals_scratch", "part_marginals", "expected_loss",
                    "gold_marginals", "store_marginals")   # online EG
KERNEL_NAMES = (CORE_KERNELS + DIRECTION_KERNELS + DUAL_KERNELS + LABELING_KERNELS
                + ACTIVE_SET_KERNELS + MARGINAL_KERNELS)
COUNTED = {"example_oracle": 6, "decode": 2}   # oracle calls: position of their data argument


def kernels_named(namespace, **others):
    """A task's ``kernels`` declared by name: the functions of ``namespace`` (its module's
    ``vars()``) named after the kernel API, and ``others`` (kernels defined elsewhere, under
    their API names)."""
    return {**{name: namespace[name] for name in KERNEL_NAMES if name in namespace}, **others}


class Scratch(NamedTuple):
    """A pass's work arrays, from the task's ``scratch`` kernel: score rows ``U``, the
    decoder's table ``delta``, a labeling ``y``, a direction ``(R, E)`` in ``w``-space (its
    layout is the task's) and ``dense``, an all-zero vector the kernels leave all-zero."""

    U: np.ndarray
    delta: np.ndarray
    y: np.ndarray
    R: np.ndarray
    E: tuple
    dense: np.ndarray


class Task(ABC):
    """Class attributes a subclass declares:

    ``kind``          its name (``check-solver``'s rows, messages, the entry point's name);
    ``dataset_type``  the split class it is built from (:func:`~ssvmbench.tasks.make_task`
                      picks the task of the most derived class a split is an instance of);
    ``data_type``     the named tuple of its ``data`` (its type selects the kernels);
    ``kernels``       ``{name: compiled function}`` for the names of :data:`KERNEL_NAMES` it
                      implements (at least :data:`CORE_KERNELS`);
    ``LOSSES``        the task losses it supports, the first its default;
    ``oracles``       the hinge oracles it can run (Casimir Table 1);
    ``topk_ties``     the tie orders of its top-K oracle (``oracle.ties``; the first its
                      own, :data:`~ssvmbench.tasks.oracle.TIES`);
    ``chain_directions``  True if its directions ``(R, E)`` have the chain's layout
                      (:func:`ssvmbench.tasks.chain.scratch`, subtracted by the chain's
                      ``subtract_direction``; the built-in tasks): a solver may keep them
                      (SVRG keeps its anchor's).

    Attributes an instance sets in ``__init__(dataset, loss)``:

    ``dataset``        the split it was built from;
    ``data``           its arrays, a ``data_type`` with a field ``calls``, a one-entry int64
                       array that the kernel API increments at every call of the oracles
                       (``example_oracle``, ``decode``; the task's kernels leave it alone), so
                       the calls a solver makes can be checked against those it reports;
    ``loss``, ``normalized``  the task loss and whether it is divided by the length;
    ``dims``           ``(F, L)``: features and labels per score row;
    ``n``              examples (the blocks of BCFW, the steps of a stochastic pass);
    ``n_rows``         score rows (tokens, candidate boxes, candidate edges, examples);
    ``n_labels``       labels per row;
    ``d``              length of the weight vector ``w``;
    ``dense_entries``  entries of ``w`` that every example's direction touches (SVRG updates
                       them densely, the rest lazily);
    ``max_len``        rows of the longest example (scratch sizes).
    """

    kind = ""
    dataset_type = None
    data_type = None
    kernels = {}
    LOSSES = ()
    oracles = ("max",)
    topk_ties = ("scan",)
    chain_directions = False

    @abstractmethod
    def __init__(self, dataset, loss):
        """The task of split ``dataset`` with task loss ``loss`` (one of ``LOSSES``)."""

    @classmethod
    @abstractmethod
    def tiny(cls):
        """A training task of a few generated examples (``ssvmbench check-solver``)."""

    @abstractmethod
    def evaluate(self, w, with_hinge=True):
        """``(mean structured hinge or NaN, mean task loss, predictions)`` at ``w``: one
        pass that is not counted as oracle calls; the predictions feed the metrics."""

    def batch(self, ws):
        """A checkpoint's iterates ``ws`` in the form :meth:`evaluate_many` takes, of this
        task and of the other split's (the same weights): by default the list itself. A task
        whose iterates can share a pass lays them out for it (the built-in chains: side by
        side, each token's features read once for all of them)."""
        return list(ws)

    def evaluate_many(self, batch, with_hinge=True):
        """:meth:`evaluate` of each iterate of ``batch`` (:meth:`batch`), a list of its
        triples."""
        return [self.evaluate(w, with_hinge) for w in batch]

    def oracle_scratch(self, oracle):
        """Work arrays of the hinge oracle ``oracle`` (the ``bufs`` argument of
        ``example_oracle``); by default the chain's (:meth:`Oracle.buffers
        <ssvmbench.tasks.oracle.Oracle.buffers>`), which the built-in tasks share."""
        return oracle.buffers(self.max_len, self.n_labels)

    def dual_views(self, alpha):
        """The factored BCFW dual state ``(mu, Psum)`` as views of one flat vector ``alpha``
        of :meth:`dual_size` entries (BCFW averages ``alpha``): per-row label weights
        ``mu`` (``n_rows x n_labels``) and the label-bigram sums ``Psum``."""
        n_mu = self.n_rows * self.n_labels
        return alpha[:n_mu].reshape(self.n_rows, self.n_labels), alpha[n_mu:]

    def dual_size(self):
        """Entries of the flat dual state of :meth:`dual_views`."""
        return self.n_rows * self.n_labels + self.n_labels**2

    def labelings(self, i, limit):
        """Every labeling of example ``i`` in the kernels' format (the ``y`` the oracles
        write and ``labeling_hinge`` reads), as a list of int32 arrays, or None when there
        are more than ``limit``: the brute force of the test kit
        (:mod:`ssvmbench.plugin_kit.testing`), which compares the oracles with the maximum over
        them."""
        raise NotImplementedError(f"the {self.kind} task does not enumerate its labelings")

    def gold_labelings(self):
        """The gold labeling of every example in the kernels' labeling format (example ``i``'s
        ``y[:T]`` at its rows), an int32 array of ``n_rows``: SAP's first stored labeling.
        Tasks declaring :data:`ACTIVE_SET_KERNELS` implement it."""
        raise NotImplementedError(f"the {self.kind} task keeps no gold labelings")

    def marginal_sizes(self):
        """``(pair potentials, pair marginals)``: entries per example of the part potentials
        and stored marginals beyond the rows' (``g`` of ``part_scores``, ``pairs`` of
        ``store_marginals``). Tasks declaring :data:`MARGINAL_KERNELS` implement it."""
        raise NotImplementedError(f"the {self.kind} task keeps no marginals")
