"""Chain kernels against brute-force enumeration and a dense reference feature map."""

import collections
import itertools

import numpy as np
import pytest
from helpers.reference import phi_dense

from ssvmbench.common.errors import UserError
from ssvmbench.data.synthetic import random_chains
from ssvmbench.tasks import chain
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.scratch import SIMD_LANES, padded


def scratch(task):
    return chain.buffers(task.max_len, task.n_labels)


# L = 5 and 9: the max-plus step's four-row sweeps and their remainders (chain.table_max)
CASES = [(L, T) for L in (2, 3, 4) for T in (1, 2, 3, 5)] + [(5, 3), (9, 2)]


@pytest.mark.parametrize("L,T", CASES)
def test_viterbi_matches_brute_force(L, T):
    task = ChainTask(random_chains(4, L, 5, lengths=(T, T), seed=L * 10 + T))
    rng = np.random.default_rng(T)
    U, delta, y, _, _ = scratch(task)
    for i in range(task.n):
        w = rng.normal(size=task.d)
        ws = rng.uniform(0.5, 2.0)
        t0 = task.dataset.offsets[i]
        gold = task.dataset.labels[t0:t0 + T]
        chain.unary_scores(w, ws, task.dims, task.data, i, U)
        for augment in (False, True):
            values = {}
            for lab in itertools.product(range(L), repeat=T):
                loss = np.mean(np.array(lab) != gold) if augment else 0.0
                values[lab] = ws * w @ phi_dense(task, i, lab) + loss
            unit = 1.0 / T if augment else 0.0
            best = chain.viterbi(w, ws, task.dims, U, T, gold, unit, delta, y)
            assert best == pytest.approx(max(values.values()), abs=1e-10)
            assert values[tuple(y[:T])] == pytest.approx(best, abs=1e-10)
            score = chain.labeling_score(w, ws, task.dims, U, T, y)
            assert score == pytest.approx(ws * w @ phi_dense(task, i, y[:T]), abs=1e-10)


@pytest.mark.parametrize("L", range(1, 14))
def test_a_max_plus_step_over_the_padded_table_is_the_plain_maximum(L):
    """``table_max`` (four rows per sweep, then the rest one by one) gives, in every lane
    the table is padded to, ``max_a prev[a] + table[a, b]`` to the bit, with ties and
    ``-inf`` among the values; ``table_max_pair`` the same for two vectors in one sweep."""
    rng = np.random.default_rng(L)
    Lp = padded(L)
    table = np.zeros((L, Lp))
    table[:, :L] = rng.integers(-3, 3, size=(L, L)) * 0.5      # many equal sums
    prev = rng.integers(-3, 3, size=Lp) * 0.25
    prev[rng.integers(0, L)] = -np.inf
    out = np.full(Lp, np.nan)
    chain.table_max(table, prev, out)
    np.testing.assert_array_equal(out, (prev[:L, None] + table).max(axis=0))
    prev2 = rng.integers(-3, 3, size=Lp) * 0.25
    out1, out2 = np.full(Lp, np.nan), np.full(Lp, np.nan)
    chain.table_max_pair(table, prev, out1, prev2, out2)
    np.testing.assert_array_equal(out1, out)
    np.testing.assert_array_equal(out2, (prev2[:L, None] + table).max(axis=0))
    assert Lp % SIMD_LANES == 0 and L <= Lp < L + SIMD_LANES


def test_viterbi_refuses_a_table_that_is_not_its_scratch():
    task = ChainTask(random_chains(2, 5, 4, lengths=(3, 3), seed=1))
    U = np.empty((task.max_len, task.n_labels))
    T = chain.unary_scores(np.zeros(task.d), 1.0, task.dims, task.data, 0, U)
    with pytest.raises(ValueError, match="viterbi_scratch"):
        chain.viterbi(np.zeros(task.d), 1.0, task.dims, U, T, task.dataset.labels[:T], 0.0,
                      np.empty((task.max_len, task.n_labels)), np.empty(T, np.int32))


