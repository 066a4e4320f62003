"""The task plugin examples/multiclass: the multiclass SVM (Crammer-Singer; BCFW Section 2
with ``Y_i = {0..L-1}``, ``phi(x, y) = x (x) e_y``, 0/1 loss) added through the entry points
``ssvmbench.tasks``, ``ssvmbench.datasets`` and ``ssvmbench.metrics`` only. Its kernels
against brute-force enumeration with dense ``phi``, every L2 solver's conformance checks on
its tiny instance, loss refusal, the ``ocr_letters`` data, the command line (run, sweep,
plot) and BCFW on all OCR letters (a block-separable dual: monotone dual, gap certificate,
liblinear's Crammer-Singer optimum inside the gap)."""

from types import SimpleNamespace

import numpy as np
import pytest
from helpers.cli import ssvmbench
from helpers.example_plugins import require_example
from scipy.special import logsumexp, softmax

from ssvmbench.common.errors import Incompatible, UserError
from ssvmbench.data import load_split
from ssvmbench.data.synthetic import random_chains
from ssvmbench.plugin_kit import conformance
from ssvmbench.plugin_kit.testing import reference_topk
from ssvmbench.run.runlog import read_log
from ssvmbench.solvers import SOLVERS, make_solver, runs_on, solver_class, task_kinds
from ssvmbench.solvers.objective import Objective
from ssvmbench.tasks import kernels, make_task, registered
from ssvmbench.tasks.oracle import Oracle

L2_SOLVERS = ("bcfw", "cutting_plane", "fw", "l1_subgradient", "sc_svrg", "sgd", "ssg", "svrg")
REQUIRED = {"l1_subgradient": {"epsilon": 50.0}}       # options without a default
NO_U, NO_C = np.empty((0, 0)), np.empty(0)


@pytest.fixture(scope="module")
def mc():
    """The plugin's modules (examples/multiclass, which CI installs): skipped with the
    reason when it is not installed, a failure in CI."""
    require_example("multiclass")
    from ssvmbench_multiclass import dataset, metrics, task
    assert registered()["multiclass"] is task.MulticlassTask
    return SimpleNamespace(task=task, dataset=dataset, metrics=metrics,
                           Task=task.MulticlassTask)


@pytest.fixture(scope="module")
def small(mc):
    """A random training task (n = 9, F = 6, L = 5) and random weights."""
    t = make_task(mc.dataset.random_multiclass(9, 6, 5, density=0.6, seed=3))
    return t, np.random.default_rng(7).normal(size=t.d)


def dense(t):
    """``(X, y)``: the dense feature rows and labels of task ``t``."""
    return t.dataset.features.toarray(), t.dataset.labels


def phi(t, i, y):
    """``phi(x_i, y) = x_i (x) e_y`` as a dense d-vector (layout ``w[f * L + l]``)."""
    X, _ = dense(t)
    return np.outer(X[i], np.eye(t.n_labels)[y]).ravel()


def loss_augmented(t, w, i):
    """``z_y = L(y_i, y) + <w, phi(x_i, y)>`` for every y, and the gold score."""
    X, labels = dense(t)
    s = X[i] @ w.reshape(t.dims)
    return s + (np.arange(t.n_labels) != labels[i]), s[labels[i]]


def oracle_call(t, oracle, w, i, ws=1.0):
    """``(value, dense gradient, y)`` from the generic kernels, as the solvers call them."""
    U, _, y, R, E, _ = kernels.scratch(t.dims, t.data, t.max_len)
    T = kernels.scores(w, ws, t.dims, t.data, i, U)
    value = kernels.example_oracle(oracle.kind, oracle.K, oracle.mu, w, ws, t.dims, t.data,
                                   t.normalized, i, U, T, t.oracle_scratch(oracle), y, R, E)
    grad = np.zeros(t.d)
    kernels.add_direction(grad, 1.0, t.dims, t.data, t.data.offsets[i], T, R, E, NO_U, NO_C)
    return value, grad, int(y[0])


def test_scores_and_decode_enumerate_the_labels(small):
    t, w = small
    X, labels = dense(t)
    U, delta, y, _, _, _ = kernels.scratch(t.dims, t.data, t.max_len)
    for i in range(t.n):
        assert kernels.scores(w, 2.0, t.dims, t.data, i, U) == 1
        np.testing.assert_allclose(U[0], 2.0 * X[i] @ w.reshape(t.dims), rtol=1e-12)
        kernels.scores(w, 1.0, t.dims, t.data, i, U)
        z, _ = loss_augmented(t, w, i)
        loss = kernels.decode(w, t.dims, t.data, t.normalized, i, U, 1, delta, y)
        assert y[0] == np.argmax(z) and loss == float(y[0] != labels[i])


