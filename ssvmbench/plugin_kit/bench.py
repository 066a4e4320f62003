"""``ssvmbench bench``: speed of a solver, measured outside the test suite.

Seconds per effective pass are the median over ``--passes`` (>= 5) timed passes after the
run's warm-up (:func:`ssvmbench.run.runner.warm_up`: every kernel the solver calls, e.g. SVRG's
steps, which its first pass, a full gradient, does not reach) and one untimed pass; compile
time is reported separately, as benchopt does.
A checkpoint's evaluation (:func:`ssvmbench.run.monitor.measure`) is timed after the passes on
one thread and on every core, as a run's checkpoints run it (the passes and the evaluation
with BLAS on one thread, :func:`ssvmbench.run.monitor.one_blas_thread`, as in a run). The dense
score floor is the time of the scores every pass needs at least, ``X @ W`` of all training
rows with ``X`` dense, by BLAS on one thread as the solvers run (where ``X`` fits in
:data:`FLOOR_MAX_ENTRIES`): a pass's ratio to it says how far its sparse gathers, decoding
and updates are from that bound (issue 31).
"""

import os
import platform
import resource
import statistics
import time
from pathlib import Path

import numba
import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.run.compose import config
from ssvmbench.run.monitor import evaluation_threads, measure, one_blas_thread
from ssvmbench.run.runner import load_tasks, prepare, warm_up
from ssvmbench.run.settings import read
from ssvmbench.tasks.kernels import mean_hinge_and_gradient
from ssvmbench.tasks.oracle import Oracle


def configure_parser(parser):
    parser.add_argument("overrides", nargs="*",
                        help="config overrides as for `ssvmbench run`, e.g. solver=bcfw data=ocr")
    parser.add_argument("--passes", type=int, default=7,
                        help="timed passes after warm-up (median reported; >= 5)")
    parser.add_argument("--oracles", action="store_true",
                        help="time one pass of each oracle (max, top-K with oracle.K, exp with "
                             "oracle.mu) at the same weights instead of a solver")


def main(args):
    if args.passes < 5:
        raise UserError(f"--passes={args.passes}: time at least 5 passes")
    settings = read(config(args.overrides))
    if args.oracles:
        return _oracle_costs(load_tasks(settings)[1], settings, args.passes)
    solver, train, test, split, lam = prepare(settings)
    n = train.n
    jit_s = warm_up(settings, split, lam, solver.l1)
    with one_blas_thread():                  # as a run's timed loop (runner._train)
        solver.run_until(n)                  # an untimed first pass
        times = []
        for p in range(2, args.passes + 2):
            start = time.perf_counter()
            solver.run_until(p * n)
            times.append(time.perf_counter() - start)
        per_pass = statistics.median(times)
        peak_passes_mb = _peak_rss_mb()
        evaluation = _evaluation_seconds(solver, train, test)
    held = [*vars(solver).values(), *vars(solver.averages).values()]
    state_mb = sum(map(_nbytes, held)) / 2**20
    print(f"solver={solver.name} data={settings.data} ({split.variant}) lambda={lam:g} "
          f"n={n} rows={train.n_rows} d={train.d}")
    print(f"machine: {_cpu_model()}, {os.cpu_count()} cores (the solvers run on one)")
    print(f"compile/cache load (warm-up):           {jit_s:.2f} s")
    print(f"seconds per pass:         {per_pass:.4f}  (median of {len(times)}; "
          f"min {min(times):.4f}, max {max(times):.4f})")
    floor = dense_floor(train, solver.iterates()[0][1])
    if floor is not None:
        print(f"dense score floor:        {floor:.4f} s  (X @ W of the training rows, one "
              f"thread; the pass is {per_pass / floor:.1f}x it)")
    print(f"oracle calls per second:  {n / per_pass:,.0f}")
    print(f"score rows per second:    {train.n_rows / per_pass:,.0f}  (letters, tokens or "
          "candidate boxes)")
    print("checkpoint evaluation:    " + ", ".join(
        f"{seconds:.4f} s on {threads} thread{'s' * (threads > 1)}"
        for threads, seconds in evaluation.items())
        + f"  (iterates {', '.join(solver.iterate_names)}; median of 3)")
    print(f"solver state:             {state_mb:.1f} MiB")
    print(f"peak memory (max RSS):    {peak_passes_mb:.0f} MiB in the passes, "
          f"{_peak_rss_mb():.0f} MiB with the evaluation")
    return 0