@pytest.mark.parametrize("L,T", [(9, 6), (26, 3)])
def test_wide_tokens_and_the_gram_kernels_match_dense_products(L, T):
    """Tokens with many active features (the four-row gather and scatter sweeps and their
    remainders) against the dense feature map; SAP's Gram kernels give the squared norm of
    a direction and the scores after the step without reading features again."""
    task = ChainTask(random_chains(6, L, 23, lengths=(T, T), density=0.7, seed=L))
    rng = np.random.default_rng(T)
    U, _, _, R, E = scratch(task)
    K, rows = np.empty((T, T)), np.empty(T, dtype=np.int64)
    for i in range(task.n):
        t0 = task.dataset.offsets[i]
        gold = task.dataset.labels[t0:t0 + T]
        y = gold.copy()
        y[rng.integers(0, T)] = (y[0] + 1) % L       # at least one token differs
        psi = phi_dense(task, i, gold) - phi_dense(task, i, y)
        chain.psi_residual(gold, y, T, R, E)
        w = rng.normal(size=task.d)
        ws = rng.uniform(0.5, 2.0)
        chain.unary_scores(w, ws, task.dims, task.data, i, U)
        for lab in (gold, y):
            score = chain.labeling_score(w, ws, task.dims, U, T, lab)
            assert score == pytest.approx(ws * w @ phi_dense(task, i, lab))
        chain.unary_scores(w, 1.0, task.dims, task.data, i, U)
        m = chain.residual_gram(task.dims, task.data, t0, T, R, np.zeros(task.dims[0]), K, rows)
        assert set(rows[:m]) == set(np.flatnonzero(gold != y))
        assert chain.gram_sqnorm(K, rows, m, T, R, E) == pytest.approx(psi @ psi)
        chain.add_direction(w, -0.3, task.dims, task.data, t0, T, R, E, np.empty((0, 0)),
                            np.empty(0))
        chain.add_gram_scores(U, -0.3, K, rows, m, T, R)
        expected = np.empty_like(U)
        chain.unary_scores(w, 1.0, task.dims, task.data, i, expected)
        np.testing.assert_allclose(U[:T], expected[:T], atol=1e-12)


@pytest.mark.parametrize("L,T", CASES)
def test_psi_direction_and_loss(L, T):
    task = ChainTask(random_chains(3, L, 6, lengths=(T, T), seed=T))
    rng = np.random.default_rng(L)
    U, _, _, R, E = scratch(task)
    for i in range(task.n):
        t0 = task.dataset.offsets[i]
        gold = task.dataset.labels[t0:t0 + T]
        y = rng.integers(0, L, size=T).astype(np.int32)
        psi = phi_dense(task, i, gold) - phi_dense(task, i, y)
        chain.psi_residual(gold, y, T, R, E)
        w = rng.normal(size=task.d)
        w0 = w.copy()
        averages_U, weights = np.zeros((2, task.d)), np.array([0.5, 2.0])
        chain.add_direction(w, 0.7, task.dims, task.data, t0, T, R, E, averages_U, weights)
        np.testing.assert_allclose(w - w0, 0.7 * psi, atol=1e-12)
        np.testing.assert_allclose(averages_U, weights[:, None] * 0.7 * psi, atol=1e-12)
        sq = chain.direction_sqnorm(task.dims, task.data, t0, T, R, E, np.zeros(task.dims[0]))
        assert sq == pytest.approx(psi @ psi)
        chain.unary_scores(w0, 1.0, task.dims, task.data, i, U)
        assert chain.direction_dot(w0, task.dims, task.data, U, T, R, E) == pytest.approx(w0 @ psi)
        assert chain.hamming(gold, y, T) == pytest.approx(np.mean(gold != y))