@pytest.mark.parametrize("oracle", [Oracle(), Oracle("topk", 3, 0.4), Oracle("topk", 5, 0.4),
                                    Oracle("topk", 50, 2.0), Oracle("exp", 1, 0.3)],
                         ids=["max", "top3", "top5", "top50", "exp"])
def test_oracles_against_enumeration(small, oracle):
    """max: ``max_y z_y - s_gold``, gradient ``phi(y*) - phi(y_i)``; top-K: the l2^2-smoothed
    max of the K best (Casimir Definition 1), gradient ``sum_k p_k phi(y_k) - phi(y_i)``;
    exp: ``mu logsumexp(z / mu) - s_gold``, gradient ``E_softmax[phi] - phi(y_i)``. The
    smoothed gradients also match central finite differences of the values, and ``ws``
    scales the weights."""
    t, w = small
    _, labels = dense(t)
    for i in range(t.n):
        z, gold = loss_augmented(t, w, i)
        if oracle.name == "max":
            value, p = z.max(), np.eye(t.n_labels)[np.argmax(z)]
        elif oracle.name == "topk":
            value, p = reference_topk(z, oracle.K, oracle.mu)
        else:
            value, p = oracle.mu * logsumexp(z / oracle.mu), softmax(z / oracle.mu)
        expected = sum(p[y] * phi(t, i, y) for y in range(t.n_labels)) - phi(t, i, labels[i])
        got, grad, y = oracle_call(t, oracle, w, i)
        assert got == pytest.approx(value - gold, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(grad, expected, atol=1e-9)
        assert y == np.argmax(z)                        # the loss-augmented argmax, any kind
        assert oracle_call(t, oracle, w / 4, i, ws=4.0)[0] == pytest.approx(got, rel=1e-9)
        if oracle.name != "max":
            eps = 1e-6
            steps = np.eye(t.d) * eps
            fd = [(oracle_call(t, oracle, w + e, i)[0] - oracle_call(t, oracle, w - e, i)[0])
                  / (2 * eps) for e in steps]
            np.testing.assert_allclose(fd, grad, atol=1e-5)


def test_smoothed_oracles_bracket_the_max(small):
    """Casimir Section 2: ``max z <= h_{mu,K}(z) <= max z + mu/2 (1 - 1/K)`` and ``max z <=
    h_{-mu H}(z) <= max z + mu log L``."""
    t, w = small
    mu, K = 0.5, 4
    for i in range(t.n):
        hinge = oracle_call(t, Oracle(), w, i)[0]
        top_k = oracle_call(t, Oracle("topk", K, mu), w, i)[0]
        exp = oracle_call(t, Oracle("exp", 1, mu), w, i)[0]
        assert hinge - 1e-12 <= top_k <= hinge + mu / 2 * (1 - 1 / K) + 1e-12
        assert hinge - 1e-12 <= exp <= hinge + mu * np.log(t.n_labels) + 1e-12


def test_oracles_count_their_calls(small):
    t, w = small
    before = t.data.calls[0]
    oracle_call(t, Oracle(), w, 0)
    U, delta, y, _, _, _ = kernels.scratch(t.dims, t.data, t.max_len)
    kernels.decode(w, t.dims, t.data, t.normalized, 0, U, 1, delta, y)
    assert t.data.calls[0] == before + 2


def test_stored_labelings_against_dense_phi(small):
    """labeling_hinge: ``L(y_i, y) - <w, phi(y_i) - phi(y)>``; add_labeling: ``g += coef
    (phi(y) - phi(y_i))``, for every label y (the cutting plane's cache)."""
    t, w = small
    _, labels = dense(t)
    y = np.zeros(1, dtype=np.int32)
    for i in range(t.n):
        for label in range(t.n_labels):
            y[0] = label
            diff = phi(t, i, label) - phi(t, i, labels[i])
            value = kernels.labeling_hinge(w, t.dims, t.data, t.normalized, i, 1, y)
            assert value == pytest.approx(float(label != labels[i]) + w @ diff, abs=1e-12)
            g = np.ones(t.d)
            kernels.add_labeling(g, 0.3, t.dims, t.data, i, 1, y)
            np.testing.assert_allclose(g, 1.0 + 0.3 * diff, atol=1e-12)


def test_active_set_kernels_against_dense_phi(small):
    """SAP's kernels: labeling_score ``<w, phi(x_i, y)>``, labeling_direction ``phi(y+) -
    phi(y-)``, direction_gram its squared norm, add_direction_scores the scores after a step,
    example_features the rows of ``w`` a direction touches."""
    t, w = small
    X, _ = dense(t)
    U, _, _, R, E, zero = kernels.scratch(t.dims, t.data, t.max_len)
    gram = kernels.gram_scratch(t.dims, t.data, t.max_len)
    plus, minus = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int32)
    for i in range(t.n):
        for a in range(t.n_labels):
            plus[0], minus[0] = a, (a + 2) % t.n_labels
            kernels.scores(w, 1.0, t.dims, t.data, i, U)
            assert kernels.labeling_score(w, t.dims, t.data, i, U, 1, plus) == pytest.approx(
                w @ phi(t, i, a))
            kernels.labeling_direction(t.data, i, 1, plus, minus, R, E)
            vec = phi(t, i, a) - phi(t, i, minus[0])
            after = np.zeros(t.d)
            kernels.add_direction(after, 1.0, t.dims, t.data, i, 1, R, E, NO_U, NO_C)
            np.testing.assert_allclose(after, vec, atol=1e-12)
            assert kernels.direction_gram(t.dims, t.data, i, 1, R, E, zero, gram) == (
                pytest.approx(vec @ vec))
            kernels.add_direction_scores(U, 0.4, t.data, 1, R, E, gram)
            np.testing.assert_allclose(U[0], (w + 0.4 * vec).reshape(t.dims).T @ X[i])
        touched = np.flatnonzero(X[i])
        np.testing.assert_array_equal(np.sort(kernels.example_features(t.data, i)), touched)
    np.testing.assert_array_equal(t.gold_labelings(), t.dataset.labels)


