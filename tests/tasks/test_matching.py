"""Word alignment as bipartite matching (BCFW Section 6 / Appendix F; Casimir Table 1): the
max and top-K oracles against enumeration of all partial matchings, the asymmetric Hamming
loss and AER by hand, the BCFW dual block (edge marginals), every solver on a synthetic
bitext, the Hansards reader against the dataset README and a command-line run."""

import itertools
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.kernels import oracle_call

from ssvmbench.common.assignment import best_partial_matching, top_partial_matchings
from ssvmbench.common.errors import UserError
from ssvmbench.data import load_split
from ssvmbench.data.alignment import synthetic_alignment, target_matching
from ssvmbench.data.matchings import MatchingDataset
from ssvmbench.data.synthetic import random_bitext
from ssvmbench.plugin_kit.testing import reference_topk
from ssvmbench.run.monitor import measure
from ssvmbench.run.runlog import read_log
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import chain, kernels, make_task, matching, metrics
from ssvmbench.tasks.metrics import alignment_error_rate
from ssvmbench.tasks.oracle import Oracle

SPLIT = synthetic_alignment(n_train=30, n_test=15, seed=1)
TASK = make_task(SPLIT.train)
MU = 0.3


def tiny_task(shapes, F=3, seed=0):
    """A task on hand-made pairs of the given ``(m, m')`` with random features and random
    target matchings (the sure and possible links = the target)."""
    rng = np.random.default_rng(seed)
    shapes = np.array(shapes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(shapes.prod(axis=1))]).astype(np.int64)
    target = np.zeros(offsets[-1], dtype=bool)
    for i, (m, m2) in enumerate(shapes):
        r = rng.integers(0, min(m, m2) + 1)
        rows, cols = rng.choice(m, r, replace=False), rng.choice(m2, r, replace=False)
        target[offsets[i] + rows * m2 + cols] = True
    ds = MatchingDataset("tiny", offsets, shapes, rng.normal(size=(offsets[-1], F)), target,
                         target.copy(), target.copy(), np.arange(len(shapes)))
    return make_task(ds)


def partial_matchings(m, m2):
    """Every partial matching of an ``m x m'`` bipartite graph as edge indicators."""
    out = []
    for r in range(min(m, m2) + 1):
        for rows in itertools.combinations(range(m), r):
            for cols in itertools.permutations(range(m2), r):
                y = np.zeros(m * m2)
                y[np.array(rows, dtype=int) * m2 + np.array(cols, dtype=int)] = 1
                out.append(y)
    return np.array(out)


def asymmetric_hamming(gold, y):
    """Precision errors (edges not in gold) cost 1, recall errors (missed gold edges) 3."""
    return np.sum(y * (1 - gold)) + 3 * np.sum(gold * (1 - y))


def enumerate_pair(task, w, i):
    """``(all matchings Y, loss-augmented scores, target, edge features)`` of pair ``i``."""
    ds = task.dataset
    rows = slice(ds.offsets[i], ds.offsets[i + 1])
    X, gold = ds.features[rows], ds.target[rows].astype(float)
    Y = partial_matchings(*ds.shapes[i])
    z = Y @ (X @ w) + np.array([asymmetric_hamming(gold, y) for y in Y])
    return Y, z, gold, X


TINY = tiny_task([(3, 4), (4, 3), (2, 2), (1, 3), (3, 3)])


@pytest.mark.parametrize("seed", range(4))
def test_max_oracle_against_all_partial_matchings(seed):
    """Value max_y L(y_i, y) + <w, phi(y)> - <w, phi(y_i)> over every partial matching, the
    argmax, its gradient phi(y*) - phi(y_i) and BCFW's decode with its loss."""
    rng = np.random.default_rng(seed)
    for i in range(TINY.n):
        w = rng.normal(size=TINY.d)
        Y, z, gold, X = enumerate_pair(TINY, w, i)
        best = Y[np.argmax(z)]
        value, grad, y = oracle_call(TINY, Oracle(), w, i)
        assert value == pytest.approx(z.max() - gold @ (X @ w))
        assert np.array_equal(y, best) and np.allclose(grad, (best - gold) @ X)
        U, delta, y2, _, _ = chain.buffers(TINY.max_len, 1)
        T = kernels.scores(w, 1.0, TINY.dims, TINY.data, i, U)
        loss = kernels.decode(w, TINY.dims, TINY.data, False, i, U, T, delta, y2)
        assert np.array_equal(y2[:T], best) and loss == asymmetric_hamming(gold, best)


