"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`."""

from ssvmbench.errors import UserError
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


def make_solver(name, task, lam, options, seed, oracle=None, l1=0.0):
    """Build solver ``name`` for ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (calling
    ``oracle``, an :class:`~ssvmbench.tasks.oracles.Oracle`, by default the max oracle);
    unknown names are refused with the list of valid ones."""
    if name not in SOLVERS:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(SOLVERS)}")
    return SOLVERS[name](task, lam, options, seed, oracle, l1)