FLOOR_MAX_ENTRIES = 10**8      # dense X of at most 800 MB: OCR's 52,000 x 129, not CoNLL's


def dense_floor(train, w, repeats=5):
    """Minimum seconds of ``X @ W`` (BLAS, one thread) over the training rows at ``w``
    (``None`` for a task without CSR rows or whose dense ``X`` is too large)."""
    ds = train.dataset
    if not all(hasattr(ds, key) for key in ("feat_ptr", "feat_idx", "feat_val")):
        return None
    F, L = train.dims
    rows = len(ds.feat_ptr) - 1
    if rows * F > FLOOR_MAX_ENTRIES:
        return None
    X = np.zeros((rows, F))
    X[np.repeat(np.arange(rows), np.diff(ds.feat_ptr)), ds.feat_idx] = ds.feat_val
    W = np.ascontiguousarray(w[:F * L].reshape(F, L))
    S = np.empty((rows, L))
    times = []
    with one_blas_thread():
        for _ in range(repeats + 1):            # the first call warms the caches
            start = time.perf_counter()
            np.matmul(X, W, out=S)
            times.append(time.perf_counter() - start)
    return min(times[1:])


def _evaluation_seconds(solver, train, test):
    """Median seconds of three checkpoint evaluations, by thread count (1, and every core)."""
    seconds = {}
    for threads in sorted({1, evaluation_threads()}):
        numba.set_num_threads(threads)
        measure(solver, train, test)                # compiles or loads the parallel kernels
        times = []
        for _ in range(3):
            start = time.perf_counter()
            measure(solver, train, test)
            times.append(time.perf_counter() - start)
        seconds[threads] = statistics.median(times)
    return seconds


def _oracle_costs(train, settings, passes):
    """Median seconds of an oracle pass (every example's value and gradient, summed as in
    SVRG's full gradient) for max, top-K and exp at the same random weights (the oracles the
    task can run: no exp for matchings); top-K with the chosen ``oracle.ties``."""
    chosen = settings.oracle
    K = chosen.K if chosen.name == "topk" else 5
    mu = chosen.mu if chosen.name != "max" else 1.0
    ties = chosen.ties if chosen.name == "topk" else "scan"
    w = np.random.default_rng(0).normal(scale=0.01, size=train.d)
    g = np.empty(train.d)
    print(f"data={settings.data} n={train.n} rows={train.n_rows} labels={train.n_labels} "
          f"d={train.d}; one oracle pass = n calls at the same w")
    base = None
    for oracle in (Oracle(), Oracle("topk", K, mu, ties), Oracle("exp", 1, mu)):
        if oracle.name not in train.oracles:
            print(f"{oracle.name:>14}: intractable for {train.kind} tasks")
            continue
        bufs = train.oracle_scratch(oracle)
        times = []
        for _ in range(passes + 1):                 # the first pass compiles / loads
            start = time.perf_counter()
            mean_hinge_and_gradient(w, train.dims, train.data, train.normalized, oracle.kind,
                                    oracle.K, oracle.mu, bufs, train.max_len, g)
            times.append(time.perf_counter() - start)
        per_call = statistics.median(times[1:]) / train.n
        base = base or per_call
        name = "-".join([oracle.name] + oracle.label()[1:])
        print(f"{name:>14}: {per_call * 1e6:8.1f} us per call   {per_call / base:5.2f} x max")
    return 0


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _nbytes(value):
    """Bytes of an array that is not a view of another array (numba-made arrays have a
    non-array base), or of the arrays of a tuple (e.g. BCFW's sparse blocks)."""
    if isinstance(value, tuple):
        return sum(map(_nbytes, value))
    if not isinstance(value, np.ndarray) or isinstance(value.base, np.ndarray):
        return 0
    return value.nbytes


def _cpu_model():
    """The CPU model from /proc/cpuinfo (Linux), else what ``platform`` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    models = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return models[0] if models else (platform.processor() or platform.machine())