@pytest.mark.parametrize("K", [1, 4, 300])
def test_topk_oracle_against_enumeration(K):
    """h_{mu,K} over the K best loss-augmented matchings (Casimir Definition 1); with K above
    the number of matchings it is the exact l2^2 smoothing; K = 1 is the max oracle."""
    rng = np.random.default_rng(K)
    for i in range(TINY.n):
        w = rng.normal(size=TINY.d)
        _, z, gold, X = enumerate_pair(TINY, w, i)
        value, grad, _ = oracle_call(TINY, Oracle("topk", K, MU), w, i)
        assert value == pytest.approx(reference_topk(z, K, MU)[0] - gold @ (X @ w))
        if K == 1:
            assert value == pytest.approx(oracle_call(TINY, Oracle(), w, i)[0])


def test_topk_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    oracle = Oracle("topk", 4, MU)
    for i in (0, 4):
        w = rng.normal(size=TINY.d)
        _, grad, _ = oracle_call(TINY, oracle, w, i)
        for _ in range(4):
            v = rng.normal(size=TINY.d)
            fd = (oracle_call(TINY, oracle, w + 1e-6 * v, i)[0]
                  - oracle_call(TINY, oracle, w - 1e-6 * v, i)[0]) / 2e-6
            assert fd == pytest.approx(grad @ v, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_murty_top_k_and_best_matching_against_enumeration(seed):
    """The K best distinct partial matchings, scores sorted and equal to the K best of the
    enumeration (integer scores give ties and zero edges); the best one as the assignment
    on max(Z, 0) with non-positive edges dropped."""
    rng = np.random.default_rng(seed)
    m, m2 = rng.integers(1, 5, size=2)
    Z = rng.normal(size=(m, m2))
    if seed % 2:
        Z = np.round(2 * Z)
    Y = partial_matchings(m, m2)
    values = np.sort(Y @ Z.ravel())[::-1]
    K = int(rng.integers(1, 15))
    top = top_partial_matchings(Z, K)
    assert len(top) == min(K, len(Y))
    assert np.allclose([s for s, _, _ in top], values[:len(top)])
    assert len({(tuple(r), tuple(c)) for _, r, c in top}) == len(top)
    for score, rows, cols in top:
        assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)
        assert score == pytest.approx(Z[rows, cols].sum())
    rows, cols = best_partial_matching(Z)
    assert Z[rows, cols].sum() == pytest.approx(values[0]) and np.all(Z[rows, cols] > 0)


def test_asymmetric_hamming_loss_by_hand():
    """Target {(0,0), (1,1)} of a 2 x 3 pair; y = {(0,1), (1,1)}: one precision error (0,1)
    costs 1 and one recall error (0,0) costs 3."""
    target = np.zeros(6, dtype=bool)
    target[[0, 4]] = True
    ds = MatchingDataset("hand", np.array([0, 6]), np.array([[2, 3]]), np.ones((6, 1)),
                         target, target.copy(), target.copy(), np.arange(1))
    data = make_task(ds).data
    y = np.array([0, 1, 0, 0, 1, 0], dtype=np.int32)
    assert matching.task_loss(data, 0, y, 6) == 4.0
    assert matching.task_loss(data, 0, np.zeros(6, dtype=np.int32), 6) == 6.0
    assert matching.task_loss(data, 0, target.astype(np.int32), 6) == 0.0
    assert matching.task_loss(data, 0, np.array([0, 0, 1, 1, 0, 0], np.int32), 6) == 8.0


def test_alignment_error_rate_by_hand():
    """A = {a, b, c}, S = {a, d}, P = S + {b}: |A&S| = 1, |A&P| = 2, |A| + |S| = 5, AER = 0.4;
    predicting exactly S gives 0; predicting only possible links is not an error either."""
    a, b, c, d = np.eye(4, dtype=bool)
    sure, possible = a | d, b
    assert alignment_error_rate(a | b | c, sure, possible) == pytest.approx(1 - 3 / 5)
    assert alignment_error_rate(sure, sure, possible) == 0.0
    assert alignment_error_rate(a | d | b, sure, possible) == 0.0
    assert alignment_error_rate(c, sure, possible) == 1.0
    assert alignment_error_rate(np.zeros(4, bool), np.zeros(4, bool), possible) == 0.0
    ds = SPLIT.test
    assert metrics.metric("one_minus_aer").score(ds, ds.sure) == 1.0


