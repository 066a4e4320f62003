"""Checkpoint schedule and the lambda specification."""

import pytest

from ssvmbench.errors import UserError
from ssvmbench.monitor import schedule
from ssvmbench.runner import resolve_lambda


def test_schedule_every_pass_and_final_point():
    assert schedule(3, 1.0) == [1.0, 2.0, 3.0]
    assert schedule(2.5, 1.0) == [1.0, 2.0, 2.5]
    assert schedule(1, 0.25) == [0.25, 0.5, 0.75, 1.0]


def test_schedule_log_spaced_start():
    points = schedule(2, 1.0, log_start=0.01, per_decade=2)
    assert [round(p, 4) for p in points] == [0.01, 0.0316, 0.1, 0.3162, 1.0, 2.0]


@pytest.mark.parametrize("args,fragment", [
    ((-1, 1.0), "solver.passes=-1"),
    ((3, 0), "eval.every=0"),
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
    from ssvmbench.data.synthetic import random_chains
    from ssvmbench.monitor import measure
    from ssvmbench.solvers import make_solver
    from ssvmbench.tasks.chain import ChainTask

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
