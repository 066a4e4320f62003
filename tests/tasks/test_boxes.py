"""Box localization (Casimir Section 4): IoU and loss, the exhaustive oracles against direct
numpy formulas, gradients against finite differences, the BCFW dual state, every solver on
the task, the VOC 2007 AP and the readers (synthetic scenes, the authors' VOC format)."""

import pickle

import numpy as np
import pytest
from helpers.kernels import oracle_call
from scipy.special import logsumexp, softmax

from ssvmbench.common.errors import UserError
from ssvmbench.data import load_split
from ssvmbench.data.boxes import iou
from ssvmbench.data.scenes import load_scenes
from ssvmbench.plugin_kit.testing import reference_topk
from ssvmbench.run.monitor import measure
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import kernels, make_task
from ssvmbench.tasks.metrics import voc07_average_precision
from ssvmbench.tasks.oracle import Oracle

SPLIT = load_scenes(n_train=30, n_test=20, size=40, seed=1)
TASK = make_task(SPLIT.train)
MU = 0.3


def test_iou_by_hand():
    a = np.array([[0, 0, 9, 9]], dtype=float)            # 10 x 10 pixels
    b = np.array([[5, 0, 14, 9], [20, 20, 29, 29], [0, 0, 9, 9]], dtype=float)
    assert iou(a, b) == pytest.approx([50 / 150, 0.0, 1.0])


def test_task_loss_is_one_minus_iou_with_the_best_candidate():
    ds, data = TASK.dataset, TASK.data
    for i in range(ds.n):
        rows = slice(ds.offsets[i], ds.offsets[i + 1])
        gold = data.gold[i]
        assert ds.iou[gold] == ds.iou[rows].max()
        expected = 1 - iou(ds.boxes[rows], ds.boxes[gold][None])
        assert np.allclose(data.loss[rows], expected) and data.loss[gold] == 0


def candidate_scores(w, i):
    """Loss-augmented scores z_j and the gold score by plain numpy."""
    ds, data = TASK.dataset, TASK.data
    rows = slice(ds.offsets[i], ds.offsets[i + 1])
    s = ds.features[rows].astype(float) @ w
    return s + data.loss[rows], s[data.gold[i] - ds.offsets[i]]


@pytest.mark.parametrize("oracle", [Oracle(), Oracle("topk", 10, MU), Oracle("exp", 1, MU)])
def test_exhaustive_oracles_against_direct_formulas(oracle):
    """max: max_j z_j - s_gold with gradient phi(argmax) - phi(gold); top-K: the smoothed max
    over the K best; exp: mu logsumexp(z / mu) with gradient E_p[phi] - phi(gold)."""
    rng = np.random.default_rng(0)
    ds = TASK.dataset
    for i in range(5):
        w = rng.normal(size=TASK.d)
        z, gold_score = candidate_scores(w, i)
        value, grad, _ = oracle_call(TASK, oracle, w, i)
        X = ds.features[ds.offsets[i]:ds.offsets[i + 1]].astype(float)
        phi_gold = ds.features[TASK.data.gold[i]]
        if oracle.name == "max":
            assert value == pytest.approx(z.max() - gold_score)
            assert np.allclose(grad, X[np.argmax(z)] - phi_gold, atol=1e-5)
        elif oracle.name == "topk":
            assert value == pytest.approx(reference_topk(z, 10, MU)[0] - gold_score)
            assert z.max() - gold_score - 1e-9 <= value <= z.max() - gold_score + MU / 2
        else:
            assert value == pytest.approx(MU * logsumexp(z / MU) - gold_score)
            assert np.allclose(grad, softmax(z / MU) @ X - phi_gold, atol=1e-5)


@pytest.mark.parametrize("oracle", [Oracle("topk", 10, MU), Oracle("exp", 1, MU)])
def test_smoothed_gradients_match_finite_differences(oracle):
    rng = np.random.default_rng(1)
    w = rng.normal(size=TASK.d)
    _, grad, _ = oracle_call(TASK, oracle, w, 2)
    for _ in range(5):
        v = rng.normal(size=TASK.d)
        h = 1e-6
        fd = (oracle_call(TASK, oracle, w + h * v, 2)[0]
              - oracle_call(TASK, oracle, w - h * v, 2)[0]) / 2 / h
        assert fd == pytest.approx(grad @ v, rel=1e-4, abs=1e-6)


def test_small_mu_and_k_one_give_the_max_oracle():
    w = np.random.default_rng(2).normal(size=TASK.d)
    hinge, subgradient, _ = oracle_call(TASK, Oracle(), w, 3)
    for oracle in (Oracle("topk", 1, MU), Oracle("topk", 10, 1e-9), Oracle("exp", 1, 1e-9)):
        value, grad, _ = oracle_call(TASK, oracle, w, 3)
        assert value == pytest.approx(hinge, abs=1e-6) and np.allclose(grad, subgradient)


