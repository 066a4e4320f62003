"""OCR letters: ssvmbench's BCFW and SSG against pystruct 0.3.2's FrankWolfeSSVM (BCFW) and
SubgradientSSVM (SSG) on the same split, features, loss and objective, one thread each.

Split: ``load_split("ocr")``, BCFW's (train folds 1-9, 6,251 words; test fold 0, 626 words).
Features: ssvmbench's own, its CSR rows made dense (128 pixels and the constant 1 at id 128),
plus two indicators, first and last letter of the word, so that pystruct's ChainCRF (unary
weights per feature and label, directed 26 x 26 transitions) has the joint feature map of
ssvmbench's chain task, whose first- and last-label biases these indicators' weights become:
both models have 4,082 weights, and a pystruct ``w`` is mapped entry for entry onto
ssvmbench's layout (:func:`to_ssvmbench`). Loss: ssvmbench's default, the Hamming distance
normalized by the word's length (BCFW Appendix F); pystruct's ChainCRF counts unnormalized
Hamming, so :class:`NormalizedChainCRF` divides its loss and loss augmentation by the length.
Objective: ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` with ``lam = 0.01`` (BCFW's OCR setting);
pystruct minimizes ``1/2 ||w||^2 + C sum_i H_i(w)`` (0.3.2's ``pystruct/utils/inference.py``
lines 115-127, ``objective_primal``: ``max(np.sum(slacks), 0) * C + np.sum(w ** 2) / 2.``;
``pystruct/learners/frankwolfe_ssvm.py`` lines 45-46 document ``C`` as ``1 / (lambda *
n_samples)``, and lines 225-226 step to ``ws = delta_joint_feature * self.C``, ``ls = loss /
n_samples``), the same objective divided by ``lam`` when ``C = 1 / (lam n)``. SSG: pystruct's
step (``subgradient_ssvm.py`` lines 129-141, with ``learning_rate_ = C * len(X)`` of line 188)
is ``w += lr / (t + t0) * (dpsi - w / (C n))``, BCFW's ``1 / (lam (t + 1))`` step at t0 = 1.

Inference: pystruct's ``max-product``, which on a chain is its Cython Viterbi
(``pystruct/inference/_viterbi.pyx``, called from ``maxprod.py``); ``lp`` (cvxopt) is the only
other method installed (no AD3, OpenGM or pyqpbo). Sampling: a fresh permutation per pass on
all four (pystruct's FW default ``sample_method='perm'``, SSG ``shuffle=True``, ssvmbench's
``sampling=permutation``). Iterates: pystruct's raw ones (FW ``do_averaging=False``, SSG
``averaging=None``), beside ssvmbench's raw and weighted-average ones (wavg).

Prints, per method and pass, the training seconds (CPU, cumulative; ssvmbench's compile time
and the objective / duality-gap passes pystruct makes inside ``fit`` excluded), the test error
(the mean per-word normalized Hamming, BCFW's test error, and the per-letter error) and the
primal objective, computed for every method by ssvmbench on the training set (for pystruct
on its ``w`` mapped); then checks that the two sides agree: pystruct's own primal against
ssvmbench's on the same ``w``, and their test decodings of it. The timing comes after, in
interleaved rounds (:mod:`peer_rounds`): in each round, per solver, a fresh ssvmbench
solver's P = ``--timed-passes`` passes (compile excluded) and, right after it, a fresh
pystruct ``fit(max_iter=P)``. Ours and pystruct's bare pass are the slope between pass 1 and
pass P (CPU seconds; for pystruct less its objective / duality-gap computations), the pass
as it recurs: pystruct FW's first pass also touches its ``n x d`` matrix of dual blocks
(6,251 x 4,082 doubles, 204 MB, allocated by ``np.zeros``) for the first time. The whole
``fit`` over P is the other pystruct figure (what a user of ``fit`` waits for: with FW's
first pass, its gap after pass 1 and the final objective; SSG's objective after every pass
and at the end). Run by ``scripts/peer_pystruct.sh`` in its own virtual environment, where
pystruct is built.
"""

