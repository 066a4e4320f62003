"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`: the built-in
ones below and those other installed packages register under the entry-point group
``ssvmbench.solvers`` (``NAME = "module:Class"``)."""

from functools import cache

from ssvmbench import plugins
from ssvmbench.errors import UserError
from ssvmbench.solvers.base import Solver
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.solvers.cutting_plane import CuttingPlane
from ssvmbench.solvers.fw import FW
from ssvmbench.solvers.l1_subgradient import L1Subgradient
from ssvmbench.solvers.online_eg import OnlineEG
from ssvmbench.solvers.sap import SAP
from ssvmbench.solvers.sgd import SGD, SSG
from ssvmbench.solvers.svrg import SCSVRG, SVRG

SOLVERS = {cls.name: cls for cls in (BCFW, CuttingPlane, FW, SGD, SSG, SVRG, SCSVRG, SAP,
                                      L1Subgradient, OnlineEG)}
ENTRY_POINTS = "ssvmbench.solvers"


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
    ``oracle``, an :class:`~ssvmbench.tasks.oracles.Oracle`, by default the max oracle);
    unknown names are refused with the list of valid ones."""
    return solver_class(name)(task, lam, options, seed, oracle, l1)


def solver_class(name):
    """The class of solver ``name`` (built-in or plugin); unknown names are refused with the
    list of valid ones."""
    solvers = registered()
    if name not in solvers:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(solvers)}")
    return solvers[name]


def is_built_in(cls):
    """Whether solver class ``cls`` is one of ssvmbench's own (not a plugin's)."""
    return SOLVERS.get(cls.name) is cls


def describe(cls):
    """``solver NAME``, and for a plugin where it comes from (its class, its entry point)."""
    if is_built_in(cls):
        return f"solver {cls.name}"
    return (f"solver {cls.name} (plugin {cls.__module__}:{cls.__qualname__}, entry point "
            f"{ENTRY_POINTS})")
