"""ssvmbench.ChainSSVM: fit / predict / score on per-sequence feature matrices, dense or
sparse, against the solver it wraps run directly; ``load_xy``'s (X, y) form of a split."""

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmbench import ChainSSVM, load_xy
from ssvmbench.common.errors import UserError
from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import make_task


def sequences(ds, labels_offset=10):
    """A ChainDataset as lists ``X`` (dense T x F) and ``y`` (labels shifted by an offset,
    so that the estimator has to map arbitrary label values)."""
    X, y = [], []
    for i in range(ds.n):
        t0, t1 = ds.offsets[i], ds.offsets[i + 1]
        x = np.zeros((t1 - t0, ds.n_features))
        for t in range(t0, t1):
            cols = ds.feat_idx[ds.feat_ptr[t]:ds.feat_ptr[t + 1]]
            x[t - t0, cols] = ds.feat_val[ds.feat_ptr[t]:ds.feat_ptr[t + 1]]
        X.append(x)
        y.append(ds.labels[t0:t1] + labels_offset)
    return X, y


DATA = random_chains(40, 3, 6, lengths=(2, 6), seed=5)


def test_fit_is_the_solver_run_on_the_same_data():
    X, y = sequences(DATA)
    model = ChainSSVM(solver="bcfw", lam=0.05, passes=10, iterate="wavg", seed=3).fit(X, y)
    solver = make_solver("bcfw", make_task(DATA), 0.05, {"iterates": ["raw", "wavg"]}, 3)
    solver.run_until(10 * DATA.n)
    np.testing.assert_allclose(model.coef_, solver.iterates()[1][1])
    np.testing.assert_array_equal(model.classes_, [10, 11, 12])
    assert model.n_iter_ == 10


def test_predict_and_score_dense_or_sparse():
    X, y = sequences(DATA)
    model = ChainSSVM(lam=0.01, passes=30).fit(X[:30], y[:30])
    predicted = model.predict(X[30:])
    assert [len(p) for p in predicted] == [len(t) for t in y[30:]]
    assert set(np.concatenate(predicted)) <= {10, 11, 12}
    accuracy = model.score(X[30:], y[30:])
    assert accuracy == np.mean(np.concatenate(predicted) == np.concatenate(y[30:]))
    assert accuracy > 0.5                              # labels depend on the features
    sparse = ChainSSVM(lam=0.01, passes=30).fit([sp.csr_matrix(x) for x in X[:30]], y[:30])
    np.testing.assert_allclose(sparse.coef_, model.coef_)
    assert sparse.score([sp.coo_matrix(x) for x in X[30:]], y[30:]) == accuracy


def test_bad_input_is_named():
    X, y = sequences(DATA)
    with pytest.raises(UserError, match="one label array per sequence"):
        ChainSSVM().fit(X, y[:-1])
    with pytest.raises(ValueError, match="fit"):      # scikit-learn's NotFittedError
        ChainSSVM().predict(X)
    model = ChainSSVM(passes=1).fit(X, y)
    with pytest.raises(UserError, match="fitted on 6"):
        model.predict([np.zeros((2, 5))])


def test_load_xy_gives_sequences_and_refuses_data_without_that_form():
    X, y = DATA.xy()
    assert [x.shape for x in X] == [(t, 6) for t in np.diff(DATA.offsets)]
    np.testing.assert_array_equal(np.concatenate(y), DATA.labels)
    np.testing.assert_array_equal(sp.vstack(X).indices, DATA.feat_idx)
    with pytest.raises(UserError, match="BoxDataset splits, which have no \\(X, y\\) form"):
        load_xy("voc_synthetic", n_train=4, n_test=2, size=32)
    with pytest.raises(UserError, match="split='validation'"):
        load_xy("voc_synthetic", "validation")


@pytest.mark.parametrize("params, message", [
    ({"lam": -1}, r"lam=-1 must be a finite positive number \(or 1/n, inv_n\)"),
    ({"lam": "abc"}, "lam=abc is not a number"),
    ({"lam": {"a": 1}}, r"lam=\{'a': 1\} must be a finite positive number"),
    ({"passes": "x"}, "passes=x must be a finite number"),
    ({"passes": [1, 2]}, r"passes=\[1, 2\] must be a finite number"),
    ({"seed": 1.5}, r"seed=1.5 must be a whole number in \[0, 2\*\*63\)"),
    ({"oracle": "topk"}, "oracle='topk': give an Oracle"),
])
def test_a_parameter_of_the_wrong_type_or_value_is_one_user_error(params, message):
    """Issue 47's Python API family: ChainSSVM trained silently with lam=-1 and ended in
    numpy's or Python's TypeError / ValueError / AttributeError for a value of the wrong
    type; each is now one UserError naming the parameter, checked as the command line checks
    the same setting (lam takes 1/n too)."""
    X, y = sequences(DATA)
    with pytest.raises(UserError, match=message):
        ChainSSVM(**params).fit(X, y)
    assert ChainSSVM(lam="1/n", passes=1, seed=np.int64(3)).fit(X, y).n_iter_ == 1