import argparse
import time

import numpy as np
import pystruct
from peer_rounds import loads, run_rounds, summary
from pystruct.learners import FrankWolfeSSVM, SubgradientSSVM
from pystruct.models import ChainCRF

from ssvmbench.data import load_split
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import make_task

SSVMBENCH_OPTIONS = {"sampling": "permutation"}
# (peer, ours) pairs whose ratios the summary shows
PAIRS = [("pystruct fw bare", "ssvmbench bcfw"), ("pystruct fw fit", "ssvmbench bcfw"),
         ("pystruct ssg bare", "ssvmbench ssg"), ("pystruct ssg fit", "ssvmbench ssg")]


def chains(ds):
    """``(X, Y)`` in pystruct's ChainCRF format: per word a dense ``(T, F + 2)`` array of its
    letters' features (ssvmbench's ``F`` from the CSR rows, then the first- and last-letter
    indicators) and its ``(T,)`` labels."""
    F = ds.n_features
    dense = np.zeros((ds.n_tokens, F + 2))
    rows = np.repeat(np.arange(ds.n_tokens), np.diff(ds.feat_ptr))
    dense[rows, ds.feat_idx] = ds.feat_val
    dense[ds.offsets[:-1], F] = 1.0
    dense[ds.offsets[1:] - 1, F + 1] = 1.0
    cuts = ds.offsets[1:-1]
    return np.split(dense, cuts), np.split(ds.labels.astype(np.int64), cuts)


def to_ssvmbench(w, F, L):
    """pystruct's ChainCRF weights (``(L, F + 2)`` unaries, then ``(L, L)`` transitions
    ``a -> b``) in ssvmbench's chain layout (``w[j*L + l]``, transitions, first-label and
    last-label biases; :mod:`ssvmbench.tasks.chain`)."""
    unary = w[:L * (F + 2)].reshape(L, F + 2)
    return np.concatenate([unary[:, :F].T.ravel(), w[L * (F + 2):], unary[:, F],
                           unary[:, F + 1]])


class NormalizedChainCRF(ChainCRF):
    """ChainCRF with the Hamming loss divided by the word's length (ssvmbench's
    ``normalized_hamming``): the loss, and the loss augmentation through pystruct's own
    (Cython) ``loss_augment_unaries`` with the class weights (all 1) divided by the length."""

    def loss(self, y, y_hat):
        return ChainCRF.loss(self, y, y_hat) / len(y)

    def loss_augment_unaries(self, unary_potentials, y):
        weights = self.class_weight
        self.class_weight = weights / len(y)
        try:
            ChainCRF.loss_augment_unaries(self, unary_potentials, y)
        finally:
            self.class_weight = weights


class PassClock:
    """pystruct's ``logger``: called by ``fit`` after every pass, it records the CPU seconds
    of training so far and a copy of ``w``. The passes ``fit`` makes to compute objectives or
    duality gaps (``_objective``, FW's ``_calc_dual_gap``) are not training: the learner
    classes below report their CPU time in ``excluded``, subtracted here."""

    def __init__(self):
        self.start, self.excluded, self.rows = time.process_time(), 0.0, []

    def __call__(self, learner, iteration):
        if iteration != "final":
            spent = time.process_time() - self.start - self.excluded
            self.rows.append((iteration + 1, spent, learner.w.copy()))


def excluding(cls):
    """``cls`` whose objective and duality-gap computations add their CPU time to its
    :class:`PassClock`'s ``excluded``."""
    def timed(name):
        method = getattr(cls, name)

        def wrapper(self, *args):
            start = time.process_time()
            try:
                return method(self, *args)
            finally:
                self.logger.excluded += time.process_time() - start
        return wrapper
    names = [n for n in ("_objective", "_calc_dual_gap") if hasattr(cls, n)]
    return type(cls.__name__, (cls,), {n: timed(n) for n in names})