def test_kept_token_gram_gives_the_norm_of_a_fresh_one_to_the_bit(monkeypatch):
    """direction_sqnorm keeps each token's Gram row at its first non-zero residual row
    (chain.token_gram_store) and reads it after: the same norm to the bit as computing every
    entry afresh (Gaussian feature values: a different summation order would show), the
    kept entries the tokens' feature dot products, and only the rows that were needed
    computed. Past TOKEN_GRAM_BYTES nothing is kept."""
    task = ChainTask(random_chains(6, 4, 7, lengths=(1, 7), seed=5))
    ds, L = task.dataset, task.n_labels
    X = np.zeros((task.n_rows, task.dims[0]))
    for t in range(task.n_rows):
        p0, p1 = ds.feat_ptr[t], ds.feat_ptr[t + 1]
        X[t, ds.feat_idx[p0:p1]] = ds.feat_val[p0:p1]
    fresh = task.data._replace(gram=np.empty(0))
    rng = np.random.default_rng(0)
    _, _, _, R, E = scratch(task)
    needed = np.zeros(task.n_rows, dtype=bool)
    for _ in range(3):
        for i in range(task.n):
            t0, T = ds.offsets[i], ds.offsets[i + 1] - ds.offsets[i]
            R[:T] = np.where(rng.random((T, L)) < 0.3, rng.normal(size=(T, L)), 0.0)
            needed[t0:t0 + T] |= R[:T].any(1)
            E[2][0] = 0
            dense = np.zeros(task.dims[0])
            kept = chain.direction_sqnorm(task.dims, task.data, t0, T, R, E, dense)
            assert kept == chain.direction_sqnorm(task.dims, fresh, t0, T, R, E, dense)
            assert not dense.any()
            x = X[t0:t0 + T]
            biases = R[0] @ R[0] + R[T - 1] @ R[T - 1]     # first- and last-label blocks
            assert kept == pytest.approx(np.sum((x @ x.T) * (R[:T] @ R[:T].T)) + biases)
    np.testing.assert_array_equal(task.data.gram_done.astype(bool), needed)
    for t in np.flatnonzero(needed):
        end = np.searchsorted(ds.offsets, t, side="right")
        row = task.data.gram[task.data.gram_start[t]:task.data.gram_start[t + 1]]
        np.testing.assert_allclose(row, X[t:ds.offsets[end]] @ X[t], rtol=1e-12)
    monkeypatch.setattr(chain, "TOKEN_GRAM_BYTES", 8 * (task.data.gram.size - 1))
    assert chain.token_gram_store(ds.offsets)[0].size == 0
    monkeypatch.setattr(chain, "TOKEN_GRAM_BYTES", 8 * task.data.gram.size)
    assert chain.token_gram_store(ds.offsets)[0].size == task.data.gram.size


