"""The test kit for task plugins: a task's kernels against brute-force enumeration on its tiny
instance, the checks ssvmbench runs on its own tasks (``tests/tasks/test_chain.py``,
``test_matching.py``, ``test_boxes.py``, ``test_multiclass.py``) for any registered task.

``check_task(MyTask)`` (a plugin's tests) or ``ssvmbench check-solver --task NAME`` runs them
on ``MyTask.tiny()`` at random weights, through the kernel API
(:mod:`ssvmbench.tasks.kernels`, as the solvers call it). The brute force enumerates
:meth:`Task.labelings <ssvmbench.tasks.base.Task.labelings>` of every example that has at most
:data:`LIMIT` of them and evaluates each labeling ``y`` with the stored-labeling kernels:
``z_y = labeling_hinge(w, y) = L(y_i, y) + <w, psi(y)>`` and ``psi(y) = phi(x_i, y) - phi(x_i,
y_i)`` from ``add_labeling`` (so a task declares them to be checked). It checks:

* the stored-labeling kernels agree: ``labeling_hinge`` is ``L(y_i, y)`` at ``w = 0`` plus
  ``<w, psi(y)>``, and the gold labeling has loss 0 and ``psi = 0``;
* the max oracle (BCFW eq. 2): ``example_oracle`` returns ``max_y z_y``, writes a labeling
  attaining it and the direction ``psi(y*)``; ``decode`` writes a maximizer and returns its
  loss;
* the smoothed oracles the task declares (Casimir Definition 1): top-K (K = 3, mu = 0.5) the
  l2^2-smoothed max of the K best ``z`` with direction ``sum_k p_k psi(y_k)``; exp (mu =
  0.5) ``mu log sum_y exp(z_y / mu)`` with direction ``E_softmax[psi]``;
* ``ws``: ``scores`` and every oracle at ``(w / ws, ws)`` equal those at ``(w, 1)`` (a task
  reading its own pairwise weights from ``w`` must scale them by ``ws``);
* ``evaluate``: its mean hinge is the mean brute-force maximum (when every example
  enumerates);
* the direction algebra (the direction kernels it declares): ``add_direction`` is ``w += coef
  v`` and records ``C[j] coef v`` in the lazy averages, ``direction_sqnorm`` is ``||v||^2``
  (its dense scratch left all-zero), ``direction_dot`` is ``<w, v>``, ``subtract_direction``
  gives ``v1 - v2``;
* the factored dual (:data:`~ssvmbench.tasks.base.DUAL_KERNELS`), against an explicit
  ``alpha``: ``init_marginals`` is ``alpha_i = e_{y_i}`` (``w = A alpha = 0``),
  ``dual_residual`` is ``phi(y) - sum_y' alpha_i(y') phi(y')``, ``move_marginals`` the step
  ``alpha_i <- (1 - gamma) alpha_i + gamma e_y`` recording ``C[j] (alpha - alpha_0)`` in the
  lazy averages (flat layout of ``dual_views``), ``weights_from_average`` ``A alpha`` (BCFW
  eq. 4) and ``A alpha_bar`` of an averaged state ``alpha_bar = (c alpha - U) / s``.
"""

import numpy as np

from ssvmbench.tasks import kernels
from ssvmbench.tasks.base import DUAL_KERNELS, LABELING_KERNELS
from ssvmbench.tasks.oracle import Oracle

LIMIT = 5000            # labelings per example the brute force enumerates
MIN_EXAMPLES = 2        # examples of the tiny instance it needs
SEED = 0
WS = 2.5
LAM = 0.5
SMOOTHED = {"topk": Oracle("topk", 3, 0.5), "exp": Oracle("exp", 1, 0.5)}
NO_U, NO_C = np.empty((0, 0)), np.empty(0)


def close(a, b):
    return np.allclose(a, b, rtol=1e-7, atol=1e-7)


class Brute:
    """Example ``i`` of ``task`` enumerated: its labelings ``Y``, their losses and ``psi``
    rows ``G`` (from ``labeling_hinge`` at ``w = 0`` and ``add_labeling``)."""

    def __init__(self, task, i, Y):
        self.task, self.i, self.Y = task, i, Y
        self.t0 = int(task.data[0][i])
        self.T = int(task.data[0][i + 1]) - self.t0
        self.losses = np.array([self.hinge(np.zeros(task.d), y) for y in Y])
        self.G = np.array([self.psi(y) for y in Y])

    def buffer(self, y):
        out = np.zeros(max(self.task.max_len, len(y)), dtype=np.int32)
        out[:len(y)] = y
        return out

    def hinge(self, w, y):
        t = self.task
        return kernels.labeling_hinge(w, t.dims, t.data, t.normalized, self.i, self.T,
                                      self.buffer(y))

    def psi(self, y):
        g = np.zeros(self.task.d)
        t = self.task
        kernels.add_labeling(g, 1.0, t.dims, t.data, self.i, self.T, self.buffer(y))
        return g

    def z(self, w):
        """The loss-augmented scores ``z_y`` of every labeling at ``w``."""
        return self.losses + self.G @ w