def pystruct_rows(X, Y, solver, lam, passes, seed):
    """(pass, CPU seconds, w) after every pass of pystruct's ``solver`` ("fw" or "ssg"),
    pystruct's own primal objective (its ``objective_primal``, times ``lam``) at the end, and
    the CPU seconds of the whole ``fit``."""
    n, F, L = len(X), X[0].shape[1] - 2, 26
    model = NormalizedChainCRF(n_states=L, n_features=F + 2, inference_method="max-product")
    C = 1.0 / (lam * n)
    clock = PassClock()
    if solver == "fw":
        # check_dual_every must not be 0 (frankwolfe_ssvm.py line 267 then reads dual_gap,
        # set only by the check of line 255), so its only gap pass is the one after pass 1
        # (iteration 0); tol=-inf: no early stop on that gap
        learner = excluding(FrankWolfeSSVM)(
            model, C=C, max_iter=passes, batch_mode=False, line_search=True,
            check_dual_every=passes + 1, tol=-np.inf, do_averaging=False,
            sample_method="perm", random_state=seed, logger=clock)
    else:
        # learning_rate 'auto' = C n = 1 / lam, decay (t + t0)^-1 with t0 = 1: the step
        # 1 / (lam (t + 1)) of BCFW's SSG (Pegasos); pystruct's own default t0 is 10
        np.random.seed(seed)       # shuffle=True draws from numpy's global generator
        learner = excluding(SubgradientSSVM)(
            model, C=C, max_iter=passes, learning_rate="auto", decay_exponent=1,
            decay_t0=1, momentum=0.0, averaging=None, shuffle=True,
            break_on_no_constraints=False, logger=clock)
    clock.start = time.process_time()
    learner.fit(X, Y)
    fit_seconds = time.process_time() - clock.start
    final = learner.primal_objective_curve_ if solver == "fw" else learner.objective_curve_
    return model, clock.rows, lam * final[-1], fit_seconds


def pystruct_pass(X, Y, solver, lam, passes, seed):
    """A round's measurement: a fresh ``fit(max_iter=passes)``'s bare pass (the slope of its
    CPU seconds, the objective / duality-gap computations left out, between pass 1 and the
    last) and its whole ``fit`` over ``passes``."""
    def run():
        _, rows, _, fit_seconds = pystruct_rows(X, Y, solver, lam, passes, seed)
        return {f"pystruct {solver} bare": (rows[-1][1] - rows[0][1]) / (passes - 1),
                f"pystruct {solver} fit": fit_seconds / passes}
    return run


def errors(ds, predicted):
    """(mean per-word normalized Hamming, per-letter error) of the labels ``predicted``."""
    wrong = (np.asarray(predicted) != ds.labels).astype(float)
    per_word = np.add.reduceat(wrong, ds.offsets[:-1]) / np.diff(ds.offsets)
    return per_word.mean(), wrong.mean()


def primal(tr, w, lam):
    """``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` on the training task ``tr`` (ssvmbench's)."""
    return 0.5 * lam * (w @ w) + tr.evaluate(w, with_hinge=True)[0]


def compile_solver(tr, solver, lam, seed):
    """Compiles ``solver`` on two words (compile time is not training time)."""
    warm = make_task(tr.dataset.subset(range(2)))
    make_solver(solver, warm, lam, SSVMBENCH_OPTIONS, seed).run_until(2 * warm.n)


def ssvmbench_pass(tr, solver, lam, passes, seed):
    """A round's measurement: a fresh solver's CPU seconds per pass, the slope between pass
    1 and pass ``passes`` (as pystruct's bare pass)."""
    def run():
        s = make_solver(solver, tr, lam, SSVMBENCH_OPTIONS, seed)
        s.run_until(tr.n)
        start = time.process_time()
        s.run_until(passes * tr.n)
        return {f"ssvmbench {solver}": (time.process_time() - start) / (passes - 1)}
    return run


