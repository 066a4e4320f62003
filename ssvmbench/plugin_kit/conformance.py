"""``ssvmbench check-solver NAME``: does a solver, built-in or plugin, keep the contract of
:class:`~ssvmbench.solvers.base.Solver` (in the spirit of ``benchopt test``)?

On the tiny instance (:meth:`Task.tiny <ssvmbench.tasks.base.Task.tiny>`) of every registered
task that declares the kernels the solver needs (a plugin task's included), it checks: the solver
builds with its defaults; ``run_until`` makes at least the oracle calls asked for and at most
three passes more, never fewer than before; the calls it reports are the calls it made (those
of the kernel API's oracles, counted in ``task.data.calls``; a solver whose oracle is not the
API's says so with ``kernel_oracles = False``); every logged iterate has ``d`` finite entries
and, for a solver with a dual, weak duality (primal - dual >= 0, BCFW Section 3) at every
checkpoint (the iterates that have one); a fixed seed
gives the same iterates whether the run stops at every pass or not (checkpoints must not
change a trajectory) and whether or not its state was saved and loaded (a stopped run
continues); and some iterate's objective falls below its value at ``w = 0``.

``--task NAME`` also runs the task's own checks against brute force first (the test kit,
:mod:`ssvmbench.plugin_kit.testing`), and checks the solver on that task only; ``check-solver --task
NAME`` without a solver runs the task's checks alone.
"""

import math
import os
import pickle

import numpy as np

from ssvmbench.common.errors import UserError, number
from ssvmbench.compiled import keyed_cache
from ssvmbench.plugin_kit.testing import task_checks
from ssvmbench.solvers import lacks, make_solver, solver_class, task_kinds
from ssvmbench.solvers.objective import Objective
from ssvmbench.tasks import registered
from ssvmbench.tasks.oracle import Oracle

LAM = 0.1
PASSES = 8              # checkpoints at every pass up to here
PROGRESS_PASSES = 40    # by then some iterate must beat w = 0 (SSG's first steps are long)
SEED = 0


def tiny_tasks(kinds=None):
    """``{kind: training task}``: the tiny instance of each registered task (of ``kinds``)."""
    return {kind: cls.tiny() for kind, cls in registered().items()
            if kinds is None or kind in kinds}


def smooth_oracle(cls, task):
    """The first oracle the solver and the task both take (top-K with K = 3, mu = 0.5; exp
    with mu = 0.5)."""
    name = next((o for o in cls.oracles if o in task.oracles), cls.oracles[0])
    return Oracle(name, 3 if name == "topk" else 1, 0.0 if name == "max" else 0.5)


def primal(task, lam, w):
    return Objective(lam).primal(w, task.evaluate(w)[0])


def check_on(cls, task, options):
    """``[(check, None or the failure)]`` for solver class ``cls`` on ``task``."""
    results = []

    def build():
        return make_solver(cls.name, task, LAM, dict(options), SEED, smooth_oracle(cls, task))
    try:
        solver = build()
    except UserError as err:
        return [("builds with its defaults", str(err))]
    results.append(("builds with its defaults", None))
    n, start = task.n, primal(task, LAM, np.zeros(task.d))
    failures = {"oracle calls": None, "counted": None, "iterates": None, "weak duality": None}
    lowest = math.inf
    task.data.calls[0] = 0
    for p in range(1, PASSES + 1):
        before = solver.oracle_calls
        solver.run_until(p * n)
        calls = solver.oracle_calls
        if not (calls >= before and (calls >= p * n or solver.converged)
                and calls <= p * n + 3 * n):
            failures["oracle calls"] = failures["oracle calls"] or (
                f"asked for {p * n} calls, reports {calls} (before: {before})")
        if cls.kernel_oracles and task.data.calls[0] != calls:
            failures["counted"] = failures["counted"] or (
                f"after {p} passes it reports {calls} oracle calls, the kernels counted "
                f"{task.data.calls[0]}")
        for name, w, dual in solver.iterates():
            if w.shape != (task.d,) or not np.isfinite(w).all():
                failures["iterates"] = failures["iterates"] or (
                    f"iterate {name} after {p} passes: shape {w.shape}, d = {task.d}, "
                    f"finite: {bool(np.isfinite(w).all())}")
                continue
            value = primal(task, LAM, w)
            lowest = min(lowest, value)
            if not math.isnan(dual) and not value - dual >= -1e-9 * (1 + abs(value)):
                failures["weak duality"] = failures["weak duality"] or (
                    f"iterate {name} after {p} passes: primal {value:.6g} < dual {dual:.6g}")
    results.append(("run_until(k n) makes k n to k n + 3 n oracle calls",
                    failures["oracle calls"]))
    if cls.kernel_oracles:
        results.append(("the oracle calls it reports are the calls it made",
                        failures["counted"]))
    results.append((f"iterates: d = {task.d} finite entries", failures["iterates"]))
    if cls.has_dual:
        results.append(("weak duality: primal - dual >= 0", failures["weak duality"]))
    again = build()
    again.run_until(PASSES * n)
    same = all(a[0] == b[0] and np.array_equal(a[1], b[1])
               for a, b in zip(solver.iterates(), again.iterates()))
    results.append(("same seed, same iterates with or without checkpoints",
                    None if same else "iterates differ between the two runs"))
    resumed = build()
    resumed.load_state(pickle.loads(pickle.dumps(again.state_dict())))
    for solver_ in (again, resumed):
        solver_.run_until(2 * PASSES * n)
    same = all(a[0] == b[0] and np.array_equal(a[1], b[1])
               for a, b in zip(again.iterates(), resumed.iterates()))
    results.append(("a saved and loaded state continues the same run",
                    None if same else "iterates differ after load_state"))
    for p in range(2 * PASSES, PROGRESS_PASSES + 1, PASSES):
        solver.run_until(p * n)
        lowest = min([lowest] + [primal(task, LAM, w) for _, w, _ in solver.iterates()])
    results.append((f"an iterate's objective falls below its value at w = 0 within "
                    f"{PROGRESS_PASSES} passes", None if lowest < start else
                    f"lowest primal {lowest:.6g} >= {start:.6g}"))
    return results


