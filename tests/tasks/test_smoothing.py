"""Smooth inference oracles (Casimir, Pillutla et al. 2018, Section 2) against brute-force
enumeration of all labelings on tiny chains, a dense reference feature map and finite
differences."""

import itertools

import numpy as np
import pytest
from helpers.reference import phi_dense
from scipy.special import logsumexp

from ssvmbench.data.synthetic import random_chains
from ssvmbench.tasks import chain, scratch, smoothing
from ssvmbench.tasks.chain_task import ChainTask


def unit(ex, augment):
    """The kernels' loss per wrong token: normalized Hamming if ``augment``, else none."""
    return 1.0 / ex.T if augment else 0.0


class Example:
    """Sequence ``i`` of a task with every labeling, its dense phi and Hamming loss."""

    def __init__(self, task, i):
        self.task, self.i = task, i
        ds = task.dataset
        self.t0 = ds.offsets[i]
        self.T = ds.offsets[i + 1] - self.t0
        self.gold = ds.labels[self.t0:self.t0 + self.T]
        L = task.n_labels
        self.labelings = np.array(list(itertools.product(range(L), repeat=self.T)))
        self.Phi = np.array([phi_dense(task, i, y) for y in self.labelings])
        self.loss = np.mean(self.labelings != self.gold, axis=1)
        self.index = {tuple(y): k for k, y in enumerate(self.labelings)}

    def scores(self, w, ws, augment):
        return self.Phi @ (ws * w) + (self.loss if augment else 0.0)


def make(L, T, n=3, seed=0, features=4):
    task = ChainTask(random_chains(n, L, features, lengths=(T, T), seed=seed))
    return task, [Example(task, i) for i in range(task.n)]


def dense_direction(task, ex, R, E):
    """The direction ``(R, E)`` as a d-vector (through ``chain.add_direction``)."""
    v = np.zeros(task.d)
    chain.add_direction(v, 1.0, task.dims, task.data, ex.t0, ex.T, R, E,
                        np.empty((0, 0)), np.empty(0))
    return v


def l2_reference(z, mu):
    """``h_{mu l2^2}`` of ``z`` by an independent sort-based projection."""
    u = np.sort(z / mu)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, len(u) + 1)
    rho = np.nonzero(u - (css - 1) / j > 0)[0][-1]
    p = np.maximum(z / mu - (css[rho] - 1) / (rho + 1), 0)
    return p @ z - mu / 2 * (p @ p - 1), p


class Oracles:
    """Scratch for one task and the three oracles at a given ``w``."""

    def __init__(self, task, K=8):
        self.task = task
        self.U, self.delta, self.y, self.R, self.E = chain.buffers(task.max_len, task.n_labels)
        self.topk = scratch.topk_buffers(task.max_len, task.n_labels, K)
        self.exp = scratch.exp_buffers(task.max_len, task.n_labels)

    def unary(self, w, ws, ex):
        chain.unary_scores(w, ws, self.task.dims, self.task.data, ex.i, self.U)

    def max(self, w, ws, ex, augment):
        self.unary(w, ws, ex)
        return chain.viterbi(w, ws, self.task.dims, self.U, ex.T, ex.gold, unit(ex, augment),
                             self.delta, self.y)

    def topk_oracle(self, w, ws, ex, augment, K, mu):
        self.unary(w, ws, ex)
        return smoothing.topk_oracle(w, ws, self.task.dims, self.U, ex.T, ex.gold,
                                     unit(ex, augment), K, mu, False, self.topk, self.R,
                                     self.E)

    def exp_oracle(self, w, ws, ex, augment, mu):
        self.unary(w, ws, ex)
        return smoothing.exp_oracle(w, ws, self.task.dims, self.U, ex.T, ex.gold,
                                    unit(ex, augment), mu, self.exp, self.R, self.E)

    def direction(self, ex):
        return dense_direction(self.task, ex, self.R, self.E)


# ------------------------------------------------------------------------ top-K Viterbi