def ssvmbench_rows(tr, te, solver, lam, passes, seed):
    """(pass, CPU seconds, {iterate: (test errors, primal)}) after every pass (compiled
    before: :func:`compile_solver`)."""
    s = make_solver(solver, tr, lam, SSVMBENCH_OPTIONS, seed)
    rows, spent = [], 0.0
    for p in range(1, passes + 1):
        start = time.process_time()
        s.run_until(p * tr.n)
        spent += time.process_time() - start
        rows.append((p, spent, {name: (errors(te.dataset, te.evaluate(w, False)[2]),
                                       primal(tr, w, lam))
                                for name, w, _ in s.iterates()}))
    return rows


def shown(err, objective):
    return f"test err {err[0]:.4f} (letters {err[1]:.4f})  primal {objective:.6f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--lam", type=float, default=0.01, help="lambda (BCFW's OCR: 0.01)")
    parser.add_argument("--passes", type=int, default=10, help="passes of every method")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved timing rounds (default 3)")
    parser.add_argument("--timed-passes", type=int, default=3,
                        help="passes per timed run, ssvmbench's and pystruct's fit "
                             "(default 3, at least 2)")
    args = parser.parse_args()
    if args.timed_passes < 2:
        parser.error("--timed-passes must be at least 2 (a slope between pass 1 and the last)")
    load_start = loads()
    split = load_split("ocr", root=args.data_root)
    train, test = split.train, split.test
    tr, te = make_task(train), make_task(test)
    te.evaluate(np.zeros(te.d), with_hinge=False)      # compile the evaluation
    tr.evaluate(np.zeros(tr.d), with_hinge=True)
    F, L = train.n_features, train.n_labels
    print(f"pystruct {pystruct.__version__}; OCR ({split.variant}): {train.n} training "
          f"words ({train.n_tokens} letters), {test.n} test words ({test.n_tokens} "
          f"letters), {F} features + first/last "
          f"indicators for pystruct, {L} labels, lambda {args.lam:g} "
          f"(pystruct C = 1/(lambda n) = {1 / (args.lam * train.n):.6g})")
    checks = []
    for solver in ("bcfw", "ssg"):
        compile_solver(tr, solver, args.lam, args.seed)
        rows = ssvmbench_rows(tr, te, solver, args.lam, args.passes, args.seed)
        for p, seconds, results in rows:
            line = "; ".join(f"{name} {shown(*r)}" for name, r in results.items())
            print(f"ssvmbench {solver:4s} pass {p:2d}: {seconds:7.2f} s CPU  {line}")
    X, Y = chains(train)
    Xtest, _ = chains(test)
    for solver in ("fw", "ssg"):
        model, rows, own_primal, _ = pystruct_rows(X, Y, solver, args.lam, args.passes,
                                                   args.seed)
        for p, seconds, w in rows:
            predicted = np.concatenate(model.batch_inference(Xtest, w))
            ours = to_ssvmbench(w, F, L)
            print(f"pystruct  {solver:4s} pass {p:2d}: {seconds:7.2f} s CPU  raw "
                  f"{shown(errors(test, predicted), primal(tr, ours, args.lam))}")
        differ = int(np.sum(predicted != te.evaluate(ours, False)[2]))
        checks.append(f"pystruct  {solver}, w after pass {p}: pystruct's primal "
                      f"{own_primal:.6f}, ssvmbench's {primal(tr, ours, args.lam):.6f}; test "
                      f"decodings differ on {differ} of {test.n_tokens} letters")
    print("Checks, the same w on both sides:")
    for line in checks:
        print(f"  {line}")
    P = args.timed_passes
    measurements = [ssvmbench_pass(tr, "bcfw", args.lam, P, args.seed),
                    pystruct_pass(X, Y, "fw", args.lam, P, args.seed),
                    ssvmbench_pass(tr, "ssg", args.lam, P, args.seed),
                    pystruct_pass(X, Y, "ssg", args.lam, P, args.seed)]
    samples = run_rounds(args.rounds, measurements)
    for line in summary(samples, PAIRS, load_start, loads(), unit="s per pass, CPU"):
        print(line)


if __name__ == "__main__":
    main()