def dense(task, t0, T, R, E):
    """The direction ``(R, E)`` as a d-vector (``add_direction`` into zeros)."""
    v = np.zeros(task.d)
    kernels.add_direction(v, 1.0, task.dims, task.data, t0, T, R, E, NO_U, NO_C)
    return v


def oracle_call(task, oracle, w, ws, i):
    """``(value, dense direction, scratch, T)`` of ``example_oracle`` at ``ws * w``."""
    sc = kernels.scratch(task.dims, task.data, task.max_len)
    U, _, y, R, E, _ = sc
    T = kernels.scores(w, ws, task.dims, task.data, i, U)
    value = kernels.example_oracle(oracle.kind, oracle.K, oracle.mu, w, ws, task.dims,
                                   task.data, task.normalized, i, U, T,
                                   task.oracle_scratch(oracle), y, R, E)
    return value, dense(task, int(task.data[0][i]), T, R, E), sc, T


def reference_topk(z, K, mu):
    """``(value, weights)`` of the l2^2-smoothed max of the K best ``z`` (by bisection on the
    simplex threshold, not a kernel's projection)."""
    order = np.argsort(-z, kind="stable")[:K]
    top = z[order]
    lo, hi = top.min() / mu - 1, top.max() / mu
    for _ in range(200):
        tau = (lo + hi) / 2
        lo, hi = (tau, hi) if np.maximum(top / mu - tau, 0).sum() > 1 else (lo, tau)
    p = np.maximum(top / mu - tau, 0)
    weights = np.zeros_like(z)
    weights[order] = p
    return p @ top - mu / 2 * (p @ p - 1), weights


def reference(oracle, z):
    """``(value, weights over the labelings)`` of an oracle on the scores ``z``."""
    if oracle.name == "topk":
        return reference_topk(z, oracle.K, oracle.mu)
    s = z / oracle.mu
    p = np.exp(s - s.max())
    return oracle.mu * (s.max() + np.log(p.sum())), p / p.sum()


def weights_at(rng, task):
    return 3.0 * rng.normal(size=task.d)


# ------------------------------------------------------------------------------- checks


def check_labelings(task, brutes, rng):
    for b in brutes:
        gold = [k for k in range(len(b.Y)) if b.losses[k] == 0 and not b.G[k].any()]
        if not gold:
            return f"example {b.i}: no labeling with loss 0 and psi = 0 (the gold one)"
        w = weights_at(rng, task)
        got = np.array([b.hinge(w, y) for y in b.Y])
        if not close(got, b.z(w)):
            return (f"example {b.i}: labeling_hinge(w, y) - labeling_hinge(0, y) differs from "
                    "<w, phi(y) - phi(y_i)> of add_labeling")
    return None


def check_max(task, brutes, rng):
    for b in brutes:
        w = weights_at(rng, task)
        z = b.z(w)
        value, v, sc, _ = oracle_call(task, Oracle(), w, 1.0, b.i)
        if not close(value, z.max()):
            return (f"example {b.i}: value {value:.9g}, brute-force maximum {z.max():.9g} over "
                    f"{len(b.Y)} labelings")
        y = sc[2][:len(b.Y[0])]
        if not close(b.hinge(w, y), z.max()):
            return f"example {b.i}: its labeling {list(y)} scores {b.hinge(w, y):.9g}"
        if not close(v, b.psi(y)):
            return f"example {b.i}: its direction is not phi(y*) - phi(y_i)"
    return None


def check_decode(task, brutes, rng):
    for b in brutes:
        w = weights_at(rng, task)
        z = b.z(w)
        U, delta, y, _, _, _ = kernels.scratch(task.dims, task.data, task.max_len)
        T = kernels.scores(w, 1.0, task.dims, task.data, b.i, U)
        loss = kernels.decode(w, task.dims, task.data, task.normalized, b.i, U, T, delta, y)
        y = y[:len(b.Y[0])]
        if not close(b.hinge(w, y), z.max()):
            return (f"example {b.i}: its labeling scores {b.hinge(w, y):.9g}, the maximum is "
                    f"{z.max():.9g}")
        if not close(loss, b.hinge(np.zeros(task.d), y)):
            return f"example {b.i}: returns loss {loss:.9g}, its labeling's is another"
    return None