def test_bcfw_dual_block_is_edge_marginals_mapping_to_w():
    """w = A alpha from the edge marginals; the marginals lie in the matching polytope;
    b^T alpha = 1/n sum_i L(y_i, mu_i) (L is linear); the gap is >= 0 for every iterate."""
    solver = make_solver("bcfw", TASK, 0.05, {"iterates": ["raw", "wavg", "tavg"]}, 0)
    test = make_task(SPLIT.test)
    for passes in (1, 3, 8):
        solver.run_until(passes * TASK.n)
        w = np.empty(TASK.d)
        kernels.weights_from_average(solver.alpha, np.zeros_like(solver.alpha), 1.0, 1.0,
                                     TASK.dims, TASK.data, solver.lam, w)
        assert np.allclose(w, solver.w)
        mu = solver.mu[:, 0]
        data = TASK.data
        losses = data.base + np.add.reduceat(mu * data.on_loss, data.offsets[:-1])
        assert solver.ell[0] == pytest.approx(losses.mean())
        assert mu.min() >= -1e-12 and mu.max() <= 1 + 1e-12
        for i, (m, m2) in enumerate(TASK.dataset.shapes):
            block = mu[data.offsets[i]:data.offsets[i + 1]].reshape(m, m2)
            assert block.sum(axis=0).max() <= 1 + 1e-9 and block.sum(axis=1).max() <= 1 + 1e-9
        assert min(measure(solver, TASK, test)["gap"]) >= -1e-10


@pytest.mark.parametrize("name,oracle,options", [
    ("bcfw", Oracle(), {}), ("fw", Oracle(), {}), ("ssg", Oracle(), {}),
    ("sgd", Oracle("topk", 5, MU), {}), ("svrg", Oracle("topk", 5, MU), {"lr": 0.01}),
    ("sc_svrg", Oracle("topk", 5, MU), {"lr": 0.01})])
def test_every_solver_lowers_the_objective_on_matchings(name, oracle, options):
    """From w = 0 every solver reaches a much lower primal and a low test AER on the
    synthetic bitext (the batch FW's best iterate counts)."""
    lam = 10 / TASK.n
    start = TASK.evaluate(np.zeros(TASK.d))[0]
    solver = make_solver(name, TASK, lam, options, 0, oracle)
    solver.run_until(16 * TASK.n)
    rows = measure(solver, TASK, make_task(SPLIT.test))
    assert min(rows["primal"]) < 0.5 * start and min(rows["test_error"]) < 0.1


def test_exp_oracle_and_sequence_losses_are_refused():
    with pytest.raises(UserError, match="oracle=exp is intractable on matching"):
        make_solver("sgd", TASK, 0.1, {}, 0, Oracle("exp", 1, MU))
    with pytest.raises(UserError, match="loss=hamming is not a loss of the (boxes|matching) task"):
        make_task(SPLIT.train, "hamming")
    with pytest.raises(UserError, match="runs on chain"):
        make_solver("sap", TASK, 0.1, {}, 0)


def test_synthetic_bitext_is_deterministic_with_valid_links():
    pairs, links = random_bitext(50, seed=3)
    assert (pairs, links) == random_bitext(50, seed=3)
    for (e, f), (sure, possible) in zip(pairs, links):
        assert sure <= possible
        assert all(j < len(e) and k < len(f) for j, k in possible)
        y = target_matching(sure, len(e), len(f))
        assert {tuple(p) for p in np.argwhere(y)} == sure        # the sure links are 1-to-1
    assert "SYNTHETIC" in SPLIT.variant and SPLIT.train.n_features == TASK.d == 34


def test_target_is_a_maximum_matching_inside_the_sure_links():
    """Sure links {(0,0), (0,1), (1,1)}: the target keeps 2 edges, (0,0) and (1,1)."""
    y = target_matching({(0, 0), (0, 1), (1, 1)}, 2, 3)
    assert {tuple(p) for p in np.argwhere(y)} == {(0, 0), (1, 1)}


def test_hansards_reader_matches_the_dataset_readme(hansards_root):
    """484 pairs: 37 trial (661 English / 721 French tokens) + 447 test (7,020 / 7,761);
    4,376 sure and 14,846 possible links; Taskar's split 137 train / 347 test."""
    split = load_split("alignment", root=str(hansards_root))
    train, test = split.train, split.test
    assert (train.n, test.n) == (137, 347) and split.metric == "one_minus_aer"
    assert list(train.ids) == list(range(1, 138)) and list(test.ids) == list(range(138, 485))
    shapes = np.concatenate([train.shapes, test.shapes])
    assert tuple(shapes[:37].sum(axis=0)) == (661, 721)
    assert tuple(shapes[37:].sum(axis=0)) == (7020, 7761)
    sure = train.sure.sum() + test.sure.sum()
    possible = train.possible.sum() + test.possible.sum()
    assert (sure, possible - sure) == (4376, 14846)
    for ds in (train, test):
        assert not np.any(ds.target & ~ds.sure)
    assert "d=34" in split.variant and "5,000" in split.variant
    assert split.train.n_features == 34


