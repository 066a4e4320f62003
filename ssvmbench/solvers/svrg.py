"""SVRG on the smoothed objective, and SC-SVRG: Catalyst with smoothing around it
(Pillutla et al., NeurIPS 2018, Algorithm 1, Table 2, Section 4 "Methods").

An epoch of SVRG (Johnson & Zhang 2013) on
``G(w) = 1/n sum_i f_i(w) + lam/2 ||w||^2 + kappa/2 ||w - z||^2`` (eq. 4; ``kappa = 0`` for
plain SVRG), where ``f_i`` is the hinge smoothed by the top-K or exp oracle: a full gradient
``g~ = 1/n sum_i grad f_i(w~)`` at the anchor ``w~`` (n oracle calls), then ``n`` steps
``w <- w - lr (grad f_i(w) - grad f_i(w~) + g~ + lam w + kappa (w - z))`` on uniformly sampled
examples (two oracle calls each: at ``w`` and at ``w~``, as counted in Casimir Section 4).
The dense part of a step is kept lazily: ``w = a v + b c`` with ``c = g~ - kappa z`` outside
the task's ``dense_entries`` (the entries every example touches: the chain's transitions and
biases, the hashed chain's tag-pair buckets), where ``w = a v`` and ``c`` is added densely, so a
step touches only the example's features and those ``L^2 + 2L`` entries. The token scores of
``c`` and of the anchor are tabulated once per epoch, so a step gathers from one d-vector
(``v``) only; so is each example's oracle answer at the anchor (its direction ``grad
f_i(w~)``, from the full gradient's pass), which a step reads instead of calling the oracle
at ``w~`` again: the same numbers, and still counted as the call the method makes.

SC-SVRG (``solver=sc_svrg``) runs one such epoch per outer iteration ``k`` of Algorithm 1
(``T_inner = n``, the paper's one-pass budget), warm-started at ``z_{k-1}``, then
``z_k = w_k + beta_k (w_k - w_{k-1})`` with ``alpha_k, beta_k`` from Algorithm 1 step 5 and
``alpha_0 = sqrt(lam / (lam + kappa_1))``. Schemes (Table 2): ``const`` (scheme 1: fixed
``mu``; ``kappa = a D / (eps n) - lam`` with ``eps = mu D`` and the smoothness ``a / mu``
taken as ``1 / lr``, i.e. ``kappa = 1 / (lr n) - lam``, unless ``solver.kappa`` is given) and
``adapt`` (scheme 2: ``mu_k = mu c^k`` with ``c = solver.decay``, ``kappa_k = lam``).

The Casimir authors' code (krishnap25/casimir, ``casimir/optim/optimization_algorithms.py``;
docs/casimir_authors_code.md) differs in four settings, each an option here: an epoch
returns the uniform average of its inner iterates (``output=average``); SC-SVRG-const takes
``solver.L`` with ``kappa = L/(n+1) - lam`` and ``lr = 1/(L + lam + kappa)``; SC-SVRG-adapt
decays ``mu_t = mu0 sqrt(1 - sqrt(kappa/(kappa + lam))/2)^t`` from ``t = 0``
(``decay_rule=expo``); and the warm start is the prox center, the extrapolation
``w_{k-1} + kappa/(lam + kappa) (z_{k-1} - z_{k-2})`` or the previous iterate
(``warm_start``).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.common.inner import inner
from ssvmbench.solvers.base import Solver
from ssvmbench.tasks.base import CORE_KERNELS
from ssvmbench.tasks.kernels import (add_direction, example_oracle, scores, scratch,
                                     subtract_direction)


class LazyIterate(NamedTuple):
    """SVRG's iterate ``w = a v + b c`` (``ab = [a, b]``; ``c`` is zero at the entries
    ``dense``, where ``c_dense`` is added densely), its ``anchor``, the score rows ``Uc`` and
    ``Ua`` of ``c`` and of the anchor (:func:`token_scores`), and the lazy sum of the epoch's
    iterates ``(sums, D, P)`` (empty ``D``: not kept)."""

    v: np.ndarray
    ab: np.ndarray
    c: np.ndarray
    anchor: np.ndarray
    Uc: np.ndarray
    Ua: np.ndarray
    sums: np.ndarray
    D: np.ndarray
    P: np.ndarray
    dense: np.ndarray
    c_dense: np.ndarray


@nb.njit(cache=True)
def token_scores(w, dims, data, out):
    """``out[t] = <w_l, x_t>`` for every token of the split (one sequential table per epoch,
    so that steps read it instead of gathering from another d-vector)."""
    offsets = data[0]
    for i in range(len(offsets) - 1):
        scores(w, 1.0, dims, data, i, out[offsets[i]:offsets[i + 1]])


class AnchorDirections(NamedTuple):
    """Every example's direction ``(R_i, E_i)`` of ``grad f_i`` at the anchor, in the
    chain's layout (:func:`ssvmbench.tasks.chain.scratch`): the token rows of ``R_i`` at the
    example's rows of ``R``, ``E_i``'s sorted keys and values at ``ptr[i]:ptr[i + 1]`` of
    ``keys`` and ``vals`` (grown as needed), their number in ``count[i]``."""

    R: np.ndarray
    keys: np.ndarray
    vals: np.ndarray
    ptr: np.ndarray
    count: np.ndarray


@nb.njit(cache=True)
def anchor_pass(w, dims, data, normalized, oracle, bufs, max_len, g, Ua, kept):
    """The start of an epoch at the anchor ``w``: ``g = 1/n sum_i grad f_i(w)`` as
    :func:`~ssvmbench.tasks.kernels.mean_hinge_and_gradient` sums it, the token scores
    ``Ua`` of ``w`` (as :func:`token_scores`) and, unless ``kept`` is None, each example's
    direction in ``kept`` (:class:`AnchorDirections`). Returns ``(keys, vals)`` of ``kept``
    (new arrays if they grew)."""
    kind, K, mu = oracle
    offsets = data[0]
    n = len(offsets) - 1
    _, _, y, R, E, _ = scratch(dims, data, max_len)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    keys, vals = np.empty(0, dtype=np.int64), np.empty(0)
    if kept is not None:
        keys, vals = kept.keys, kept.vals
    g[:] = 0.0
    used = 0
    for i in range(n):
        t0 = offsets[i]
        T = scores(w, 1.0, dims, data, i, Ua[t0:offsets[i + 1]])
        example_oracle(kind, K, mu, w, 1.0, dims, data, normalized, i, Ua[t0:t0 + T], T, bufs,
                       y, R, E)
        add_direction(g, 1.0 / n, dims, data, t0, T, R, E, no_U, no_C)
        if kept is not None:
            m = E[2][0]
            if used + m > len(keys):
                keys, vals = _grown(keys, used, used + m), _grown(vals, used, used + m)
            for t in range(T):
                for l in range(R.shape[1]):
                    kept.R[t0 + t, l] = R[t, l]
            for j in range(m):
                keys[used + j] = E[0][j]
                vals[used + j] = E[1][j]
            kept.ptr[i] = used
            kept.count[i] = m
            used += m
    return keys, vals


@inner
def _grown(a, used, need):
    """``a``'s first ``used`` entries in an array of at least ``need`` (twice as long)."""
    b = np.empty(max(need, 2 * len(a)), dtype=a.dtype)
    for j in range(used):
        b[j] = a[j]
    return b


