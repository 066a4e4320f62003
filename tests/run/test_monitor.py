"""Checkpoint schedule and the lambda specification."""

import os

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from ssvmbench import api
from ssvmbench.common.errors import UserError
from ssvmbench.data.scenes import load_scenes
from ssvmbench.data.synthetic import random_chains, random_hashed_chains
from ssvmbench.run import runner
from ssvmbench.run.monitor import evaluation_threads, measure, schedule
from ssvmbench.run.settings import resolve_lambda
from ssvmbench.solvers import make_solver, registered
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.tasks import chain, hashed_chain, make_task
from ssvmbench.tasks.chain_task import ChainTask
from ssvmbench.tasks.hashed_chain import HashedChainTask


def test_schedule_every_pass_and_final_point():
    assert list(schedule(3, 1.0)) == [1.0, 2.0, 3.0]
    assert list(schedule(2.5, 1.0)) == [1.0, 2.0, 2.5]
    assert list(schedule(1, 0.25)) == [0.25, 0.5, 0.75, 1.0]
    assert list(schedule(0.3, 1.0, log_start=0.1, per_decade=1)) == [0.1, 0.3]


def test_a_schedule_of_a_billion_passes_takes_no_memory():
    """Issue 29: ``solver.passes=1e9 stop.time_s=3`` allocated 7.5 GiB of checkpoints before
    training; the schedule is generated as the run goes."""
    import itertools
    import tracemalloc

    tracemalloc.start()
    first = list(itertools.islice(schedule(1e9, 1.0, log_start=0.01), 10))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert first[-1] == 2.0 and first[0] == 0.01 and peak < 2**20


def test_schedule_log_spaced_start():
    points = list(schedule(2, 1.0, log_start=0.01, per_decade=2))
    assert [round(p, 4) for p in points] == [0.01, 0.0316, 0.1, 0.3162, 1.0, 2.0]


@pytest.mark.parametrize("args,fragment", [
    ((-1, 1.0), "solver.passes=-1"),
    ((3, 0), "eval.every=0"),
    ((3, 1e-9), "eval.every=1e-09 must be at least"),
    ((3, 1.0, 0.1, 1e12), "eval.per_decade"),
    ((3, 1.0, 2.0), "eval.log_start=2.0"),
])
def test_schedule_refuses_bad_values(args, fragment):
    with pytest.raises(UserError, match=fragment):
        schedule(*args)


@pytest.mark.parametrize("spec,value", [
    (0.01, 0.01), ("0.01", 0.01), (1, 1.0), ("1/n", 0.001), ("inv_n", 0.001),
    ("10/n", 0.01), ("2.5e-1/n", 0.00025),
    ("0.1/n", 0.0001),     # Casimir's --l2reg 0.1 is lambda = l2reg / n
])
def test_lambda_specs(spec, value):
    assert resolve_lambda(spec, 1000) == pytest.approx(value)


@pytest.mark.parametrize("spec", [0, -0.1, "x", "1/m", None, True])
def test_lambda_refused(spec):
    with pytest.raises(UserError, match="lambda"):
        resolve_lambda(spec, 1000)


