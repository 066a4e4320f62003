"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`."""

from ssvmbench.errors import UserError
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.solvers.fw import FW
from ssvmbench.solvers.sgd import SGD, SSG
from ssvmbench.solvers.svrg import SCSVRG, SVRG

SOLVERS = {cls.name: cls for cls in (BCFW, FW, SGD, SSG, SVRG, SCSVRG)}


def make_solver(name, task, lam, options, seed, oracle=None):
    """Build solver ``name`` (calling ``oracle``, an :class:`~ssvmbench.tasks.oracles.Oracle`,
    by default the max oracle); unknown names are refused with the list of valid ones."""
    if name not in SOLVERS:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(SOLVERS)}")
    return SOLVERS[name](task, lam, options, seed, oracle)
