"""scikit-learn, optional: the base classes of ssvmbench's estimators and the checks of
their input, from scikit-learn when it is installed (so that ``clone``, ``GridSearchCV``,
``cross_val_score`` and ``Pipeline`` take the estimators), else stand-ins that fit, predict
and score without it and name the missing package in one line where only scikit-learn can
help (``get_params``, ``set_params``, its tags).

``pip install 'ssvmbench[sklearn]'`` installs it."""

import numpy as np
import scipy.sparse as sp

from ssvmbench.common.errors import UserError

INSTALL = "pip install 'ssvmbench[sklearn]'"


class InputError(UserError, ValueError):
    """Bad ``X`` or ``y`` for an estimator: one line, as every :class:`UserError`, and a
    ``ValueError``, the type scikit-learn's tools expect for invalid input."""


try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False

    class BaseEstimator:
        """Stand-in for ``sklearn.base.BaseEstimator``: what needs scikit-learn says so."""

        def _needs_sklearn(self, what):
            raise UserError(f"{type(self).__name__}.{what} needs scikit-learn (clone, "
                            f"search, pipelines): {INSTALL}")

        def get_params(self, deep=True):
            self._needs_sklearn("get_params")

        def set_params(self, **params):
            self._needs_sklearn("set_params")

        def __sklearn_tags__(self):
            self._needs_sklearn("__sklearn_tags__")

    class ClassifierMixin:
        """Stand-in for ``sklearn.base.ClassifierMixin``: ``score`` is the accuracy."""

        def score(self, X, y, sample_weight=None):
            """The share of the examples of ``X`` whose predicted class is ``y``'s."""
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))


def check_fitted(estimator):
    """Raise (``NotFittedError`` with scikit-learn, else :class:`InputError`) unless
    ``estimator`` was fitted."""
    if HAVE_SKLEARN:
        check_is_fitted(estimator)
    elif not hasattr(estimator, "coef_"):
        raise InputError(f"{type(estimator).__name__}: call fit first")


def rows(estimator, X, y=None, fitting=True):
    """A tabular ``X`` (n examples x F features, dense or sparse) as a CSR matrix of floats,
    and ``y`` (n labels, required when ``fitting``), checked as scikit-learn checks its
    estimators' input (with it: ``validate_data``, ``check_classification_targets``);
    ``fitting`` sets ``n_features_in_``, else ``X`` must have that many features."""
    if HAVE_SKLEARN:
        if fitting:
            X, y = validate_data(estimator, X, y, accept_sparse="csr")
            check_classification_targets(y)
        else:
            X = validate_data(estimator, X, accept_sparse="csr", reset=False)
        return sp.csr_matrix(X, dtype=np.float64), y
    X = sp.csr_matrix(X, dtype=np.float64)
    if not np.isfinite(X.data).all():
        raise InputError("X holds NaN or infinity")
    if not fitting:
        if X.shape[1] != estimator.n_features_in_:
            raise InputError(f"X has {X.shape[1]} features, but {type(estimator).__name__} "
                             f"is expecting {estimator.n_features_in_} features as input")
        return X, None
    if y is None:
        raise InputError(f"{type(estimator).__name__} requires y to be passed, but the "
                         "target y is None")
    y = np.asarray(y).reshape(-1)
    if len(y) != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} examples and y {len(y)} labels")
    estimator.n_features_in_ = X.shape[1]
    return X, y
