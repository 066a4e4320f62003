"""The call shape every solver shares (in the spirit of benchopt / copt).

A solver is built from a task, the regularization ``lam`` (and ``l1``) of the objective
``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (BCFW eq. 3; SAP's elastic net OP5 divided
by ``C n``), its options and a seed; it advances with :meth:`run_until` (a number of oracle
calls, run in compiled code) and exposes its iterates for the monitor.

Adding a solver: a subclass that sets the class attributes below (its name, options with their
defaults, capability flags) and implements :meth:`Solver.advance` and :meth:`Solver.state`;
its config (``solver=NAME``) is :meth:`Solver.default_config`. Built-ins are listed in
:mod:`ssvmbench.solvers` (with a commented ``configs/solver/NAME.yaml`` equal to that config);
another package registers its own through the entry-point group ``ssvmbench.solvers``
(docs/guide/plugins.md). Compiled steps call the task kernels of
:mod:`ssvmbench.tasks.kernels`, and take the problem as one named :class:`Problem`; a solver
declares the kernels it calls (``needs``) and the oracles it can call (``oracles``), and runs
on every task that declares those kernels and one of those oracles
(:func:`ssvmbench.solvers.check_compatible`).
"""

from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np

from ssvmbench.common.errors import PluginError, UserError, number
from ssvmbench.solvers.averaging import Averages
from ssvmbench.solvers.objective import Objective
from ssvmbench.tasks.base import CORE_KERNELS
from ssvmbench.tasks.oracle import Oracle

IDLE_STEPS = 10_000     # advance() calls in a row without an oracle call: no progress


class Problem(NamedTuple):
    """What every compiled step takes of the task and the objective (:attr:`Solver.problem`):
    the task's ``dims``, ``data`` and ``normalized`` (:class:`~ssvmbench.tasks.base.Task`)
    and the regularization ``lam``."""

    dims: tuple
    data: tuple
    normalized: bool
    lam: float