def test_logged_best_is_never_above_the_raw_iterate():
    """A checkpoint evaluates the raw iterate exactly, so the logged ``best`` (BCFW Figure 1's
    lower envelope) takes it when it is lower, and is non-increasing; the solver's own best
    is left as it was."""

    task = ChainTask(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
    solver = make_solver("fw", task, 0.001, {"iterates": ["raw", "best"]}, 0)
    best = []
    for passes in range(1, 15):
        solver.run_until(passes * task.n)
        kept = (solver.best_primal, None if solver.best_w is None else solver.best_w.copy())
        rows = measure(solver, task, task)
        assert solver.best_primal == kept[0]            # measuring leaves the solver alone
        assert kept[1] is None or (solver.best_w == kept[1]).all()
        assert rows["iterate"] == ["raw", "best"]
        assert rows["primal"][1] <= rows["primal"][0] + 1e-12
        best.append(rows["primal"][1])
    assert all(b <= a + 1e-12 for a, b in zip(best, best[1:]))


def _serial_chain_evaluation(task, w, with_hinge=True):
    """The evaluation of one iterate ``w`` of a chain or hashed chain as one loop over the
    examples, in order, with the kernels of a single iterate (the reference)."""
    hashed = isinstance(task, HashedChainTask)
    dims = (0, task.n_labels) if hashed else task.dims
    edges = hashed_chain.edge_weights(w, task.dims, task.data) if hashed else w
    scores = hashed_chain.unary_scores if hashed else chain.unary_scores
    U, delta, delta2, y, tables = chain.evaluation_buffers(edges[None, :], dims, task.max_len)
    predictions = np.empty(task.n_rows, dtype=np.int32)
    errors, hinges = 0.0, 0.0
    for i in range(task.n):
        T = scores(w, 1.0, task.dims, task.data, i, U)
        e, h = chain.score_sequence(edges, tables[0], dims, task.data, task.normalized,
                                    with_hinge, i, U, T, delta, delta2, y, predictions)
        errors += e
        hinges += h
    return hinges / task.n if with_hinge else np.nan, errors / task.n, predictions


@pytest.mark.parametrize("kind", ["chain", "hashed_chain"])
def test_a_checkpoints_iterates_in_one_pass_get_each_iterates_own_numbers(kind, monkeypatch):
    """A checkpoint's iterates are evaluated in one pass (their token scores from one gather
    per token, the iterates side by side): each gets the numbers of its own serial
    evaluation to the last bit, in groups too (a copy side by side too large), with and
    without the hinge."""
    make = {"chain": lambda: random_chains(300, 4, 6, lengths=(1, 9), seed=2),
            "hashed_chain": lambda: random_hashed_chains(300, 4, 6, 11, lengths=(1, 9),
                                                         seed=2)}[kind]
    task = make_task(make())
    rng = np.random.default_rng(1)
    ws = [rng.normal(size=task.d) for _ in range(3)]
    for with_hinge in (True, False):
        expected = [_serial_chain_evaluation(task, w, with_hinge) for w in ws]
        for group_bytes in (type(task).SIDE_BY_SIDE_BYTES, 16 * task.d):   # all; 2 + 1
            monkeypatch.setattr(type(task), "SIDE_BY_SIDE_BYTES", group_bytes)
            got = task.evaluate_many(task.batch(ws), with_hinge)
            assert len(got) == len(ws)
            for (hinge, error, predictions), (hinge0, error0, predictions0) in zip(
                    got, expected):
                np.testing.assert_array_equal([hinge, error], [hinge0, error0])
                np.testing.assert_array_equal(predictions, predictions0)


@pytest.mark.parametrize("kind", ["chain", "hashed_chain", "boxes"])
def test_parallel_evaluation_equals_serial_whatever_the_threads(kind):
    """Checkpoint evaluation runs in parts over the examples, one per evaluation thread
    (:mod:`ssvmbench.tasks.parts`); its means are summed in example order, so every thread
    count gives the serial loop's numbers to the last bit."""
    task = {"chain": lambda: make_task(random_chains(700, 4, 6, lengths=(1, 9), seed=1)),
            "hashed_chain": lambda: make_task(random_hashed_chains(700, 4, 6, 11,
                                                                   lengths=(1, 9), seed=1)),
            "boxes": lambda: make_task(load_scenes(n_train=300, n_test=1, size=32,
                                                   seed=1).train)}[kind]()
    w = np.random.default_rng(0).normal(size=task.d)
    results = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        results.append(task.evaluate(w))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for hinge, error, predictions in results[1:]:
        assert (hinge, error) == results[0][:2]
        for got, expected in zip(np.atleast_1d(predictions), np.atleast_1d(results[0][2])):
            np.testing.assert_array_equal(got, expected)
    if kind != "boxes":
        hinge, error, predictions = _serial_chain_evaluation(task, w)
        assert results[0][:2] == (hinge, error)
        np.testing.assert_array_equal(results[0][2], predictions)


def test_evaluation_threads_share_the_cores_among_a_sweeps_parallel_runs():
    cores = min(numba.config.NUMBA_NUM_THREADS, len(os.sched_getaffinity(0)))
    assert evaluation_threads() == cores
    assert evaluation_threads(parallel_jobs=cores) == 1
    assert evaluation_threads(parallel_jobs=4 * cores) == 1


class BLASThreadsSeen(BCFW):
    """BCFW noting the threads of every loaded BLAS library (and numba's) while it solves and
    while its iterates are measured."""

    name = "blas_threads_seen"
    seen = []

    def _note(self, when):
        blas = {info["filepath"]: info["num_threads"]
                for info in threadpool_info() if info["user_api"] == "blas"}
        self.seen.append((when, self.task.n, blas, numba.get_num_threads()))

    def advance(self, budget):
        self._note("solve")
        return super().advance(budget)

    def iterates(self):
        self._note("evaluate")
        return super().iterates()


def test_a_run_solves_and_evaluates_with_blas_on_one_thread(data_root, tmp_path,
                                                            monkeypatch):
    """OpenBLAS's workers spin for a while after a threaded call (the checkpoint's ``w @ w``)
    on the cores the evaluation's numba threads need: a run keeps BLAS on one thread (numpy's
    and scipy's libraries) through its timed loop, and numba's threads as they were."""
    monkeypatch.setitem(registered(), BLASThreadsSeen.name, BLASThreadsSeen)
    monkeypatch.setattr(BLASThreadsSeen, "seen", [])
    before = {info["filepath"]: info["num_threads"] for info in threadpool_info()}
    _, attrs = api.run([f"solver={BLASThreadsSeen.name}", "data=ocr", "+data.subset=0.05",
                        "lambda=0.01", "solver.passes=2"], tmp_path / "run")
    assert attrs["status"] == "finished"
    timed = [(when, blas, threads) for when, n, blas, threads in BLASThreadsSeen.seen
             if n > runner.WARM_UP_EXAMPLES]          # not the warm-up's (compiling)
    assert {when for when, _, _ in timed} == {"solve", "evaluate"}
    for when, blas, threads in timed:
        assert blas and set(blas.values()) == {1}, (when, blas)
        assert threads == evaluation_threads(), when
    after = {info["filepath"]: info["num_threads"] for info in threadpool_info()}
    assert {path: after[path] for path in before} == before     # restored after the run


def test_a_chain_task_subclass_with_its_own_evaluate_has_it_called_at_checkpoints():
    """A checkpoint evaluates a chain's iterates in one pass, unless a subclass overrides
    ``evaluate``: then its checkpoints call that for each iterate and split."""
    calls = []

    class Counted(ChainTask):
        def evaluate(self, w, with_hinge=True):
            calls.append(with_hinge)
            return super().evaluate(w, with_hinge)
    task = Counted(random_chains(30, 3, 6, lengths=(1, 5), seed=11))
    solver = make_solver("bcfw", task, 0.01, {"iterates": ["raw", "wavg"]}, 0)
    solver.run_until(task.n)
    rows = measure(solver, task, task)
    assert calls == [True, True, False, False]
    plain = ChainTask(task.dataset)
    assert rows["primal"] == measure(solver, plain, plain)["primal"]