def check_smoothed(oracle):
    def check(task, brutes, rng):
        for b in brutes:
            w = weights_at(rng, task) / 3.0
            value, p = reference(oracle, b.z(w))
            got, v, _, _ = oracle_call(task, oracle, w, 1.0, b.i)
            if not close(got, value):
                return f"example {b.i}: value {got:.9g}, by enumeration {value:.9g}"
            if not close(v, p @ b.G):
                return f"example {b.i}: its direction is not the weighted sum of phi(y) - phi(y_i)"
        return None
    return check


def check_ws(task, brutes, rng):
    for b in brutes:
        w = weights_at(rng, task)
        U1, U2 = (kernels.scratch(task.dims, task.data, task.max_len)[0] for _ in range(2))
        T = kernels.scores(w, 1.0, task.dims, task.data, b.i, U1)
        kernels.scores(w / WS, WS, task.dims, task.data, b.i, U2)
        if not close(U1[:T], U2[:T]):
            return f"example {b.i}: scores(w / {WS}, ws={WS}) differ from scores(w, 1)"
        for name in task.oracles:
            oracle = SMOOTHED.get(name, Oracle())
            one, v1, _, _ = oracle_call(task, oracle, w, 1.0, b.i)
            scaled, v2, _, _ = oracle_call(task, oracle, w / WS, WS, b.i)
            if not (close(one, scaled) and close(v1, v2)):
                return (f"example {b.i}: the {name} oracle at (w / {WS}, ws={WS}) gives "
                        f"{scaled:.9g}, at (w, 1) {one:.9g} (ws not applied to every weight?)")
    return None


def check_evaluate(task, brutes, rng):
    w = weights_at(rng, task)
    expected = np.mean([b.z(w).max() for b in brutes])
    hinge = task.evaluate(w)[0]
    return None if close(hinge, expected) else (
        f"mean hinge {hinge:.9g}, mean brute-force maximum {expected:.9g}")


def check_directions(task, brutes, rng):
    has = task.kernels
    for b in brutes:
        w = weights_at(rng, task)
        _, v1, sc1, T = oracle_call(task, Oracle(), weights_at(rng, task), 1.0, b.i)
        _, v2, sc2, _ = oracle_call(task, Oracle(), weights_at(rng, task), 1.0, b.i)
        U, _, _, R, E, zero = sc1
        target, avg, C = w.copy(), np.zeros((2, task.d)), np.array([2.0, -1.0])
        kernels.add_direction(target, 0.7, task.dims, task.data, b.t0, T, R, E, avg, C)
        if not (close(target, w + 0.7 * v1) and close(avg, np.outer(C, 0.7 * v1))):
            return f"example {b.i}: add_direction is not w += coef v with C[j] coef v averaged"
        if "direction_sqnorm" in has:
            sq = kernels.direction_sqnorm(task.dims, task.data, b.t0, T, R, E, zero)
            if not close(sq, v1 @ v1) or zero.any():
                return (f"example {b.i}: direction_sqnorm {sq:.9g}, ||v||^2 {v1 @ v1:.9g} "
                        f"(dense scratch all-zero after: {not zero.any()})")
        if "direction_dot" in has:
            kernels.scores(w, 1.0, task.dims, task.data, b.i, U)
            dot = kernels.direction_dot(w, task.dims, task.data, U, T, R, E)
            if not close(dot, w @ v1):
                return f"example {b.i}: direction_dot {dot:.9g}, <w, v> {w @ v1:.9g}"
        if "subtract_direction" in has:
            kernels.subtract_direction(task.data, T, R, E, sc2[3], sc2[4])
            if not close(dense(task, b.t0, T, R, E), v1 - v2):
                return f"example {b.i}: subtract_direction does not give v1 - v2"
    return None


