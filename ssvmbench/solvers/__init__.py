"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`: the built-in
ones below and those other installed packages register under the entry-point group
``ssvmbench.solvers`` (``NAME = "module:Class"``)."""

from functools import cache
from importlib.metadata import entry_points

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
    found = dict(SOLVERS)
    for point in entry_points(group=ENTRY_POINTS):
        where = f"solver plugin '{point.name}' ({point.value}, entry point {ENTRY_POINTS})"
        try:
            cls = point.load()
        except Exception as err:           # a plugin's import error, whatever it is
            raise UserError(f"{where} does not load: {type(err).__name__}: {err}") from None
        if not (isinstance(cls, type) and issubclass(cls, Solver)):
            raise UserError(f"{where} is not a subclass of ssvmbench.solvers.base.Solver")
        if cls.name != point.name or point.name in SOLVERS:
            raise UserError(f"{where}: its class is named '{cls.name}'; the entry point must "
                            f"carry that name, and not a built-in's ({sorted(SOLVERS)})")
        found[cls.name] = cls
    return found


def make_solver(name, task, lam, options, seed, oracle=None, l1=0.0):
    """Build solver ``name`` for ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (calling
    ``oracle``, an :class:`~ssvmbench.tasks.oracles.Oracle`, by default the max oracle);
    unknown names are refused with the list of valid ones."""
    solvers = registered()
    if name not in solvers:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(solvers)}")
    return solvers[name](task, lam, options, seed, oracle, l1)