def test_factored_marginals_match_the_convex_combination():
    """The factored block (mu, sparse P_i, Psum) follows alpha_i <- (1-g) alpha_i + g e_y,
    including g = 1 (entries dropped) and pools that must grow (many distinct bigrams)."""
    task = ChainTask(random_chains(5, 4, 4, lengths=(2, 6), seed=3))
    L = task.n_labels
    mu = np.empty((task.n_rows, L))
    Psum = np.empty(L * L)
    blocks = chain.init_marginals(task.data, mu, Psum)
    rng = np.random.default_rng(0)
    U, _, _, R, E = scratch(task)
    averages_U, weights = np.zeros((1, mu.size + L * L)), np.array([1.0])
    expected_alpha = []
    for i in range(task.n):
        t0, t1 = task.dataset.offsets[i], task.dataset.offsets[i + 1]
        T = t1 - t0
        expected = phi_dense(task, i, task.dataset.labels[t0:t1])   # alpha_i = e_{y_i}
        for gamma in rng.uniform(size=12).tolist() + [1.0, 0.3]:
            y = rng.integers(0, L, size=T).astype(np.int32)
            chain.marginals_residual(mu, blocks, task.data, i, t0, y, T, R, E)
            blocks = chain.move_marginals(mu, Psum, blocks, task.data, i, t0, T, gamma, R, E,
                                          averages_U, weights)
            expected = (1 - gamma) * expected + gamma * phi_dense(task, i, y)
        y = rng.integers(0, L, size=T).astype(np.int32)
        chain.marginals_residual(mu, blocks, task.data, i, t0, y, T, R, E)
        direction = phi_dense(task, i, y) - expected
        w = np.zeros(task.d)
        chain.add_direction(w, 1.0, task.dims, task.data, t0, T, R, E,
                            np.empty((0, 0)), np.empty(0))
        np.testing.assert_allclose(w, direction, atol=1e-12)
        sq = chain.direction_sqnorm(task.dims, task.data, t0, T, R, E, np.zeros(task.dims[0]))
        assert sq == pytest.approx(direction @ direction)
        expected_alpha.append(expected)
    pool_keys, pool_vals, start, length, cap, used = blocks
    assert np.all(length <= cap) and used[0] <= len(pool_keys)
    assert np.any(cap > np.maximum(4, 2 * (np.diff(task.dataset.offsets) - 1)))   # moved
    for i in range(task.n):
        keys = pool_keys[start[i]:start[i] + length[i]]
        assert np.all(np.diff(keys) > 0)            # sorted, unique
    # w = A alpha from the factored state equals the dense sum; Psum is the sum of blocks
    F = task.dims[0]
    lam = 0.5
    gold_phi = sum(phi_dense(task, i, task.dataset.labels[task.dataset.offsets[i]:
                                                            task.dataset.offsets[i + 1]])
                   for i in range(task.n))
    alpha = np.concatenate([mu.ravel(), Psum])
    w = np.empty(task.d)
    chain.weights_from_average(alpha, np.zeros_like(alpha), 1.0, 1.0, task.dims, task.data,
                               lam, w)
    np.testing.assert_allclose(w, (gold_phi - sum(expected_alpha)) / (lam * task.n),
                               atol=1e-12)
    # an average (c alpha - U) / s is mapped without materializing it
    U = np.random.default_rng(1).normal(size=alpha.size)
    w_bar = np.empty(task.d)
    chain.weights_from_average(alpha, U, 3.0, 2.0, task.dims, task.data, lam, w_bar)
    w_ref = np.empty(task.d)
    chain.weights_from_average((3.0 * alpha - U) / 2.0, np.zeros_like(alpha), 1.0, 1.0,
                               task.dims, task.data, lam, w_ref)
    np.testing.assert_allclose(w_bar, w_ref, atol=1e-12)
    np.testing.assert_allclose(Psum, sum(expected_alpha)[F * L:F * L + L * L], atol=1e-12)
    # the lazy average record (weight 1) sums the changes of (mu, Psum) since the start
    mu0, Psum0 = np.empty_like(mu), np.empty_like(Psum)
    chain.init_marginals(task.data, mu0, Psum0)
    np.testing.assert_allclose(averages_U[0], np.concatenate([(mu - mu0).ravel(),
                                                              Psum - Psum0]), atol=1e-12)


def test_initial_blocks_are_each_sequences_gold_bigram_counts():
    """init_marginals (NumPy) against counting by hand: ``mu`` the gold labels one-hot,
    each block the sorted gold bigram counts of its sequence (length-1 sequences none,
    repeats counted) with room for ``max(4, 2 (T - 1))`` entries, ``Psum`` their sum; the
    arrays of the types BCFW's compiled steps take."""
    task = ChainTask(random_chains(9, 3, 3, lengths=(1, 9), seed=4))
    L, offsets, labels = task.n_labels, task.dataset.offsets, task.dataset.labels
    assert 1 in np.diff(offsets)                     # a sequence with no bigram
    mu, Psum = np.full((task.n_rows, L), 7.0), np.full(L * L, 7.0)
    blocks = chain.init_marginals(task.data, mu, Psum)
    pool_keys, pool_vals, start, length, cap, used = blocks
    np.testing.assert_array_equal(mu, np.eye(L)[labels])
    expected_sum = np.zeros(L * L)
    for i in range(task.n):
        gold = labels[offsets[i]:offsets[i + 1]].tolist()
        counts = collections.Counter(a * L + b for a, b in zip(gold, gold[1:]))
        keys = sorted(counts)
        assert cap[i] == max(4, 2 * (len(gold) - 1)) and length[i] == len(keys)
        assert start[i] == sum(cap[:i])
        block = slice(start[i], start[i] + length[i])
        assert pool_keys[block].tolist() == keys
        assert pool_vals[block].tolist() == [float(counts[k]) for k in keys]
        for k in keys:
            expected_sum[k] += counts[k]
    np.testing.assert_array_equal(Psum, expected_sum)
    assert used.tolist() == [len(pool_keys)] == [cap.sum()]
    for array, dtype in zip(blocks, (np.int64, np.float64, np.int64, np.int64, np.int64,
                                     np.int64)):
        assert array.dtype == dtype and array.ndim == 1 and array.flags.c_contiguous