def test_sap_solves_the_elastic_net_multiclass_svm(small):
    """SAP (Algorithm 2) runs on the plugin through its active-set kernels: at l1 = 0 its
    optimum lies in BCFW's bracket [dual, primal] (BCFW converges slower here); with l1 > 0 the gap closes and ``w = soft(u, l1) / lam`` (the
    KKT conditions), sparser as l1 grows."""
    t, _ = small
    lam = 0.2
    bcfw = make_solver("bcfw", t, lam, {"iterates": ["raw"]}, 0)
    bcfw.run_until(2000 * t.n)
    _, w_bcfw, bcfw_dual = bcfw.iterates()[0]
    bcfw_primal = Objective(lam).primal(w_bcfw, t.evaluate(w_bcfw)[0])
    nnz = []
    for l1 in (0.0, 0.05, 0.3):
        sap = make_solver("sap", t, lam, {}, 0, None, l1)
        sap.run_until(1000 * t.n)
        _, w, dual = sap.iterates()[0]
        primal = Objective(lam, l1).primal(w, t.evaluate(w)[0])
        assert -1e-12 <= primal - dual < 1e-6
        if l1 == 0:
            assert bcfw_dual < primal < bcfw_primal
        u = sap.x.u
        np.testing.assert_allclose(w, np.sign(u) * np.maximum(np.abs(u) - l1, 0) / lam,
                                   atol=1e-6)
        nnz.append(np.count_nonzero(np.abs(w) > 1e-9))
    assert nnz[0] > nnz[1] > nnz[2]