class Solver(ABC):
    """Base class: option checking, sampling order, averaged-iterate storage."""

    name = ""
    passes = 50              # effective passes of a run by default (solver.passes)
    has_dual = True          # does the solver keep a dual iterate (objective D(alpha))?
    options = {}             # option -> allowed values (first = default)
    numbers = {}             # numeric option -> default (None: the solver derives it)
    oracles = ("max",)       # the oracles (ssvmbench.tasks.oracle.KINDS) it can call
    default_iterates = ("raw", "wavg")
    keeps_best = False       # batch solvers: may log "best", the iterate with the lowest primal
    averages_iterates = True # may it keep averaged iterates (avg, wavg, tavg)? (False: raw only)
    elastic_net = False      # may it run with l1 > 0 (elastic-net objective logged)?
    shows = ()               # result columns shown beside the primal wherever its results
                             # are (ssvmbench.solvers.result_columns: nnz, l1, rho1)
    needs = CORE_KERNELS     # the task kernels it calls (ssvmbench.tasks.base.KERNEL_NAMES)
    kernel_oracles = True    # are its oracle calls the kernel API's (example_oracle, decode),
                             # which count them in task.data.calls (check-solver compares)?

    @classmethod
    def default_config(cls):
        """The ``solver`` config of ``solver=NAME``: name, passes, every option at its default
        and the default iterates."""
        return {"name": cls.name, "passes": cls.passes,
                **{key: allowed[0] for key, allowed in cls.options.items()},
                **cls.numbers, "iterates": list(cls.default_iterates)}

    def __init__(self, task, lam, options, seed, oracle=None, l1=0.0):
        self.task = task
        self.lam = float(lam)
        self.l1 = float(l1)
        self.objective = Objective(self.lam, self.l1)
        self.oracle = oracle or Oracle()
        self.opts = self._check_options(dict(options))
        self.rng = np.random.default_rng(seed)
        self.iterate_names = list(self.opts.pop("iterates", self.default_iterates))
        self.averages = Averages(self._averaged(self.iterate_names), self.averaged_size())
        self.best_w, self.best_primal = None, np.inf
        self.converged = False   # set when the solver's own stopping rule holds
        self.oracle_calls = 0
        self.steps = 0
        self._order = np.zeros(0, dtype=np.int64)
        self._pos = 0
        self._replay = read_order(self.opts.pop("order", None), task.n)
        self._replayed = 0

    @property
    def problem(self):
        """The :class:`Problem` its compiled steps take (built on demand: not saved)."""
        t = self.task
        return Problem(t.dims, t.data, t.normalized, self.lam)

    @property
    def method(self):
        """Name for plots: the solver and its non-default options (e.g. bcfw-predefined)."""
        parts = [self.name] + [str(self.opts[key]) for key, allowed in self.options.items()
                               if self.opts[key] != allowed[0]]
        parts += [f"{key}={self.opts[key]:g}" for key, default in self.numbers.items()
                  if self.opts[key] is not None and self.opts[key] != default]
        return "-".join(parts + self.oracle.label())

    @classmethod
    def check_option_names(cls, given):
        """Refuse an option the solver does not have, naming those it has (``order``: a
        solver that samples examples, :meth:`next_indices`)."""
        known = {*cls.options, *cls.numbers, "iterates", *(["order"] if cls.samples() else [])}
        unknown = sorted(set(given) - known)
        if unknown:
            raise UserError(f"solver.{unknown[0]}: not an option of solver {cls.name}; its "
                            f"options: {sorted([*known, 'passes'])}")

    @classmethod
    def samples(cls):
        """Does it draw its examples with :meth:`next_indices` (``solver.sampling``)? Then
        ``+solver.order=FILE`` replays a given order instead."""
        return "sampling" in cls.options

    def _check_options(self, given):
        self.check_option_names(given)
        for key, allowed in self.options.items():
            value = given.setdefault(key, allowed[0])
            if value not in allowed:
                raise UserError(
                    f"solver.{key}={value} is not valid for solver {self.name}: "
                    f"choose one of {list(allowed)}"
                )
        for key, default in self.numbers.items():
            given[key] = number(f"solver.{key}", given.get(key, default), allow_none=True)
        return given

    def _averaged(self, names):
        """The names handed to :class:`Averages`: without ``best`` where the solver keeps it;
        averaged names refused where the solver has no averages."""
        kept = [x for x in names if not (self.keeps_best and x == "best")]
        if not self.averages_iterates and set(kept) - {"raw"}:
            allowed = ["raw"] + ["best"] * self.keeps_best
            raise UserError(f"solver.iterates={names} is invalid for solver {self.name}: "
                            f"choose from {allowed}")
        return kept

    def offer_best(self, w, primal):
        """Keep ``w`` as the best iterate if its (exactly computed) primal is the lowest so
        far: the lower envelope drawn for batch methods in BCFW Figure 1 (Appendix F)."""
        if "best" in self.iterate_names and primal < self.best_primal:
            self.best_primal = primal
            self.best_w = w.copy()

    def next_indices(self, budget):
        """Up to ``budget`` example indices, drawn a whole pass at a time so that the
        sampling sequence does not depend on where checkpoints fall; with
        ``+solver.order=FILE``, the file's indices in turn instead (:func:`read_order`)."""
        if self._pos == len(self._order):
            n = self.task.n
            if self._replay is not None:
                self._order = self._replay[self._replayed:self._replayed + n]
                self._replayed += len(self._order)
                if len(self._order) == 0:
                    raise UserError(f"solver.order: its {len(self._replay)} example indices "
                                    f"are used up after {self._replayed / n:g} passes; give "
                                    "a longer order or fewer solver.passes")
            elif self.opts.get("sampling") == "permutation":
                self._order = self.rng.permutation(n)
            else:
                self._order = self.rng.integers(0, n, size=n)
            self._pos = 0
        chunk = self._order[self._pos:self._pos + budget]
        self._pos += len(chunk)
        return chunk

    def state_dict(self):
        """Everything that decides the rest of the run (every attribute but the task): saved
        beside the run log so that a stopped run continues exactly where it stopped."""
        return {key: value for key, value in vars(self).items() if key != "task"}

    def load_state(self, state):
        """Continue from a :meth:`state_dict` of a solver built with the same settings."""
        vars(self).update(state)

    def run_until(self, oracle_calls):
        """Advance until at least ``oracle_calls`` oracle calls have been made. A step may
        make no oracle call (the cutting plane's cached constraints), but
        :data:`IDLE_STEPS` of them in a row mean no progress (a run would loop forever), and
        a count that is not a whole number >= 0 breaks the contract: both are refused."""
        idle = 0
        while self.oracle_calls < oracle_calls and not self.converged:
            made = self.advance(oracle_calls - self.oracle_calls)
            if isinstance(made, bool) or not isinstance(made, (int, np.integer)) or made < 0:
                raise PluginError(f"{self._described()}: advance() returned {made!r}, not the "
                                  "number of oracle calls it made (an int >= 0)")
            idle = idle + 1 if made == 0 else 0
            if idle >= IDLE_STEPS:
                raise PluginError(f"{self._described()}: advance() returned 0 oracle calls "
                                  f"{IDLE_STEPS} times in a row without converging; it must "
                                  "make oracle calls, else a run makes no progress")
            self.oracle_calls += int(made)

    def _described(self):
        return describe(type(self))

    def averaged_size(self):
        """Length of the vector whose averages are kept (the weights, by default)."""
        return self.task.d

    @abstractmethod
    def advance(self, budget) -> int:
        """Run compiled steps using at most ``budget`` oracle calls (at least one
        step); return the number of calls made."""

    @abstractmethod
    def state(self):
        """``(a, v, ell)`` with the raw iterate ``w = a v``; ``ell`` (= b^T alpha) is NaN
        without a dual."""

    def average(self, j):
        """``(w̄, ell̄)`` of the ``j``-th averaged iterate."""
        return self.averages.materialize(j, self.state()[1])

    def current(self):
        """``(w, ell)`` of the raw iterate."""
        a, v, ell = self.state()
        return (v if a == 1.0 else a * v), ell

    def iterates(self):
        """``[(name, w, dual objective or NaN)]`` for every logged iterate (``best`` last,
        without a dual)."""
        pairs = [self.current()] + [self.average(j) for j in range(len(self.averages.kinds))]
        for name, (vec, _) in zip(self._averaged(self.iterate_names), pairs):
            if getattr(vec, "shape", None) != (self.task.d,):
                raise PluginError(f"{self._described()}: iterate {name} has shape "
                                  f"{getattr(vec, 'shape', type(vec).__name__)}, not "
                                  f"({self.task.d},) (state() must give w = a v with d "
                                  "entries)")
        out = [
            (name, vec, self.objective.dual(vec, e) if self.has_dual else np.nan)
            for name, (vec, e) in zip(self._averaged(self.iterate_names), pairs)
        ]
        if self.keeps_best and "best" in self.iterate_names:
            out.append(("best", self.current()[0] if self.best_w is None else self.best_w,
                        np.nan))
        return out