def _checked(cls, task, options):
    """:func:`check_on`, with an exception on the way as one failed check."""
    try:
        return check_on(cls, task, options)
    except Exception as err:      # the solver raised, or broke the contract on the way
        if os.environ.get("SSVMBENCH_DEBUG"):
            raise
        return [("runs its checks without raising", f"{type(err).__name__}: {err} "
                 "(SSVMBENCH_DEBUG=1 shows the traceback)")]


def parse_options(pairs):
    """``["key=value", ...]`` as solver options (numbers where they read as numbers)."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.removeprefix("solver.")
        if not sep or not key:
            raise UserError(f"option '{pair}': write solver.KEY=VALUE")
        try:
            options[key] = number(key, value)
        except UserError:
            options[key] = value
    return options


def configure_parser(parser):
    parser.add_argument("solver", metavar="NAME", nargs="?",
                        help="a built-in or plugin solver (optional with --task)")
    parser.add_argument("options", nargs="*", metavar="solver.KEY=VALUE",
                        help="options a solver needs beyond its defaults "
                             "(e.g. solver.epsilon=5 for l1_subgradient)")
    parser.add_argument("--task", metavar="TASK",
                        help="check this task's kernels against brute force on its tiny "
                             "instance (ssvmbench.plugin_kit.testing), and the solver on it only")


def print_results(kind, results):
    """Print one line per check; returns the number that failed."""
    for check, failure in results:
        print(f"{kind:13s} {'ok  ' if failure is None else 'FAIL'} {check}"
              + (f": {failure}" if failure else ""))
    return sum(failure is not None for _, failure in results)


def check_task(kind):
    """The test kit on task ``kind``; returns the number of failed checks."""
    failed = print_results(kind, task_checks(registered()[kind]))
    print(f"task {kind}: " + (f"{failed} check(s) failed" if failed else "every check passed"))
    return failed


def main(args):
    if args.solver is None and args.task is None:
        raise UserError("check-solver: name a solver, a task (--task NAME) or both")
    if args.task is not None and args.task not in registered():
        raise UserError(f"--task {args.task}: no such task; the installed tasks are "
                        f"{sorted(registered())}")
    failed = check_task(args.task) if args.task else 0
    if args.solver is not None:
        failed += check_solver(args)
    return 1 if failed else 0


def check_solver(args):
    """The solver's checks on the tasks it runs on (``--task``: that one), with a line naming
    what each task it leaves out lacks; returns the number of failed checks."""
    cls = solver_class(args.solver)
    options = parse_options(args.options)
    keyed_cache.use()
    kinds = [k for k in task_kinds(cls) if args.task in (None, k)]
    failed = 0
    for kind, task_class in registered().items():
        if kind not in kinds and args.task in (None, kind):
            print(f"{kind:13s} n/a  not run: {lacks(cls, task_class)}")
    for kind in kinds:
        try:
            task = registered()[kind].tiny()
        except Exception as err:      # a task plugin whose tiny instance does not build
            if os.environ.get("SSVMBENCH_DEBUG"):
                raise
            results = [("the task's tiny instance builds", f"{type(err).__name__}: {err} "
                        "(a task's fault, not the solver's; SSVMBENCH_DEBUG=1 shows the "
                        "traceback)")]
        else:
            results = _checked(cls, task, options)
        failed += print_results(kind, results)
        if not cls.kernel_oracles:
            print(f"{kind:13s} n/a  the oracle calls it reports are the calls it made: its "
                  "oracle is not the kernel API's (kernel_oracles = False), so not counted")
    print(f"solver {cls.name}: " + (f"{failed} check(s) failed" if failed else
                                    "every check passed"))
    return failed