@nb.njit(cache=True)
def svrg_steps(problem, it, order, kappa, lr, oracle, bufs, max_len, kept):
    """SVRG steps for the examples ``order`` on the :class:`LazyIterate` ``it`` (``problem``
    a :class:`~ssvmbench.solvers.base.Problem`, ``oracle`` ``(kind, K, mu)``).

    With ``len(D) > 0`` the sum of the iterates ``w_k = a_k v_k + b_k c`` is kept lazily too
    (the Casimir authors' epoch output is their uniform average): ``sum_k a_k v_k = P + S v -
    D`` with ``S = sums[0] = sum_k a_k`` and ``D`` gathering ``S_{k-1}`` times each change
    of ``v`` (so a step touches only what it changes), and ``sums[1] = sum_k b_k``.

    ``grad f_i(w~)`` is read from ``kept`` (:class:`AnchorDirections`), or asked of the
    oracle again if ``kept`` is None (a task whose directions are not the chain's)."""
    dims, data, normalized, lam = problem
    kind, K, mu = oracle
    v, c, anchor, Uc, Ua = it.v, it.c, it.anchor, it.Uc, it.Ua
    sums, D, P, dense, c_dense = it.sums, it.D, it.P, it.dense, it.c_dense
    offsets = data[0]
    U, _, y, R, E, _ = scratch(dims, data, max_len)
    _, _, _, R2, E2, _ = scratch(dims, data, max_len)
    rho = 1.0 - lr * (lam + kappa)
    a, b = it.ab[0], it.ab[1]
    averaging = len(D) > 0
    # D as add_direction's lazy average of v, weighted by S_{k-1} (no weight: none kept)
    D_rows, weight = D.reshape((1, len(D))), np.empty(1 if averaging else 0)
    for i in order:
        t0 = offsets[i]
        T = scores(v, a, dims, data, i, U)
        for t in range(T):            # (loops: a slice assignment compiles its error message)
            for l in range(U.shape[1]):
                U[t, l] += b * Uc[t0 + t, l]
        example_oracle(kind, K, mu, v, a, dims, data, normalized, i, U, T, bufs, y, R, E)
        if kept is None:
            example_oracle(kind, K, mu, anchor, 1.0, dims, data, normalized, i, Ua[t0:t0 + T],
                           T, bufs, y, R2, E2)
            subtract_direction(data, T, R, E, R2, E2)
        else:                         # the same answer, counted as the call it stands for
            data.calls[0] += 1
            p = kept.ptr[i]
            subtract_direction(data, T, R, E, kept.R[t0:t0 + T],
                               (kept.keys[p:p + kept.count[i]], kept.vals[p:p + kept.count[i]],
                                kept.count[i:i + 1], E2[3], E2[4]))
        a *= rho
        b = rho * b - lr
        if averaging:
            weight[0] = sums[0]
        add_direction(v, -lr / a, dims, data, t0, T, R, E, D_rows, weight)
        for k in range(len(dense)):
            v[dense[k]] -= lr / a * c_dense[k]
        if averaging:
            for k in range(len(dense)):
                D[dense[k]] -= sums[0] * lr / a * c_dense[k]
            sums[0] += a
            sums[1] += b
        if a < 1e-6:                    # fold the scalars back into v
            if averaging:
                for q in range(len(v)):
                    P[q] += sums[0] * v[q] - D[q]
                    D[q] = 0.0
                sums[0] = 0.0
            for q in range(len(v)):
                v[q] = a * v[q] + b * c[q]
            a, b = 1.0, 0.0
    it.ab[0], it.ab[1] = a, b


