"""The estimators follow scikit-learn's protocol (issue 43): ``clone``, ``get_params`` /
``set_params``, ``repr``, ``GridSearchCV``, ``cross_val_score`` and a ``Pipeline`` take
:class:`~ssvmbench.ChainSSVM` (structured ``y``: one label array per sequence) and the
multiclass plugin's ``MulticlassSSVM``; scikit-learn's own estimator checks pass on
``MulticlassSSVM`` (all of them) and, for ``ChainSSVM``, those that need no 2-D ``X``, with
the rest done here on sequences (docs/guide/python.md lists them). Without scikit-learn the
estimators still fit and predict, and what needs it says so in one line."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, MaxAbsScaler
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

from ssvmbench import ChainSSVM
from ssvmbench.data.synthetic import random_chains

multiclass = pytest.importorskip("ssvmbench_multiclass.estimator",
                                 reason="needs the example task plugin: "
                                        "pip install ./examples/multiclass")
MulticlassSSVM = multiclass.MulticlassSSVM

X, Y = random_chains(30, 3, 6, lengths=(2, 6), seed=5).xy()
Y = [labels + 10 for labels in Y]          # labels any values: classes_ maps them


@parametrize_with_checks([MulticlassSSVM(passes=5)])
def test_multiclass_ssvm_passes_scikit_learns_checks(estimator, check):
    check(estimator)


# scikit-learn's checks that need no 2-D X: the rest feed 2-D arrays, which are not sequences
CHAIN_CHECKS = ("check_estimator_cloneable", "check_estimator_repr",
                "check_no_attributes_set_in_init",
                "check_do_not_raise_errors_in_init_or_set_params",
                "check_parameters_default_constructible", "check_get_params_invariance",
                "check_set_params", "check_mixin_order", "check_estimator_tags_renamed",
                "check_valid_tag_types")


@pytest.mark.parametrize("check", CHAIN_CHECKS)
def test_chain_ssvm_passes_scikit_learns_checks_that_take_no_2d_x(check):
    getattr(estimator_checks, check)("ChainSSVM", ChainSSVM(passes=3))


def test_chain_ssvm_passes_the_data_checks_on_sequences():
    """scikit-learn's data checks with sequences for X: fit returns self, leaves its
    parameters and sets only ``*_`` attributes; unfitted; fit idempotent; predictions
    independent of the other sequences and of their order; predict changes nothing; a wrong
    width, NaN, no sequence, no y, one 2-D array are ValueErrors; pickling keeps it."""
    model = ChainSSVM(passes=3, options={"step": "line_search"})
    params = {key: (dict(v) if isinstance(v, dict) else v)
              for key, v in model.get_params().items()}
    with pytest.raises(NotFittedError):
        model.predict(X)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    before = set(vars(model))
    assert model.fit(X, Y) is model
    assert model.get_params() == params
    assert all(key.endswith("_") for key in set(vars(model)) - before)
    check_is_fitted(model)
    predicted = model.predict(X)
    state = {key: np.copy(v) if isinstance(v, np.ndarray) else v for key, v in vars(model).items()}
    model.score(X, Y)
    assert vars(model).keys() == state.keys()
    assert all(np.array_equal(vars(model)[key], value) for key, value in state.items())
    again = clone(model).fit(X, Y)
    np.testing.assert_array_equal(again.coef_, model.coef_)
    order = np.random.default_rng(0).permutation(len(X))
    shuffled = model.predict([X[i] for i in order])
    assert all(np.array_equal(shuffled[k], predicted[i]) for k, i in enumerate(order))
    assert all(np.array_equal(a, b) for a, b in zip(model.predict(X[:7]), predicted[:7]))
    assert model.n_features_in_ == 6
    with pytest.raises(ValueError, match="features per token"):
        model.predict([x[:, :4] for x in X])
    restored = pickle.loads(pickle.dumps(model))
    assert all(np.array_equal(a, b) for a, b in zip(restored.predict(X), predicted))
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.predict([np.full((2, 6), np.nan)])
    with pytest.raises(ValueError, match="at least one sequence"):
        ChainSSVM().fit([], [])
    equal_lengths = ChainSSVM(passes=1).fit(np.ones((3, 2, 6)), [[0, 1]] * 3)   # 3-D: taken
    assert len(equal_lengths.predict(np.ones((4, 2, 6)))) == 4
    with pytest.raises(ValueError, match="one label array per sequence"):
        ChainSSVM().fit(X, None)
    with pytest.raises(ValueError, match="list of token feature matrices"):
        ChainSSVM().fit(np.vstack([x.toarray() for x in X]), np.concatenate(Y))


def test_search_cross_validation_and_pipelines_take_the_estimators():
    model = ChainSSVM(passes=3)
    assert repr(model) == "ChainSSVM(passes=3)"
    assert clone(model.set_params(lam=0.1)).get_params()["lam"] == 0.1
    search = GridSearchCV(ChainSSVM(passes=3), {"lam": [0.1, 0.01]}, cv=2).fit(X, Y)
    assert search.best_params_["lam"] in (0.1, 0.01)
    assert search.best_estimator_.classes_.tolist() == [10, 11, 12]
    scores = cross_val_score(ChainSSVM(passes=3), X, Y, cv=3)
    assert scores.shape == (3,) and (scores > 0.3).all()
    dense = FunctionTransformer(lambda sequences: [x.toarray() for x in sequences])
    pipe = make_pipeline(dense, ChainSSVM(passes=3)).fit(X, Y)
    assert pipe.score(X, Y) == ChainSSVM(passes=3).fit(X, Y).score(X, Y)
    assert cross_val_score(pipe, X, Y, cv=2).shape == (2,)
    rows = sp.vstack(X).toarray()
    labels = np.concatenate(Y)
    letters = GridSearchCV(make_pipeline(MaxAbsScaler(), MulticlassSSVM(passes=3)),
                           {"multiclassssvm__lam": [0.1, 0.01]}, cv=2).fit(rows, labels)
    assert set(letters.predict(rows)) <= {10, 11, 12}


NO_SKLEARN = textwrap.dedent("""
    import sys
    sys.modules["sklearn"] = None            # import sklearn raises ImportError
    import numpy as np
    from ssvmbench import ChainSSVM
    from ssvmbench.data.synthetic import random_chains
    from ssvmbench.common.errors import UserError
    from ssvmbench_multiclass.estimator import MulticlassSSVM
    X, y = random_chains(20, 3, 6, lengths=(2, 6), seed=5).xy()
    print("chain", ChainSSVM(passes=2).fit(X, y).score(X, y) > 0.3)
    rows, labels = np.vstack([x.toarray() for x in X]), np.concatenate(y)
    print("multiclass", MulticlassSSVM(passes=2).fit(rows, labels).score(rows, labels) > 0.3)
    try:
        ChainSSVM().get_params()
    except UserError as err:
        print(err)
""")


def test_without_scikit_learn_they_fit_and_name_it_where_it_is_needed():
    proc = subprocess.run([sys.executable, "-c", NO_SKLEARN], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "chain True", "multiclass True",
        "ChainSSVM.get_params needs scikit-learn (clone, search, pipelines): "
        "pip install 'ssvmbench[sklearn]'"]