@pytest.mark.parametrize("L,T", [(2, 1), (2, 4), (3, 3), (4, 3), (3, 5)])
def test_topk_viterbi_matches_enumeration(L, T):
    task, examples = make(L, T, seed=L * 10 + T)
    m = L**T
    Kmax = m + 3
    work, Y, z, _ = scratch.topk_buffers(task.max_len, L, Kmax)
    orc = Oracles(task)
    rng = np.random.default_rng(T)
    weights = [(rng.normal(size=task.d), rng.uniform(0.5, 2.0)) for _ in examples]
    weights[0] = (np.zeros(task.d), 1.0)                    # every labeling ties
    weights[1] = (np.round(weights[1][0]), 1.0)             # many ties
    for ex, (w, ws) in zip(examples, weights):
        for augment in (False, True):
            ref = np.sort(ex.scores(w, ws, augment))[::-1]
            best = orc.max(w, ws, ex, augment)
            for K in sorted({1, 2, 4, max(m - 1, 1), m, Kmax}):
                n = smoothing.topk_viterbi(w, ws, task.dims, orc.U, T, ex.gold,
                                           unit(ex, augment), K, False, work, Y, z)
                assert n == min(K, m)
                np.testing.assert_allclose(z[:n], ref[:n], atol=1e-10)
                assert np.all(np.diff(z[:n]) <= 0)
                found = {tuple(y) for y in Y[:n, :T]}
                assert len(found) == n                         # distinct labelings
                for k in range(n):                              # each with its own score
                    assert ex.scores(w, ws, augment)[ex.index[tuple(Y[k, :T])]] == \
                        pytest.approx(z[k], abs=1e-10)
                if K == 1:
                    assert z[0] == pytest.approx(best, abs=1e-12)
                np.testing.assert_array_equal(Y[0, :T], orc.y[:T])   # ties as Viterbi's
                if K >= m:
                    assert found == set(map(tuple, ex.labelings))
    with pytest.raises(ValueError):
        smoothing.topk_viterbi(w, ws, task.dims, orc.U, T, ex.gold, 1.0 / T, Kmax + 1, False,
                               work, Y, z)


def reference_topk(task, ex, w, augment, K, k_best):
    """The top-K Viterbi written out plainly: ``k_best(lists, shift, node, K)`` picks each
    ``(t, b)``'s ``K`` entries ``(value, previous label, rank)`` from the lists of ``t - 1``
    (``shift`` the transitions into ``b``, ``node`` its own score), and the end's from the
    last lists and the end biases. Returns ``[(score, labeling)]``, finite scores only."""
    F, L = task.dims
    U = np.zeros((ex.T, L))
    chain.unary_scores(w, 1.0, task.dims, task.data, ex.i, U)
    trans = w[F * L:F * L + L * L].reshape(L, L)
    first, last = w[F * L + L * L:F * L + L * L + L], w[F * L + L * L + L:]
    loss = unit(ex, augment)
    first_value = [U[0, b] + first[b] + (loss if b != ex.gold[0] else 0.0) for b in range(L)]
    table = [[[(first_value[b], -1, -1)] + [(-np.inf, -1, -1)] * (K - 1) for b in range(L)]]
    for t in range(1, ex.T):
        node = [U[t, b] + (loss if b != ex.gold[t] else 0.0) for b in range(L)]
        table.append([k_best(table[t - 1], trans[:, b], node[b], K) for b in range(L)])
    out = []
    for value, b, k in k_best(table[-1], last, 0.0, K):
        if value == -np.inf:
            break
        y = [b]
        for t in range(ex.T - 1, 0, -1):
            _, b, k = table[t][b][k]
            y.append(b)
        out.append((value, y[::-1]))
    return out


def scan_order_k_best(lists, shift, node, K):
    """:func:`smoothing.topk_viterbi`'s own tie order: the first ``K`` of the candidates
    stably sorted by decreasing value from the scan order (the previous label whose best
    entry plus its transition is largest, the lowest among equal ones, then the other labels
    in increasing order, each with its ranks in order), the node's score added after
    comparing."""
    L = len(lists)
    heads = [lists[a][0][0] + shift[a] for a in range(L)]
    top = int(np.argmax(heads))
    rows = [top] + [a for a in range(L) if a != top]
    scan = [(lists[a][k][0] + shift[a], a, k) for a in rows for k in range(K)]
    return [(v + node, a, k) for v, a, k in sorted(scan, key=lambda entry: -entry[0])[:K]]


# ------------------------------------------------- the Casimir authors' tie order (issue 32)


def casimir_k_best(lists, shift, node, K):
    """The Casimir authors' top-K step (``viterbi_decode_top_k`` of their ``viterbi.pyx``):
    the first ``K`` of all ``(value, previous label, rank)`` in decreasing order, as their
    C++ ``priority_queue`` pops them; values summed as the kernels sum them."""
    return sorted(((lists[a][k][0] + shift[a]) + node, a, k)
                  for a in range(len(lists)) for k in range(K))[::-1][:K]