def test_evaluate_hinge_and_errors_by_enumeration():
    task = ChainTask(random_chains(6, 3, 4, lengths=(1, 4), seed=5))
    w = np.random.default_rng(1).normal(size=task.d)
    hinge, err, predictions = task.evaluate(w)
    acc = np.mean(predictions == task.dataset.labels)
    hinges, errors, wrong = [], [], 0
    for i in range(task.n):
        t0, t1 = task.dataset.offsets[i], task.dataset.offsets[i + 1]
        gold = task.dataset.labels[t0:t1]
        labelings = list(itertools.product(range(3), repeat=t1 - t0))
        scores = [w @ phi_dense(task, i, y) for y in labelings]
        augmented = [s + np.mean(np.array(y) != gold) for s, y in zip(scores, labelings)]
        hinges.append(max(augmented) - w @ phi_dense(task, i, gold))
        pred = np.array(labelings[int(np.argmax(scores))])
        errors.append(np.mean(pred != gold))
        wrong += np.sum(pred != gold)
    assert hinge == pytest.approx(np.mean(hinges))
    assert err == pytest.approx(np.mean(errors))
    assert acc == pytest.approx(1 - wrong / task.n_rows)


def sum_in_order(values):
    total = 0.0
    for value in values:
        total += value
    return total


@pytest.mark.parametrize("loss", ["normalized_hamming", "hamming"])
def test_evaluation_equals_two_viterbi_passes_bit_for_bit(data_root, loss):
    """The evaluation decodes and measures the hinge in one sweep over a padded transition
    table (issue 31); its logged numbers are those of the two Viterbi calls it replaces, to
    the last bit, on OCR (26 labels, padded to 28)."""
    from ssvmbench.data import load_split
    task = ChainTask(load_split("ocr", root=str(data_root)).test, loss)
    w = np.random.default_rng(3).normal(size=task.d) * 0.1
    hinge, error, predictions = task.evaluate(w)
    U, delta, y, _, _ = chain.buffers(task.max_len, task.n_labels)
    hinges, errors, expected = np.empty(task.n), np.empty(task.n), np.empty_like(predictions)
    for i in range(task.n):
        t0 = task.dataset.offsets[i]
        T = chain.unary_scores(w, 1.0, task.dims, task.data, i, U)
        gold = task.dataset.labels[t0:t0 + T]
        chain.viterbi(w, 1.0, task.dims, U, T, gold, 0.0, delta, y)
        expected[t0:t0 + T] = y[:T]
        errors[i] = chain.hamming(gold, y, T)
        top = chain.viterbi(w, 1.0, task.dims, U, T, gold,
                            chain.loss_unit(task.normalized, T), delta, y)
        hinges[i] = top - chain.labeling_score(w, 1.0, task.dims, U, T, gold)
    np.testing.assert_array_equal(predictions, expected)
    assert (hinge, error) == (sum_in_order(hinges) / task.n, sum_in_order(errors) / task.n)
    _, plain_error, plain_predictions = task.evaluate(w, with_hinge=False)  # decoding only
    np.testing.assert_array_equal(plain_predictions, expected)
    assert plain_error == error


def test_hamming_loss_option_by_enumeration():
    """loss=hamming (Casimir): one unit per wrong token in the hinge; unknown losses refused."""
    task = ChainTask(random_chains(5, 3, 4, lengths=(1, 4), seed=6), loss="hamming")
    w = np.random.default_rng(2).normal(size=task.d)
    hinge, _, _ = task.evaluate(w)
    hinges = []
    for i in range(task.n):
        t0, t1 = task.dataset.offsets[i], task.dataset.offsets[i + 1]
        gold = task.dataset.labels[t0:t1]
        labelings = itertools.product(range(3), repeat=t1 - t0)
        hinges.append(max(w @ phi_dense(task, i, y) + np.sum(np.array(y) != gold)
                          for y in labelings) - w @ phi_dense(task, i, gold))
    assert hinge == pytest.approx(np.mean(hinges))
    with pytest.raises(UserError, match="loss=squared"):
        ChainTask(task.dataset, loss="squared")