def read_order(path, n):
    """The example indices of ``+solver.order=FILE`` (None: not given): whitespace-separated
    integers in ``0..n-1``, visited in turn instead of the solver's own draws (the same run as
    another code's, given the order it drew). A solver that runs past its end stops with an
    error."""
    if path is None:
        return None
    try:
        order = np.loadtxt(path, dtype=np.int64, ndmin=1)
    except (OSError, ValueError) as err:
        raise UserError(f"solver.order={path}: cannot read example indices ({err})") from None
    if order.ndim != 1 or len(order) == 0 or order.min() < 0 or order.max() >= n:
        raise UserError(f"solver.order={path}: give whitespace-separated example indices in "
                        f"0..{n - 1} (the training set has n = {n})")
    return order


ENTRY_POINTS = "ssvmbench.solvers"    # the entry-point group of solver plugins


def is_built_in(cls):
    """Whether solver class ``cls`` is one of ssvmbench's own (defined in
    ``ssvmbench.solvers``), not a plugin's."""
    return cls.__module__.startswith("ssvmbench.solvers.")


def describe(cls):
    """``solver NAME``, and for a plugin where it comes from (its class, its entry point)."""
    if is_built_in(cls):
        return f"solver {cls.name}"
    return (f"solver {cls.name} (plugin {cls.__module__}:{cls.__qualname__}, entry point "
            f"{ENTRY_POINTS})")