def test_directions_against_dense_vectors(small):
    """A direction ``x_i (x) R[0]``: add_direction (with lazy averages), direction_sqnorm,
    direction_dot and subtract_direction against the dense vector."""
    t, w = small
    X, _ = dense(t)
    rng = np.random.default_rng(1)
    U, _, _, R, E, zero = kernels.scratch(t.dims, t.data, t.max_len)
    _, _, _, R2, E2, _ = kernels.scratch(t.dims, t.data, t.max_len)
    E[2][0] = E2[2][0] = 0
    for i in range(t.n):
        R[0] = rng.normal(size=t.n_labels)
        R2[0] = rng.normal(size=t.n_labels)
        vec = np.outer(X[i], R[0]).ravel()
        kernels.scores(w, 1.0, t.dims, t.data, i, U)
        assert kernels.direction_dot(w, t.dims, t.data, U, 1, R, E) == pytest.approx(w @ vec)
        assert kernels.direction_sqnorm(t.dims, t.data, i, 1, R, E, zero) == pytest.approx(
            vec @ vec)
        assert not zero.any()
        target, avg, C = w.copy(), np.zeros((2, t.d)), np.array([2.0, -1.0])
        kernels.add_direction(target, 0.7, t.dims, t.data, i, 1, R, E, avg, C)
        np.testing.assert_allclose(target, w + 0.7 * vec, atol=1e-12)
        np.testing.assert_allclose(avg, np.outer(C, 0.7 * vec), atol=1e-12)
        kernels.subtract_direction(t.data, 1, R, E, R2, E2)
        vec2 = np.outer(X[i], R2[0]).ravel()
        after = np.zeros(t.d)
        kernels.add_direction(after, 1.0, t.dims, t.data, i, 1, R, E, NO_U, NO_C)
        np.testing.assert_allclose(after, vec - vec2, atol=1e-12)


def explicit_A_alpha(t, alpha, lam):
    """``w = A alpha = 1/(lam n) sum_{i, y} alpha_i(y) (phi(y_i) - phi(y))`` (BCFW eq. 4)."""
    _, labels = dense(t)
    a = alpha.reshape(t.n, t.n_labels)
    return sum(a[i, y] * (phi(t, i, labels[i]) - phi(t, i, y))
               for i in range(t.n) for y in range(t.n_labels)) / (lam * t.n)


def test_dual_state_kernels(small):
    """init_marginals: ``alpha_i = e_{y_i}``; dual_residual: ``e_y - alpha_i``;
    move_marginals: ``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` (recorded in the lazy
    averages); weights_from_average: ``A alpha_bar`` against the explicit sum."""
    t, _ = small
    _, labels = dense(t)
    lam = 0.3
    alpha = np.empty(t.dual_size())
    assert len(alpha) == t.n * t.n_labels
    mu, Psum = t.dual_views(alpha)
    blocks = kernels.init_marginals(t.data, mu, Psum)
    np.testing.assert_array_equal(mu, np.eye(t.n_labels)[labels])
    _, _, y, R, E, _ = kernels.scratch(t.dims, t.data, t.max_len)
    avg, C = np.zeros((1, t.dual_size())), np.array([3.0])
    recorded = np.zeros(t.dual_size())
    rng = np.random.default_rng(2)
    for i in rng.integers(0, t.n, size=20):
        y[0] = rng.integers(t.n_labels)
        before = mu[i].copy()
        kernels.dual_residual(mu, blocks, t.data, i, i, y, 1, R, E)
        np.testing.assert_allclose(R[0], np.eye(t.n_labels)[y[0]] - before)
        gamma = rng.random()
        blocks = kernels.move_marginals(mu, Psum, blocks, t.data, i, i, 1, gamma, R, E, avg, C)
        np.testing.assert_allclose(mu[i], (1 - gamma) * before + gamma * np.eye(t.n_labels)[y[0]])
        recorded[i * t.n_labels:(i + 1) * t.n_labels] += C[0] * (mu[i] - before)
        np.testing.assert_allclose(avg[0], recorded, atol=1e-12)
    assert np.allclose(mu.sum(1), 1) and (mu >= -1e-15).all()
    w = np.empty(t.d)
    kernels.weights_from_average(alpha, np.zeros_like(alpha), 1.0, 1.0, t.dims, t.data, lam, w)
    np.testing.assert_allclose(w, explicit_A_alpha(t, alpha, lam), atol=1e-12)
    # an averaged state alpha_bar = (c alpha - U) / s: a point of the simplices again
    alpha_bar = rng.dirichlet(np.ones(t.n_labels), size=t.n).ravel()
    c, s = 2.5, 1.7
    kernels.weights_from_average(alpha, c * alpha - s * alpha_bar, c, s, t.dims, t.data, lam, w)
    np.testing.assert_allclose(w, explicit_A_alpha(t, alpha_bar, lam), atol=1e-12)