def check_dual(task, brutes, rng):
    alpha = np.zeros(task.dual_size())
    mu, Psum = task.dual_views(alpha)
    blocks = kernels.init_marginals(task.data, mu, Psum)
    start = alpha.copy()
    expected = {b.i: np.zeros(task.d) for b in brutes}     # sum_y alpha_i(y) psi(y)

    def A(state, U=None, c=1.0, s=1.0):
        w = np.empty(task.d)
        kernels.weights_from_average(state, np.zeros_like(state) if U is None else U, c, s,
                                     task.dims, task.data, LAM, w)
        return w

    if not close(A(alpha), 0.0):
        return "init_marginals is not alpha_i = e_{y_i}: weights_from_average gives w != 0"
    avg, C = np.zeros((1, len(alpha))), np.array([3.0])
    _, _, y, R, E, _ = kernels.scratch(task.dims, task.data, task.max_len)
    steps = 6 * len(brutes)
    for step in range(steps):
        b = brutes[rng.integers(len(brutes))]
        k = rng.integers(len(b.Y))
        gamma = 1.0 if step == 1 else rng.random()
        y[:] = 0
        y[:len(b.Y[k])] = b.Y[k]
        kernels.dual_residual(mu, blocks, task.data, b.i, b.t0, y, b.T, R, E)
        if not close(dense(task, b.t0, b.T, R, E), b.G[k] - expected[b.i]):
            return (f"example {b.i}: dual_residual is not phi(y) - sum_y' alpha_i(y') "
                    "phi(y')")
        blocks = kernels.move_marginals(mu, Psum, blocks, task.data, b.i, b.t0, b.T, gamma,
                                        R, E, avg, C)
        expected[b.i] = (1 - gamma) * expected[b.i] + gamma * b.G[k]
        if step == steps // 2:
            middle, middle_w = alpha.copy(), -sum(expected.values()) / (LAM * task.n)
    if not close(avg[0], C[0] * (alpha - start)):
        return "move_marginals does not record C[j] (alpha - alpha_0) in the lazy averages"
    if not close(A(alpha), -sum(expected.values()) / (LAM * task.n)):
        return "weights_from_average is not A alpha = 1/(lam n) sum_i phi(y_i) - phi(alpha_i)"
    c, s = 2.5, 1.7
    if not close(A(alpha, c * alpha - s * middle, c, s), middle_w):
        return "weights_from_average of (c alpha - U) / s is not A of that averaged state"
    return None


# ------------------------------------------------------------------------------ the kit


def checks(task):
    """``[(check, function)]`` that apply to ``task`` (by its declared kernels and oracles)."""
    out = [("the stored-labeling kernels agree: labeling_hinge = loss + <w, add_labeling>",
            check_labelings),
           ("max oracle: value, labeling and direction against brute force", check_max),
           ("decode: a brute-force maximizer and its loss", check_decode)]
    out += [(f"{name} oracle: value and direction against enumeration",
             check_smoothed(SMOOTHED[name])) for name in task.oracles if name in SMOOTHED]
    out += [("ws: scores and oracles at (w / ws, ws) equal those at (w, 1)", check_ws),
            ("the direction algebra: add_direction with averages, sqnorm, dot, subtract",
             check_directions)]
    if all(k in task.kernels for k in DUAL_KERNELS):
        out.append(("the factored dual against an explicit alpha (A alpha, averages)",
                    check_dual))
    return out


def enumerate_examples(task):
    """``[Brute]`` of the examples with at most :data:`LIMIT` labelings."""
    out = []
    for i in range(task.n):
        Y = task.labelings(i, LIMIT)
        if Y is not None:
            out.append(Brute(task, i, Y))
    return out


def task_checks(task):
    """``[(check, None or the failure)]`` of the kit on ``task`` (a Task class: its tiny
    instance; or a task)."""
    if isinstance(task, type):
        task = task.tiny()
    missing = [k for k in LABELING_KERNELS if k not in task.kernels]
    prerequisite = (f"enumerates its labelings (Task.labelings) and declares "
                    f"{', '.join(LABELING_KERNELS)}")
    try:
        brutes = [] if missing else enumerate_examples(task)
    except NotImplementedError as err:
        return [(prerequisite, str(err))]
    if missing:
        return [(prerequisite, f"missing kernels {missing}")]
    if len(brutes) < MIN_EXAMPLES:
        return [(prerequisite, f"{len(brutes)} of its {task.n} tiny examples have at most "
                               f"{LIMIT} labelings; the kit needs {MIN_EXAMPLES}")]
    results = [(prerequisite, None)]
    listed = checks(task)
    if len(brutes) == task.n:
        listed.append(("evaluate: its mean hinge is the mean brute-force maximum",
                       check_evaluate))
    rng = np.random.default_rng(SEED)
    for name, check in listed:
        try:
            failure = check(task, brutes, rng)
        except Exception as err:      # a kernel raised: that check fails, the others run
            failure = f"{type(err).__name__}: {err}"
        results.append((name, failure))
    return results


def check_task(task):
    """Run the kit on ``task`` (a Task class or instance) and raise AssertionError listing
    every failed check; returns the results of :func:`task_checks`."""
    results = task_checks(task)
    failed = [f"{name}: {failure}" for name, failure in results if failure]
    if failed:
        raise AssertionError("; ".join(failed))
    return results