def test_bcfw_dual_state_maps_to_its_weights():
    """w = A alpha: the factored candidate distribution mapped back gives the solver's w,
    and the duality gap is non-negative for every logged iterate."""
    solver = make_solver("bcfw", TASK, 0.1, {}, 0)
    solver.run_until(3 * TASK.n)
    w = np.empty(TASK.d)
    alpha = solver.alpha
    kernels.weights_from_average(alpha, np.zeros_like(alpha), 1.0, 1.0, TASK.dims, TASK.data,
                                 solver.lam, w)
    assert np.allclose(w, solver.w)
    mu = solver.mu[:, 0]
    sums = np.add.reduceat(mu, TASK.data.offsets[:-1])
    assert np.allclose(sums, 1.0) and mu.min() >= -1e-12
    rows = measure(solver, TASK, make_task(SPLIT.test))
    assert min(rows["gap"]) >= -1e-10


@pytest.mark.parametrize("name,oracle,options", [
    ("bcfw", Oracle(), {}), ("fw", Oracle(), {}), ("ssg", Oracle(), {}),
    ("sgd", Oracle("topk", 10, MU), {}), ("svrg", Oracle("topk", 10, MU), {"lr": 0.01}),
    ("sc_svrg", Oracle("topk", 10, MU), {"lr": 0.01})])
def test_every_solver_lowers_the_objective_on_boxes(name, oracle, options):
    """From w = 0 (primal = mean max loss) every solver reaches a lower primal objective
    (batch FW's raw iterate is not monotone: its best iterate is checked)."""
    test = make_task(SPLIT.test)
    lam = 10 / TASK.n
    solver = make_solver(name, TASK, lam, options, 0, oracle)
    start = TASK.evaluate(np.zeros(TASK.d))[0]
    solver.run_until(16 * TASK.n)
    assert min(measure(solver, TASK, test)["primal"]) < 0.9 * start


def test_voc07_average_precision_by_hand():
    # ranks: hit, miss, hit; 4 objects -> precision 1, 1/2, 2/3 at recall 1/4, 1/4, 1/2
    ap = voc07_average_precision([True, False, True], [3.0, 2.0, 1.0], 4)
    assert ap == pytest.approx((3 * 1.0 + 3 * 2 / 3) / 11)
    assert voc07_average_precision([True] * 5, np.arange(5.0), 5) == 1.0
    assert voc07_average_precision([False] * 3, np.arange(3.0), 3) == 0.0


def test_synthetic_scenes_are_deterministic_and_labelled():
    again = load_scenes(n_train=30, n_test=20, size=40, seed=1)
    assert np.array_equal(again.train.features, SPLIT.train.features)
    assert again.checksum == SPLIT.checksum and "SYNTHETIC" in SPLIT.variant
    assert SPLIT.train.n == 30 and SPLIT.test.n == 20 and SPLIT.metric == "ap"
    assert SPLIT.train.n_features == 63
    with pytest.raises(UserError, match="data.size"):
        load_scenes(size=20)


def write_voc_fixture(root, n_images=8, boxes_per_image=6, dim=5, object_class="cat"):
    """A small dataset in the Casimir authors' format (label pickle + per-image .npy)."""
    rng = np.random.default_rng(0)
    (root / "voc" / "features").mkdir(parents=True)
    ids, boxes, ious = [], [], []
    for k in range(n_images):
        image_id = 100 + 7 * k
        corners = rng.integers(0, 50, size=(boxes_per_image, 2))
        b = np.hstack([corners, corners + rng.integers(5, 30, size=(boxes_per_image, 2))])
        ids.append(image_id)
        boxes.append(b.tolist())
        ious.append(rng.random(boxes_per_image).tolist())
        np.save(root / "voc" / "features" / f"{image_id:06d}_{object_class}.npy",
                rng.normal(size=boxes_per_image * dim).astype(np.float32))
    with open(root / "voc" / f"{object_class}_labels.pkl", "wb") as f:
        pickle.dump((ids, [1.0] * n_images, boxes, boxes, ious), f, protocol=2)
    return ids


def test_voc_reader_on_the_authors_format(tmp_path):
    ids = write_voc_fixture(tmp_path)
    split = load_split("voc", root=str(tmp_path), object_class="cat", dim=5, max_boxes=4)
    assert (split.train.n, split.test.n) == (6, 2)             # the authors' 3/4 split
    order = np.random.RandomState(1).permutation(8)
    assert list(split.train.image_ids) == [ids[k] for k in order[:6]]
    assert split.train.features.shape == (24, 5) and split.metric == "ap"
    first = np.load(tmp_path / "voc" / "features" / f"{ids[order[0]]:06d}_cat.npy")
    assert np.array_equal(split.train.features[:4], first.reshape(-1, 5)[:4])
    task = make_task(split.train)
    assert task.d == 5 and task.max_len == 4


def test_voc_reader_errors_say_what_to_do(tmp_path):
    with pytest.raises(UserError, match="label file .* not found.*voc_synthetic"):
        load_split("voc", root=str(tmp_path))
    write_voc_fixture(tmp_path)
    with pytest.raises(UserError, match="must match .*data.dim"):
        load_split("voc", root=str(tmp_path), dim=4)
    (tmp_path / "voc" / "features" / "000100_cat.npy").unlink()
    with pytest.raises(UserError, match="000100_cat.npy not found"):
        load_split("voc", root=str(tmp_path), dim=5)
    with pytest.raises(UserError, match="loss=hamming is not a loss of the (boxes|matching) task"):
        make_task(SPLIT.train, "hamming")