@pytest.mark.parametrize("L,T", [(2, 1), (2, 4), (3, 3), (4, 3), (3, 5)])
def test_topk_viterbi_with_the_casimir_tie_order_matches_their_algorithm(L, T):
    """``casimir_ties``: the same K best scores as enumeration, and among ties the labelings
    of the authors' priority-queue order (their algorithm, written out plainly above), on
    weights where many or all labelings tie; without it, those of the scan order
    (:func:`scan_order_k_best`, written out plainly too)."""
    task, examples = make(L, T, seed=L * 10 + T + 1)
    m = L**T
    work, Y, z, _ = scratch.topk_buffers(task.max_len, L, m + 3)
    orc = Oracles(task)
    rng = np.random.default_rng(T)
    weights = [np.zeros(task.d), np.round(rng.normal(size=task.d)),
               rng.integers(-1, 2, size=task.d).astype(float), rng.normal(size=task.d)]
    differs = False
    for ex in examples:
        for w in weights:
            for augment in (False, True):
                ref = np.sort(ex.scores(w, 1.0, augment))[::-1]
                for K in sorted({1, 2, 4, max(m - 1, 1), m, m + 3}):
                    orc.unary(w, 1.0, ex)
                    n = smoothing.topk_viterbi(w, 1.0, task.dims, orc.U, T, ex.gold,
                                               unit(ex, augment), K, True, work, Y, z)
                    expected = reference_topk(task, ex, w, augment, K, casimir_k_best)
                    assert n == len(expected) == min(K, m)
                    np.testing.assert_allclose(z[:n], ref[:n], atol=1e-10)
                    assert [list(y[:T]) for y in Y[:n]] == [y for _, y in expected]
                    assert list(z[:n]) == [v for v, _ in expected]
                    assert smoothing.topk_viterbi(w, 1.0, task.dims, orc.U, T, ex.gold,
                                                  unit(ex, augment), K, False, work, Y, z) == n
                    scan = reference_topk(task, ex, w, augment, K, scan_order_k_best)
                    assert [list(y[:T]) for y in Y[:n]] == [y for _, y in scan]
                    assert list(z[:n]) == [v for v, _ in scan]
                    differs |= [y for _, y in scan] != [y for _, y in expected]
    assert differs or m == 2          # the two orders pick different tied labelings


# ------------------------------------------------------------------ simplex, l2^2 value


def test_project_simplex_closed_forms_and_optimality():
    out = np.empty(8)
    cases = [([0.5, 0.5], [0.5, 0.5]), ([2.0, 0.0], [1.0, 0.0]), ([0.0, 2.0], [0.0, 1.0]),
             ([1.0, 1.0, 1.0], [1 / 3] * 3), ([0.3], [1.0]), ([-5.0], [1.0]),
             ([1.0, 0.5, -1.0], [0.75, 0.25, 0.0]), ([0.1, 0.9, 0.4], [0.0, 0.75, 0.25])]
    for v, expected in cases:
        smoothing.project_simplex(np.array(v), len(v), out)
        np.testing.assert_allclose(out[:len(v)], expected, atol=1e-15)
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(1, 9))
        v = rng.normal(scale=rng.choice([0.01, 1.0, 100.0]), size=n)
        if trial % 3 == 0:
            v = -np.sort(-v)                                # the no-sort path
        smoothing.project_simplex(v, n, out)
        p = out[:n]
        assert p.min() >= 0 and p.sum() == pytest.approx(1.0, abs=1e-12)
        # optimality of argmin_{p in simplex} ||p - v||: <v - p, e_j - p> <= 0 for all j
        g = v - p
        assert np.all(g - g @ p <= 1e-9 * max(1.0, np.abs(v).max()))
        # the same as the independent reference
        np.testing.assert_allclose(p, l2_reference(v, 1.0)[1], atol=1e-12)


