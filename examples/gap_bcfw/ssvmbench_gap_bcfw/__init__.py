"""BCFW with gap sampling: an ssvmbench solver plugin (Osokin, Alayrac, Lukasewitz, Dokania and
Lacoste-Julien, "Minding the gaps for block Frank-Wolfe optimization of structured SVMs",
ICML 2016, Section 3; their code: aosokin/gapBCFW, ``solvers/solver_BCFW_hybrid.m`` and
``solvers/onePass_BCFW_hybrid.m``, the plain variant ``sample='gap'``, ``stepType=1``,
``useCache=0``).

BCFW (Lacoste-Julien et al. 2013, Algorithm 4) picks block ``i`` with probability
proportional to its last computed Frank-Wolfe gap ``g_i`` (to the power ``gap_degree``)
instead of uniformly. A block's gap is the one computed when it was last visited, before its
step; the first pass visits every block once in order (the authors start from infinite gaps);
every ``gap_check`` passes, one full pass of oracle calls at fixed ``w`` refreshes all gaps
(counted as one effective pass, as the authors count it). The steps are ssvmbench's own BCFW
block steps (:func:`ssvmbench.solvers.bcfw.block_step`); sampling uses a sum tree, so a draw
and an update cost ``O(log n)``.
"""

import numba as nb
import numpy as np

from ssvmbench.solvers.bcfw import BCFW, block_gap, block_step
from ssvmbench.tasks.kernels import scratch


@nb.njit(cache=True)
def tree_set(tree, i, value):
    """Leaf ``i`` of the sum tree ``tree`` (leaves in its second half) to ``value``."""
    j = len(tree) // 2 + i
    tree[j] = value
    j //= 2
    while j >= 1:
        tree[j] = tree[2 * j] + tree[2 * j + 1]
        j //= 2


@nb.njit(cache=True)
def tree_draw(tree, u, n):
    """The leaf whose cumulative weight interval holds ``u * total`` (``0 <= u < 1``)."""
    size = len(tree) // 2
    target = u * tree[1]
    j = 1
    while j < size:
        if target < tree[2 * j] or tree[2 * j + 1] <= 0.0:
            j = 2 * j
        else:
            target -= tree[2 * j]
            j = 2 * j + 1
    return min(j - size, n - 1)


@nb.njit(cache=True)
def gap_steps(problem, dual, blocks, k, avg, max_len, tree, degree, order, draws):
    """BCFW block steps with line search on the blocks ``order`` or, if it is empty, on blocks
    drawn with the uniform numbers ``draws`` from the gaps in ``tree``; each visited block's
    gap replaces its weight. ``problem``, ``dual``, ``avg``: the named records of
    :func:`ssvmbench.solvers.bcfw.block_step`. Returns ``(k, blocks)``."""
    work = scratch(problem.dims, problem.data, max_len)
    n = len(problem.data[0]) - 1
    steps = len(order) if len(order) else len(draws)
    for s in range(steps):
        i = order[s] if len(order) else tree_draw(tree, draws[s], n)
        gap, k, blocks = block_step(problem, dual, blocks, i, True, k, avg, work)
        tree_set(tree, i, max(gap, 0.0) ** degree)
    return k, blocks


@nb.njit(cache=True)
def refresh_gaps(problem, dual, blocks, max_len, tree, degree):
    """Every block's gap at the current ``w`` (n oracle calls, no step)."""
    work = scratch(problem.dims, problem.data, max_len)
    for i in range(len(problem.data[0]) - 1):
        gap = block_gap(problem, dual, blocks, i, work)[0]
        tree_set(tree, i, max(gap, 0.0) ** degree)


class GapBCFW(BCFW):
    """BCFW with line search and gap sampling."""

    name = "gap_bcfw"
    options = {}
    numbers = {"gap_check": 10, "gap_degree": 1.0}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        super().__init__(task, lam, options, seed, oracle, l1)
        size = 1 << max(task.n - 1, 1).bit_length()
        self.tree = np.zeros(2 * size)
        self.visits = 0            # block steps since the last full gap pass
        self.period = int(self.opts["gap_check"]) * task.n

    def advance(self, budget):
        n, max_len, degree = self.task.n, self.task.max_len, self.opts["gap_degree"]
        if self.visits >= self.period:
            refresh_gaps(self.problem, self.dual, self.blocks, max_len, self.tree, degree)
            self.visits = 0
            return n
        if self.steps < n:          # the first pass: every block once, in order
            order = np.arange(self.steps, min(n, self.steps + budget))
            draws = np.zeros(0)
        else:
            if self.tree[1] <= 0.0:  # every block gap is zero: the dual is optimal
                self.converged = True
                return 0
            order = np.zeros(0, dtype=np.int64)
            draws = self.rng.random(min(budget, self.period - self.visits))
        self.steps, self.blocks = gap_steps(self.problem, self.dual, self.blocks, self.steps,
                                            self.averages.arrays(), max_len, self.tree, degree,
                                            order, draws)
        taken = len(order) + len(draws)
        self.visits += taken
        return taken