def keeps_anchor_directions(task):
    """Empty :class:`AnchorDirections` for ``task`` if its directions have the chain's
    layout (:attr:`Task.chain_directions <ssvmbench.tasks.base.Task>`, every built-in
    task), else None: a plugin's task asks the oracle at the anchor again in every step."""
    if not task.chain_directions:
        return None
    return AnchorDirections(np.empty((task.n_rows, task.dims[1])), np.empty(0, np.int64),
                            np.empty(0), np.zeros(task.n, np.int64), np.zeros(task.n, np.int64))


class SVRG(Solver):
    """SVRG with constant smoothing and a fixed learning rate ``solver.lr``."""

    name = "svrg"
    has_dual = False
    oracles = ("topk", "exp", "max")
    needs = CORE_KERNELS + ("subtract_direction",)
    default_iterates = ("raw",)
    averages_iterates = False   # logs its raw iterate only
    # output: what an epoch returns and the next one starts from: its last iterate, or the
    # uniform average of its n inner iterates (the Casimir authors' SVRGOptimizer)
    options = {"sampling": ("uniform", "permutation"), "output": ("last", "average")}
    numbers = {"lr": 0.001}                      # tuned on CoNLL-2003 (issue 4)

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        self.lr = self.opts["lr"]
        d = task.d
        self.v, self.c, self.anchor = (np.zeros(d) for _ in range(3))
        self.c_dense = np.zeros(len(task.dense_entries))
        self.center = np.zeros(d)             # z of eq. (4); unused while kappa = 0
        self.ab = np.array([1.0, 0.0])
        self.Uc, self.Ua = (np.empty((task.n_rows, task.n_labels)) for _ in range(2))
        self.kept = keeps_anchor_directions(task)
        self.kappa, self.mu = 0.0, self.oracle.mu
        self._left = 0                        # steps left in the current epoch
        self._bufs = task.oracle_scratch(self.oracle)
        self.averaging = self.opts["output"] == "average"
        self.sums = np.zeros(2)               # sum of a_k and of b_k over the epoch's steps
        # D, P: the lazy sum of the inner iterates; output: the last epoch's average (w_0 = 0
        # before the first); empty unless output=average
        self.D, self.P, self.output = (np.zeros(d if self.averaging else 0) for _ in range(3))
        self._check_rate()

    def _check_rate(self):
        """A step shrinks the dense part by ``1 - lr (lam + kappa)``, which must be in (0, 1)."""
        if not 0 < self.lr * (self.lam + self.kappa) < 1:
            raise UserError(f"solver.lr={self.lr:g} must satisfy 0 < lr (lambda + kappa) < 1 "
                            f"(lambda = {self.lam:g}, kappa = {self.kappa:g})")

    def current(self):
        """The raw iterate: the live one, or the last epoch's output with ``output=average``
        (the authors log and restart from it)."""
        if self.averaging:
            return self.output.copy(), np.nan
        return self._live(), np.nan

    def _live(self):
        a, b = self.ab
        return a * self.v + b * self.c

    def _finish_average(self):
        """``output`` = the uniform average of the epoch's n inner iterates."""
        total = self.P + self.sums[0] * self.v - self.D + self.sums[1] * self.c
        self.output[:] = total / self.task.n

    def state(self):
        return 1.0, self.current()[0], np.nan

    # what load_state derives again from the rest: the score rows of c and of the anchor and
    # the anchor's kept directions, 42 of a state's 47 MB on Casimir's CoNLL-2003 NER (a save
    # at a checkpoint took 4 % of a run)
    DERIVED = ("Uc", "Ua", "kept")

    def state_dict(self):
        """As the base class, without :attr:`DERIVED`."""
        state = super().state_dict()
        for key in self.DERIVED:
            del state[key]
        return state

    def load_state(self, state):
        """As the base class; within an epoch, :attr:`DERIVED` computed again as the epoch's
        start computed them (the same numbers; the anchor pass's oracle calls are not the
        method's, so the task's count is left as it was)."""
        super().load_state(state)
        if self._left == 0:                      # the next advance starts an epoch
            return
        t = self.task
        token_scores(self.c, t.dims, t.data, self.Uc)
        calls = t.data.calls[0]
        self._anchor_pass(np.empty(t.d))
        t.data.calls[0] = calls

    def _anchor_pass(self, g):
        """:func:`anchor_pass` at ``anchor``: the full gradient into ``g``, ``Ua`` and the
        kept directions."""
        t, o = self.task, self.oracle
        keys, vals = anchor_pass(self.anchor, t.dims, t.data, t.normalized,
                                 (o.kind, o.K, self.mu), self._bufs, t.max_len, g, self.Ua,
                                 self.kept)
        if self.kept is not None:
            self.kept = self.kept._replace(keys=keys, vals=vals)

    def start_epoch(self, start):
        """Anchor at ``start``: the full gradient (n oracle calls) and ``c``."""
        t = self.task
        self.anchor[:] = start
        self._anchor_pass(self.c)
        self.c -= self.kappa * self.center
        self.c_dense = self.c[t.dense_entries]       # added densely; c keeps the lazy rest
        self.c[t.dense_entries] = 0.0
        token_scores(self.c, t.dims, t.data, self.Uc)
        self.v[:] = start
        self.ab[:] = (1.0, 0.0)
        self.sums[:] = 0.0
        self.D[:] = 0.0
        self.P[:] = 0.0
        self._left = t.n
        return t.n

    def end_epoch(self):
        """Called when an epoch's ``n`` steps are done (SC-SVRG's outer step)."""

    def advance(self, budget):
        if self._left == 0:
            return self.start_epoch(self.current()[0])
        steps = max(1, min(self._left, budget // 2))
        order = self.next_indices(steps)
        t = self.task
        it = LazyIterate(self.v, self.ab, self.c, self.anchor, self.Uc, self.Ua, self.sums,
                         self.D, self.P, t.dense_entries, self.c_dense)
        svrg_steps(self.problem, it, order, self.kappa, self.lr,
                   (self.oracle.kind, self.oracle.K, self.mu), self._bufs, t.max_len, self.kept)
        self._left -= len(order)
        if self._left == 0:
            if self.averaging:
                self._finish_average()
            self.end_epoch()
        return 2 * len(order)


class SCSVRG(SVRG):
    """Catalyst with smoothing (Algorithm 1) around one SVRG epoch per outer iteration."""

    name = "sc_svrg"
    oracles = ("topk", "exp")
    # warm_start (the authors' warm_start 1, 2, 3): z_{k-1}; w_{k-1} + kappa / (lam + kappa)
    # (z_{k-1} - z_{k-2}); w_{k-1}. decay_rule (adapt): fixed: mu_k = mu decay^k from k = 1;
    # expo: the authors' mu_t = mu (1 - sqrt(kappa / (kappa + lam)) / 2)^(t/2) from t = 0
    options = {"scheme": ("adapt", "const"), "sampling": ("uniform", "permutation"),
               "output": ("last", "average"),
               "warm_start": ("prox_center", "extrapolation", "prev_iterate"),
               "decay_rule": ("fixed", "expo")}
    numbers = {"lr": 0.001, "decay": 0.5, "kappa": None, "L": None}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        L = self.opts["L"]
        if self.opts["scheme"] == "adapt":
            if L is not None:
                raise UserError("solver.L sets SC-SVRG-const's kappa and step; with "
                                "solver.scheme=adapt give solver.lr")
            self.kappa = self.lam
            self.decay = (np.sqrt(1.0 - 0.5 * np.sqrt(self.kappa / (self.kappa + self.lam)))
                          if self.opts["decay_rule"] == "expo" else self.opts["decay"])
            if not 0 < self.decay <= 1:
                raise UserError(f"solver.decay={self.decay} must be in (0, 1]")
        elif L is not None:
            # the authors' csvrg with --L: kappa = L/(n+1) - lam (if positive), lr = 1/(L +
            # lam + kappa) (casimir/optim/optimization_algorithms.py, CasimirSVRGOptimizer)
            if not L > 0:
                raise UserError(f"solver.L={L} must be > 0")
            ratio = L / (task.n + 1)
            self.kappa = ratio - self.lam if ratio > self.lam else ratio
            self.lr = 1.0 / (L + self.lam + self.kappa)
        else:
            given = self.opts["kappa"]
            self.kappa = given if given is not None else max(
                1.0 / (self.lr * task.n) - self.lam, 0.0)
            if not self.kappa >= 0:
                raise UserError(f"solver.kappa={self.kappa} must be >= 0")
        self._check_rate()
        self.outer = 1                                     # k of Algorithm 1
        self.alpha = np.sqrt(self.lam / (self.lam + self.kappa))
        self.previous = np.zeros(task.d)                   # w_{k-1}, w_0 = 0
        self.center_before = np.zeros(task.d)              # z_{k-2}
        self._smoothing()

    def _smoothing(self):
        if self.opts["scheme"] == "adapt":
            t = self.outer - 1 if self.opts["decay_rule"] == "expo" else self.outer
            self.mu = self.oracle.mu * self.decay ** t

    def warm_start(self):
        """Where outer iteration ``k`` starts its SVRG epoch."""
        rule = self.opts["warm_start"]
        if rule == "prox_center":
            return self.center
        if rule == "prev_iterate":
            return self.previous
        step = self.kappa / (self.lam + self.kappa)
        return self.previous + step * (self.center - self.center_before)

    def advance(self, budget):
        if self._left == 0:
            return self.start_epoch(self.warm_start())
        return super().advance(budget)

    def end_epoch(self):
        """Algorithm 1 steps 5-6: ``alpha_k``, ``beta_k`` and ``z_k``."""
        w = self.current()[0]
        q = self.lam + self.kappa                          # kappa_k = kappa_{k+1} here
        prev = self.alpha ** 2 * q
        # alpha_k^2 q = (1 - alpha_k) alpha_{k-1}^2 q + alpha_k lam
        alpha = (-(prev - self.lam) + np.sqrt((prev - self.lam) ** 2 + 4 * q * prev)) / (2 * q)
        beta = self.alpha * (1 - self.alpha) * q / (prev + alpha * q)
        self.center_before = self.center
        self.center = w + beta * (w - self.previous)
        self.previous = w
        self.alpha = alpha
        self.outer += 1
        self._smoothing()