def test_l2_smoothed_max_bracket_and_maximality():
    """``max z <= h_{mu,K}(z) <= max z + mu/2 (1 - 1/K)`` (Section 2 with
    ``l2^2(u) = (||u||^2 - 1)/2``) and ``h`` is the max over the simplex."""
    rng = np.random.default_rng(1)
    p = np.empty(10)
    for _ in range(200):
        n = int(rng.integers(1, 11))
        z = -np.sort(-rng.normal(scale=rng.choice([0.1, 1.0, 10.0]), size=n))
        if rng.random() < 0.5:
            z = rng.permutation(z)                          # the sort path
        mu = float(rng.choice([1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3]))
        h = smoothing.l2_smoothed_max(z, n, mu, p)
        ref_h, ref_p = l2_reference(z, mu)
        assert h == pytest.approx(ref_h, rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(p[:n], ref_p, atol=1e-9)
        assert p[:n].sum() == pytest.approx(1.0) and p[:n].min() >= 0
        top = z.max()
        assert top - 1e-12 * (1 + abs(top)) <= h
        assert h <= top + mu / 2 * (1 - 1 / n) + 1e-12 * (1 + abs(top))
        for u in rng.dirichlet(np.ones(n), size=20):       # h = max_u <z,u> - mu l2^2(u)
            assert u @ z - mu / 2 * (u @ u - 1) <= h + 1e-9 * (1 + abs(top))


# ------------------------------------------------------------------------- the oracles


@pytest.mark.parametrize("L,T", [(2, 3), (3, 3), (3, 4)])
def test_topk_oracle_against_enumeration(L, T):
    task, examples = make(L, T, seed=T + 7 * L)
    m = L**T
    orc = Oracles(task, K=m)
    rng = np.random.default_rng(L)
    for ex in examples:
        w, ws = rng.normal(size=task.d), rng.uniform(0.5, 2.0)
        for augment in (False, True):
            s = ex.scores(w, ws, augment)
            order = np.argsort(-s, kind="stable")
            for K, mu in [(1, 0.5), (3, 0.3), (5, 2.0), (m, 1.0), (m, 50.0)]:
                h = orc.topk_oracle(w, ws, ex, augment, K, mu)
                _, Y, z, p = orc.topk
                ref_h, ref_p = l2_reference(s[order[:K]], mu)
                assert h == pytest.approx(ref_h, abs=1e-10)
                np.testing.assert_allclose(p[:K], ref_p, atol=1e-10)
                expected = sum(p[k] * ex.Phi[ex.index[tuple(Y[k, :T])]] for k in range(K))
                np.testing.assert_allclose(orc.direction(ex), expected, atol=1e-12)
                keys = orc.E[0][:orc.E[2][0]]
                assert np.all(np.diff(keys) > 0)            # sorted, unique
                assert max(s) <= h + 1e-12 <= max(s) + mu / 2 * (1 - 1 / K) + 2e-12
                full_h, _ = l2_reference(s, mu)             # exact l2^2 smoothing
                assert h <= full_h + 1e-12
                if K == m or np.count_nonzero(ref_p) < K:
                    assert h == pytest.approx(full_h, abs=1e-10)


@pytest.mark.parametrize("L,T", [(2, 1), (2, 4), (3, 3), (4, 3)])
def test_exp_oracle_against_enumeration(L, T):
    task, examples = make(L, T, seed=3 * L + T)
    orc = Oracles(task)
    rng = np.random.default_rng(T)
    F = task.dims[0]
    for ex in examples:
        w, ws = rng.normal(size=task.d), rng.uniform(0.5, 2.0)
        for augment in (False, True):
            s = ex.scores(w, ws, augment)
            for mu in (1e-2, 0.3, 1.0, 10.0):
                h = orc.exp_oracle(w, ws, ex, augment, mu)
                assert h == pytest.approx(mu * logsumexp(s / mu), abs=1e-10)
                assert s.max() <= h + 1e-12 <= s.max() + mu * np.log(L**T) + 1e-12
                prob = np.exp(s / mu - logsumexp(s / mu))
                np.testing.assert_allclose(orc.direction(ex), prob @ ex.Phi, atol=1e-10)
                marg = np.array([[prob[ex.labelings[:, t] == l].sum() for l in range(L)]
                                 for t in range(T)])
                np.testing.assert_allclose(orc.R[:T], marg, atol=1e-10)
                assert orc.E[2][0] == L * L
                np.testing.assert_array_equal(orc.E[0][:L * L], np.arange(L * L))
                np.testing.assert_allclose(orc.E[1][:L * L], (prob @ ex.Phi)[F * L:F * L + L * L],
                                           atol=1e-10)


def test_gradients_by_finite_differences():
    """Each oracle's direction is the gradient of its value: ``d h / d w = ws * (R, E)``,
    by central differences over every coordinate (top-K away from ties of the K-th)."""
    task, examples = make(3, 4, n=2, seed=11, features=3)
    orc = Oracles(task, K=6)
    rng = np.random.default_rng(5)
    eps = 1e-5
    for ex in examples:
        w, ws = rng.normal(size=task.d), 1.3
        for augment in (False, True):
            s = np.sort(ex.scores(w, ws, augment))[::-1]
            for name, K, mu in [("topk", 4, 0.5), ("topk", 2, 5.0), ("exp", 0, 0.2),
                                ("exp", 0, 3.0)]:
                if name == "topk":
                    assert s[K - 1] - s[K] > 1e-3          # the K-set is locally constant
                    call = lambda v: orc.topk_oracle(v, ws, ex, augment, K, mu)  # noqa: E731
                else:
                    call = lambda v: orc.exp_oracle(v, ws, ex, augment, mu)      # noqa: E731
                call(w)
                grad = ws * orc.direction(ex)
                fd = np.empty(task.d)
                for j in range(task.d):
                    e = np.zeros(task.d)
                    e[j] = eps
                    fd[j] = (call(w + e) - call(w - e)) / (2 * eps)
                np.testing.assert_allclose(fd, grad, atol=1e-6)


def test_small_mu_is_the_max_oracle():
    """As mu -> 0 both values tend to the max and both directions to phi(y*)."""
    task, examples = make(3, 4, n=4, seed=2)
    orc = Oracles(task)
    rng = np.random.default_rng(2)
    mu = 1e-6
    checked = 0
    for ex in examples:
        w = rng.normal(size=task.d)
        for augment in (False, True):
            s = np.sort(ex.scores(w, 1.0, augment))[::-1]
            best = orc.max(w, 1.0, ex, augment)
            phi_star = ex.Phi[ex.index[tuple(orc.y[:ex.T])]]
            h_top = orc.topk_oracle(w, 1.0, ex, augment, 5, mu)
            d_top = orc.direction(ex)
            h_exp = orc.exp_oracle(w, 1.0, ex, augment, mu)
            d_exp = orc.direction(ex)
            assert best - 1e-12 <= h_top <= best + mu / 2
            assert best - 1e-12 <= h_exp <= best + mu * ex.T * np.log(3) + 1e-12
            if s[0] - s[1] > 1e-4:                          # a unique maximizer
                checked += 1
                np.testing.assert_allclose(d_top, phi_star, atol=1e-12)
                np.testing.assert_allclose(d_exp, phi_star, atol=1e-12)
    assert checked >= 4


def test_no_overflow_with_small_mu_and_large_scores():
    """mu = 1e-4 with scores in the thousands: finite values, normalized weights, the
    brackets against the max oracle; on a tiny chain also the enumerated value."""
    task, examples = make(3, 4, n=2, seed=4)
    orc = Oracles(task)
    rng = np.random.default_rng(4)
    mu = 1e-4
    for ex in examples:
        w = 1e3 * rng.normal(size=task.d)
        s = ex.scores(w, 1.0, True)
        h = orc.exp_oracle(w, 1.0, ex, True, mu)
        assert h == pytest.approx(mu * logsumexp(s / mu), rel=1e-12)
        assert np.all(np.isfinite(orc.R[:ex.T]))
    long_task = ChainTask(random_chains(3, 5, 6, lengths=(40, 60), seed=9))
    orc = Oracles(long_task)
    L = long_task.n_labels
    for i in range(long_task.n):
        t0 = long_task.dataset.offsets[i]
        T = long_task.dataset.offsets[i + 1] - t0
        ex = type("Ex", (), {"i": i, "t0": t0, "T": T,
                             "gold": long_task.dataset.labels[t0:t0 + T]})()
        w = 1e3 * rng.normal(size=long_task.d)
        best = orc.max(w, 2.0, ex, True)
        for name in ("exp", "topk"):
            if name == "exp":
                h = orc.exp_oracle(w, 2.0, ex, True, mu)
                assert best <= h <= best + mu * T * np.log(L)
                vals = orc.E[1][:L * L]
                assert vals.sum() == pytest.approx(T - 1)
            else:
                h = orc.topk_oracle(w, 2.0, ex, True, 5, mu)
                assert best - 1e-9 <= h <= best + mu / 2
                p = orc.topk[3]
                assert p[:5].sum() == pytest.approx(1.0) and np.all(np.isfinite(p[:5]))
                vals = orc.E[1][:orc.E[2][0]]
            assert np.isfinite(h)
            R = orc.R[:T]
            assert np.all(np.isfinite(R)) and np.all(R >= 0) and np.all(np.isfinite(vals))
            np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-9)