def test_bcfw_keeps_w_equal_to_A_alpha(small, mc):
    """After BCFW steps (add_direction on w, move_marginals on alpha) its w is A alpha, and
    its averaged iterate is A alpha_bar (BCFW Section 3)."""
    t, _ = small
    solver = make_solver("bcfw", t, 0.2, {}, 0)
    solver.run_until(7 * t.n)
    np.testing.assert_allclose(solver.w, explicit_A_alpha(t, solver.alpha, 0.2), atol=1e-10)
    mu = solver.alpha.reshape(t.n, t.n_labels)
    assert np.allclose(mu.sum(1), 1) and (mu >= -1e-12).all()


def test_evaluate_against_enumeration(small):
    t, w = small
    X, labels = dense(t)
    S = X @ w.reshape(t.dims)
    hinge, loss, predictions = t.evaluate(w)
    np.testing.assert_array_equal(predictions, S.argmax(1))
    assert loss == pytest.approx(np.mean(S.argmax(1) != labels))
    Z = S + (np.arange(t.n_labels) != labels[:, None])
    assert hinge == pytest.approx(np.mean(Z.max(1) - S[np.arange(t.n), labels]))
    assert np.isnan(t.evaluate(w, with_hinge=False)[0])
    with pytest.raises(ValueError, match="shape"):
        t.evaluate(w[:-1])


@pytest.mark.parametrize("name", L2_SOLVERS + ("sap",))
def test_every_l2_solver_passes_check_solver_on_the_task(mc, name):
    cls = solver_class(name)
    assert "multiclass" in task_kinds(cls)
    for check, failure in conformance.check_on(cls, mc.Task.tiny(), REQUIRED.get(name, {})):
        assert failure is None, (check, failure)


def test_only_online_eg_needs_kernels_it_does_not_declare(mc):
    """Online EG needs the marginal kernels; the plugin declares SAP's, not those."""
    runs = {name for name, cls in SOLVERS.items() if runs_on(cls, mc.Task)}
    assert runs == set(L2_SOLVERS) | {"sap"}
    for name in set(SOLVERS) - runs:
        with pytest.raises(Incompatible, match="the task lacks the kernels"):
            make_solver(name, mc.Task.tiny(), 0.1, {}, 0)


def test_make_task_picks_it_and_refuses_other_losses(mc):
    ds = mc.dataset.random_multiclass(6, 3, 3, seed=1)
    task = make_task(ds)                       # the config's default normalized_hamming
    assert isinstance(task, mc.Task) and task.loss == "zero_one"
    assert make_task(ds, "zero_one").loss == "zero_one"
    with pytest.raises(Incompatible, match="loss=hamming is not a loss of the multiclass task"):
        make_task(ds, "hamming")
    with pytest.raises(UserError, match="0/1 loss only"):
        mc.Task(ds, "hamming")
    assert make_task(random_chains(4, 3, 4, seed=0)).kind == "chain"   # chains unchanged


def test_the_metric_applies_to_multiclass_splits_only(mc):
    ds = mc.dataset.random_multiclass(6, 3, 3, seed=1)
    m = mc.metrics.letter_accuracy
    assert m.applies(ds) and not m.applies(random_chains(4, 3, 4, seed=0))
    assert m.score(ds, ds.labels) == 1.0 and m.score(ds, (ds.labels + 1) % 3) == 0.0


@pytest.fixture(scope="module")
def letters(mc, data_root):
    return mc.dataset.load_ocr_letters(root=str(data_root))


def test_ocr_letters_are_the_letters_of_the_ocr_words(letters, data_root):
    """BCFW's split of ssvmbench's OCR loader (train folds 1-9, test fold 0), one example per
    letter; subset and holdout work as for the built-ins; fold=k is SAP's split."""
    from ssvmbench.data import ocr
    words = ocr.load(root=str(data_root))
    assert (letters.train.n, letters.test.n) == (47535, 4617)
    assert letters.train.n_features == 129 and letters.train.n_labels == 26
    assert letters.metric == "letter_accuracy" and "test fold 0" in letters.variant
    for part, source in ((letters.train, words.train), (letters.test, words.test)):
        np.testing.assert_array_equal(part.labels, source.labels)
        np.testing.assert_array_equal(part.features.indptr, source.feat_ptr)
        np.testing.assert_array_equal(part.features.indices, source.feat_idx)
        np.testing.assert_array_equal(np.diff(np.r_[-1, np.flatnonzero(np.diff(
            part.source_ids)), part.n - 1]), np.diff(source.offsets))
    assert not hasattr(letters.train, "feat_ptr")       # not a chain: no token accuracy
    sub = load_split("ocr_letters", subset=0.05, root=str(data_root))
    assert sub.train.n == round(0.05 * 47535) and sub.test.n == 4617
    held = load_split("ocr_letters", holdout=0.1, root=str(data_root))
    assert held.train.n + held.test.n == 47535
    sap = load_split("ocr_letters", fold=3, root=str(data_root))
    assert sap.train.n == 5353 and sap.test.n == 52152 - 5353


