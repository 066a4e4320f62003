"""Solvers, all with the call shape of :class:`ssvmbench.solvers.base.Solver`."""

from ssvmbench.errors import UserError
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.solvers.fw import FW
from ssvmbench.solvers.ssg import SSG

SOLVERS = {cls.name: cls for cls in (BCFW, FW, SSG)}


def make_solver(name, task, lam, options, seed):
    """Build solver ``name``; unknown names are refused with the list of valid ones."""
    if name not in SOLVERS:
        raise UserError(f"unknown solver '{name}': choose one of {sorted(SOLVERS)}")
    return SOLVERS[name](task, lam, options, seed)