def copy_hansards(root, tmp_path):
    (tmp_path / "hansards").mkdir()
    for x in "efa":
        shutil.copy(root / "hansards" / f"hansards.{x}", tmp_path / "hansards")
    return tmp_path / "hansards"


def test_hansards_errors_name_the_file(hansards_root, tmp_path):
    with pytest.raises(UserError, match=r"hansards\.e not found"):
        load_split("alignment", root=str(tmp_path))
    folder = copy_hansards(hansards_root, tmp_path)
    with pytest.raises(UserError, match=r"bitext\.e not found; check data\.bitext"):
        load_split("alignment", root=str(tmp_path), bitext=str(tmp_path / "bitext"))
    lines = (folder / "hansards.a").read_text().splitlines()
    (folder / "hansards.a").write_text("\n".join(lines[:-1] + ["0-0 3x4"]) + "\n")
    with pytest.raises(UserError, match="line 484: '3x4' is not a link"):
        load_split("alignment", root=str(tmp_path))
    (folder / "hansards.a").write_text("\n".join(lines[:100]) + "\n")
    with pytest.raises(UserError, match="has 100 lines"):
        load_split("alignment", root=str(tmp_path))
    (folder / "hansards.a").unlink()
    with pytest.raises(UserError, match=r"hansards\.a not found"):
        load_split("alignment", root=str(tmp_path))


def test_dice_from_a_given_bitext(hansards_root, tmp_path):
    """data.bitext=PREFIX: the Dice statistics (and only those) come from PREFIX.e/.f."""
    folder = copy_hansards(hansards_root, tmp_path)
    for x in "ef":
        lines = (folder / f"hansards.{x}").read_text(encoding="utf-8").splitlines()
        (tmp_path / f"big.{x}").write_text("\n".join(lines[:200] * 3) + "\n", encoding="utf-8")
    default = load_split("alignment", root=str(tmp_path))
    given = load_split("alignment", root=str(tmp_path), bitext=str(tmp_path / "big"))
    assert "Dice from 600 pairs" in given.variant and given.checksum != default.checksum
    dice = list(default.train.feature_names).index("dice")
    assert not np.allclose(given.train.features[:, dice], default.train.features[:, dice])
    assert np.array_equal(given.train.sure, default.train.sure)


def test_oracle_kernels_are_cached_across_processes(tmp_path):
    """The object-mode assignment call compiles into the cache=True solver kernels: a second
    process loads BCFW's compiled steps for matchings from numba's cache."""
    script = ("import warnings, numba; warnings.simplefilter('error', numba.NumbaWarning)\n"
              "from ssvmbench.data.alignment import synthetic_alignment\n"
              "from ssvmbench.tasks import make_task\n"
              "from ssvmbench.solvers import make_solver, bcfw\n"
              "task = make_task(synthetic_alignment(5, 2).train)\n"
              "make_solver('bcfw', task, 0.1, {}, 0).run_until(task.n)\n"
              "print(sum(bcfw.bcfw_steps.stats.cache_hits.values()))\n")
    outputs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=tmp_path, timeout=600) for _ in range(2)]
    assert all(out.returncode == 0 for out in outputs), outputs[-1].stderr[-2000:]
    assert int(outputs[1].stdout.split()[-1]) == 1


def test_command_line_run_logs_aer(hansards_root, tmp_path):
    exe = shutil.which("ssvmbench", path=str(Path(sys.executable).parent))
    run_dir = tmp_path / "run"
    out = subprocess.run([exe, "run", "solver=bcfw", "data=alignment", "lambda=0.001",
                          "solver.passes=2", f"data.root={hansards_root}",
                          f"hydra.run.dir={run_dir}"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["status"] == "finished" and attrs["n"] == 137 and attrs["n_test"] == 347
    assert attrs["d"] == 34 and attrs["test_metric"] == "one_minus_aer"
    assert attrs["loss"] == "asymmetric_hamming" and "5,000" in attrs["data_variant"]
    assert sorted(trace["effective_pass"].unique()) == [1.0, 2.0]
    assert trace["test_error"].between(0, 0.5).all() and (trace["gap"] >= 0).all()
    assert np.allclose(trace["test_metric"], 1 - trace["test_error"])


def test_registering_the_tasks_imports_no_assignment_solver():
    """scipy.optimize (0.3 s to import) is imported when the matching task first solves an
    assignment, not when the tasks are registered: every command registers them, and a
    cold start's second process does so before it compiles anything."""
    code = ("import sys; from ssvmbench.tasks import registered; registered(); "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False"]