def test_bcfw_on_all_ocr_letters(letters):
    """BCFW (line search) on the 47,535 training letters, lambda = 0.01: a block-separable dual
    (one simplex per letter), so the dual never decreases; the duality gap is >= 0 and
    falls; liblinear's Crammer-Singer solution (C = 1/(lam n)) lies inside the gap; the test
    letter accuracy is that of a linear multiclass SVM on the pixels (measured 0.731 after
    20 passes; 0.778 at lambda = 0.001)."""
    from sklearn.svm import LinearSVC
    train, test = make_task(letters.train), make_task(letters.test)
    lam = 0.01
    solver = make_solver("bcfw", train, lam, {"iterates": ["raw"]}, 0)
    objective = Objective(lam)
    rows = []
    for p in (1, 2, 4, 8, 12, 16, 20):
        solver.run_until(p * train.n)
        _, w, dual = solver.iterates()[0]
        primal = objective.primal(w, train.evaluate(w)[0])
        rows.append((primal, dual, primal - dual))
    primal, dual, gap = map(np.array, zip(*rows))
    assert (gap >= 0).all() and (np.diff(dual) >= -1e-12).all()
    assert gap[-1] < 1e-3 < gap[0] / 100 and primal[-1] < primal[0]
    reference = LinearSVC(multi_class="crammer_singer", fit_intercept=False,
                          C=1 / (lam * train.n), tol=1e-5, max_iter=10000)
    reference.fit(letters.train.features, letters.train.labels)
    w_ref = reference.coef_.T.ravel()                   # classes x F -> w[f * L + l]
    ref_primal = objective.primal(w_ref, train.evaluate(w_ref)[0])
    assert dual[-1] <= ref_primal + 1e-9 and ref_primal <= primal[-1] + 1e-6
    accuracy = 1 - test.evaluate(solver.iterates()[0][1], with_hinge=False)[1]
    assert 0.70 < accuracy < 0.76, accuracy


def test_run_sweep_and_plot_from_the_command_line(mc, data_root, tmp_path):
    """``data=ocr_letters`` from the command line: a run logs the plugin metric (as
    test_metric too) and the loss zero_one; a sweep of bcfw and ssg plots; loss=hamming is
    refused in one line."""
    env = {"SSVMBENCH_DATA_DIR": str(data_root)}
    data = ("data=ocr_letters", "+data.subset=0.05", "solver.passes=3")
    ssvmbench("run", "solver=bcfw", *data, f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path,
              env=env)
    trace, attrs = read_log(tmp_path / "run" / "run.h5")
    assert attrs["n"] == round(0.05 * 47535) and attrs["d"] == 129 * 26
    assert attrs["loss"] == "zero_one" and attrs["test_metric"] == "letter_accuracy"
    assert trace["test_letter_accuracy"].between(0.3, 1).all()
    np.testing.assert_allclose(trace["test_letter_accuracy"], 1 - trace["test_error"])
    assert (trace["gap"] >= 0).all() and "test_accuracy" not in trace
    out = tmp_path / "sweep"
    ssvmbench("run", "-m", "solver=bcfw,ssg", *data, f"hydra.sweep.dir={out}", cwd=tmp_path,
              env=env)
    ssvmbench("plot", str(out), "-o", str(tmp_path / "figures"), cwd=tmp_path, env=env)
    assert (tmp_path / "figures" / "suboptimality.png").exists()
    summary = (tmp_path / "figures" / "summary.md").read_text()
    assert "| ocr_letters | 0.01 | bcfw |" in summary and "| ocr_letters | 0.01 | ssg |" in summary
    refused = ssvmbench("run", "solver=bcfw", *data, "loss=hamming",
                        f"hydra.run.dir={tmp_path / 'refused'}", cwd=tmp_path, env=env,
                        check=False)
    assert refused.returncode != 0 and "not a loss of the multiclass task" in refused.stderr
