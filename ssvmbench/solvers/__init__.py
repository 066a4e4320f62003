"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`: the built-in
ones below and those other installed packages register under the entry-point group
``ssvmbench.solvers`` (``NAME = "module:Class"``), the objective they all minimize
(``objective``) and the result columns a solver asks for (``result_columns``). A new solver
goes here, or in a plugin. May import common, data and the tasks' seam (the task contract,
the registry, the kernel API and the oracle record), never a task's own module."""

from functools import cache

from ssvmbench.common import plugins
from ssvmbench.common.errors import Incompatible, UserError
from ssvmbench.solvers.base import ENTRY_POINTS, Solver, describe, is_built_in  # noqa: F401
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.solvers.cutting_plane import CuttingPlane
from ssvmbench.solvers.fw import FW
from ssvmbench.solvers.l1_subgradient import L1Subgradient
from ssvmbench.solvers.online_eg import OnlineEG
from ssvmbench.solvers.sap import SAP
from ssvmbench.solvers.sgd import SGD, SSG
from ssvmbench.solvers.svrg import SCSVRG, SVRG
from ssvmbench.tasks import registered as registered_tasks
from ssvmbench.tasks.oracle import Oracle

SOLVERS = {cls.name: cls for cls in (BCFW, CuttingPlane, FW, SGD, SSG, SVRG, SCSVRG, SAP,
                                      L1Subgradient, OnlineEG)}


@cache
def registered():
    """``{name: class}`` of the built-in solvers and of the installed plugins; a plugin that
    does not load, is not a :class:`Solver` or takes a built-in's name is refused by name."""
    return {**SOLVERS, **plugins.load(
        ENTRY_POINTS, "solver", SOLVERS,
        lambda cls: None if isinstance(cls, type) and issubclass(cls, Solver) else
        "is not a subclass of ssvmbench.solvers.base.Solver",
        lambda cls: cls.name)}


def make_solver(name, task, lam, options, seed, oracle=None, l1=0.0):
    """Build solver ``name`` for ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (calling
    ``oracle``, an :class:`~ssvmbench.tasks.oracle.Oracle`, by default the max oracle);
    unknown names are refused with the list of valid ones, a solver that cannot run on
    ``task`` with ``oracle`` and ``l1`` by :func:`check_compatible`."""
    cls = solver_class(name)
    check_compatible(cls, task, oracle or Oracle(), l1)
    return cls(task, lam, options, seed, oracle, l1)


def lacks(cls, task_class):
    """What task class ``task_class`` lacks for solver class ``cls``, in words (``""``:
    nothing): kernels it calls (``needs``), or any oracle it can call (``oracles``)."""
    missing = [k for k in cls.needs if k not in task_class.kernels]
    if missing:
        return f"the task lacks the kernels {missing}"
    if not set(cls.oracles) & set(task_class.oracles):
        return (f"the solver calls oracle={'|'.join(cls.oracles)}, the task offers "
                f"oracle={'|'.join(task_class.oracles)}")
    return ""


def runs_on(cls, task_class):
    """Whether solver class ``cls`` runs on task class ``task_class``: the task declares
    every kernel the solver needs and one of its oracles."""
    return not lacks(cls, task_class)


def task_kinds(cls):
    """The registered tasks (built-in and plugins) solver class ``cls`` runs on."""
    return [kind for kind, task in registered_tasks().items() if runs_on(cls, task)]


def check_compatible(cls, task, oracle, l1=0.0):
    """Raise :class:`~ssvmbench.common.errors.Incompatible`, saying why, when solver class ``cls``
    cannot run on ``task`` with ``oracle`` and the L1 weight ``l1``: from the declarations
    of both (the objective, the kernels, the oracles, the top-K tie order); the solvers and
    tasks a message lists come from the registries, plugins included."""
    where = f"{task.kind} tasks (data={task.dataset.name})"
    if l1 > 0 and not cls.elastic_net:
        elastic = sorted(name for name, other in registered().items() if other.elastic_net)
        raise Incompatible(f"solver {cls.name} minimizes the L2-regularized objective; "
                           f"l1={l1:g} > 0 (or rho1 > 0) needs solver={'|'.join(elastic)}")
    if not runs_on(cls, type(task)):
        raise Incompatible(f"solver {cls.name} runs on {' and '.join(task_kinds(cls))} "
                           f"tasks, not on {where}: {lacks(cls, type(task))}")
    if oracle.name not in cls.oracles:
        takers = sorted(name for name, other in registered().items()
                        if oracle.name in other.oracles and runs_on(other, type(task)))
        raise Incompatible(f"solver {cls.name} takes oracle={'|'.join(cls.oracles)}, not "
                           f"oracle={oracle.name}" + (
                               f" (oracle={oracle.name} goes with solvers "
                               f"{', '.join(takers)} on {task.kind} tasks)" if takers else ""))
    if oracle.name not in task.oracles:
        raise Incompatible(f"oracle={oracle.name} is intractable on {where} (Casimir "
                           f"Table 1): use oracle={'|'.join(task.oracles)}")
    if oracle.ties not in task.topk_ties:
        raise Incompatible(f"oracle.ties={oracle.ties} is not an order of the top-K "
                           f"oracle of {where}; it breaks ties as: {'|'.join(task.topk_ties)}")


def solver_class(name):
    """The class of solver ``name`` (built-in or plugin); unknown names are refused with the
    list of valid ones."""
    solvers = registered()
    if name not in solvers:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(solvers)}")
    return solvers[name]


