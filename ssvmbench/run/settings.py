"""A run's settings read once from its composed config (:func:`read`, a
:class:`RunSettings`) and checked before any data are loaded: the objective's parameters
(BCFW eq. 3's ``lambda``, SAP OP5's ``C``, ``rho1``, ``rho2``), the oracle (Casimir
Definition 1), the seed, the passes and the option names."""

import dataclasses
import math
import numbers
import re

from omegaconf import OmegaConf

from ssvmbench.common import hydra_internals
from ssvmbench.common.errors import UserError, number
from ssvmbench.data import check_options as check_data_options
from ssvmbench.solvers import make_solver, solver_class
from ssvmbench.tasks.oracle import Oracle

_PER_N = re.compile(r"^\s*(?:(\d*\.?\d+(?:[eE][-+]?\d+)?)\s*/\s*n|inv_n)\s*$")


def resolve_lambda(spec, n, name="lambda", allow_zero=False):
    """``lambda`` (or ``l1``) as given on the command line -> a number; ``1/n``, ``inv_n`` and
    ``C/n`` select ``C/n`` for the training-set size ``n`` (BCFW uses 1/n for CoNLL)."""
    if isinstance(spec, str):
        match = _PER_N.match(spec)
        if match:
            return float(match.group(1) or 1.0) / n
        try:
            spec = float(spec)
        except ValueError:
            raise UserError(f"{name}={spec} is not a number; give e.g. {name}=0.01, "
                            f"{name}=1/n or {name}=inv_n") from None
    number_given = isinstance(spec, (int, float)) and not isinstance(spec, bool)
    if (not number_given or not math.isfinite(spec)
            or not (spec >= 0 if allow_zero else spec > 0)):
        kind = "non-negative" if allow_zero else "positive"
        raise UserError(f"{name}={spec} must be a finite {kind} number (or 1/n, inv_n)")
    return float(spec)


@dataclasses.dataclass(frozen=True)
class ObjectiveSetting:
    """The objective ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` as configured, before
    the data give ``n``: either ``lam`` and ``l1`` (numbers, or ``C/n`` specs resolved by
    :meth:`at`), or SAP's ``C``, ``rho1``, ``rho2`` (OP5: ``rho1 ||w||_1 + rho2/2 ||w||^2 +
    C sum_i xi_i``, divided by ``C n``). The objective itself, with numbers, is
    :class:`ssvmbench.solvers.objective.Objective`."""

    lam: object = 0.01
    l1: object = 0.0
    C: float | None = None
    rho1: float = 0.0
    rho2: float = 1.0
    spec: str = "0.01"          # as given: the log's ``lambda_spec``

    def at(self, n):
        """``(lam, l1)`` for the training-set size ``n``: ``lam = rho2 / (C n)``, ``l1 =
        rho1 / (C n)`` with SAP's parameters."""
        if self.C is not None:
            return self.rho2 / (self.C * n), self.rho1 / (self.C * n)
        return (resolve_lambda(self.lam, n),
                resolve_lambda(self.l1, n, "l1", allow_zero=True))


def objective(cfg):
    """The :class:`ObjectiveSetting` of ``cfg``: ``lambda`` (default 0.01) and ``l1`` (default
    0), or SAP's ``C``, ``rho1``, ``rho2`` with ``rho2 = 1 - rho1`` by default as in SAP
    Section V; bad values refused in one line (a ``C/n`` spec's syntax too)."""
    C, rho1, rho2 = cfg.get("C"), cfg.get("rho1"), cfg.get("rho2")
    spec = str(cfg["lambda"] if C is None else f"C={C} rho1={rho1} rho2={rho2}")
    if C is None:
        if rho1 is not None or rho2 is not None:
            raise UserError("rho1= and rho2= go with C= (SAP's parameters); give C too, or use "
                            "lambda= and l1=")
        given = ObjectiveSetting(0.01 if cfg["lambda"] is None else cfg["lambda"],
                          0.0 if cfg.l1 is None else cfg.l1, spec=spec)
        given.at(1)
        return given
    if cfg["lambda"] is not None or cfg.l1 is not None:
        raise UserError("give either lambda= / l1= or SAP's C= / rho1= / rho2=, not both")
    C = number("C", C)
    rho1 = 0.0 if rho1 is None else number("rho1", rho1)
    rho2 = 1.0 - rho1 if rho2 is None else number("rho2", rho2)
    if not (C > 0 and rho1 >= 0 and rho2 > 0):
        raise UserError(f"C={C}, rho1={rho1}, rho2={rho2}: need C > 0, rho1 >= 0 and rho2 > 0 "
                        "(rho2 defaults to 1 - rho1)")
    return ObjectiveSetting(None, None, C, rho1, rho2, spec)


def resolve_objective(cfg, n):
    """``(lam, l1)`` of ``cfg``'s objective for ``n`` training examples (:func:`objective`)."""
    return objective(cfg).at(n)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """One run's configuration, read and checked once (:func:`read`): what the runner, the
    solver's builder and the provenance take, instead of the composed config."""

    solver: str
    solver_options: dict        # the solver's own options (not its name and passes)
    passes: float
    data: str
    data_options: dict          # the loader's keyword arguments (``root``, ``subset``, ...)
    loss: str
    seed: int
    objective: ObjectiveSetting
    oracle: Oracle
    eval: dict                  # the checkpoints: every, log_start, per_decade
    stop: dict                  # gap, time_s (None: not a reason to stop)
    resume: dict                # every_s, max_overhead
    save_weights: bool

    def data_root(self):
        """The ``data.root`` setting, or None (then ``SSVMBENCH_DATA_DIR`` and the default)."""
        return self.data_options.get("root")

    def solver_on(self, task, lam, l1):
        """The solver of these settings on ``task`` (its options' values checked)."""
        return make_solver(self.solver, task, lam, self.solver_options, self.seed,
                           self.oracle, l1)


def read(cfg):
    """The :class:`RunSettings` of the composed config ``cfg``; a bad setting is refused in
    one line before any data are loaded: the seed, the passes, the objective's parameters
    (their syntax; ``1/n`` is resolved with the data), the oracle, the stops, and the names
    of the solver's and the dataset's options (``+solver.pases=5`` would otherwise be
    ignored); the options' values are checked when the solver is built."""
    missing = sorted(missing_keys(cfg))
    if missing:
        raise UserError(f"{', '.join(missing)} must be given (e.g. {missing[0]}=VALUE)")
    if "experiment" in cfg:
        raise UserError("presets are not run configs: run `ssvmbench reproduce NAME` "
                        "(`ssvmbench reproduce` lists them), not `run +experiment=NAME`")
    solver_options = OmegaConf.to_container(cfg.solver, resolve=True)
    name, passes = solver_options.pop("name"), solver_options.pop("passes")
    solver_class(name).check_option_names(list(solver_options))
    data_options = OmegaConf.to_container(cfg.data, resolve=True)
    data = data_options.pop("name")
    check_data_options(data, list(data_options))
    stop = OmegaConf.to_container(cfg.stop, resolve=True)
    for key in ("gap", "time_s"):
        if stop[key] is not None and not number(f"stop.{key}", stop[key]) > 0:
            raise UserError(f"stop.{key}={stop[key]} must be positive (or null)")
    return RunSettings(
        solver=name, solver_options=solver_options, passes=check_passes(passes),
        data=data, data_options=data_options, loss=cfg.loss, seed=check_seed(cfg.seed),
        objective=objective(cfg), oracle=oracle(cfg),
        eval=OmegaConf.to_container(cfg.eval, resolve=True), stop=stop,
        resume=OmegaConf.to_container(cfg.resume, resolve=True),
        save_weights=bool(cfg.get("save_weights", True)))


_ENV_ONLY = re.compile(r"\$\{oc\.env:[^${}]*\}")   # a string or None, never a config


def missing_keys(cfg):
    """``OmegaConf.missing_keys(cfg)`` (the full keys whose value is ``???``), without
    resolving every value to see whether it is a config: only an interpolation is resolved
    (it may lead to one; ``${oc.env:…}`` never does: ``data.root``), so that checking a
    sweep's thousands of runs costs little."""
    found = set()

    def gather(node):
        keys = range(len(node)) if OmegaConf.is_list(node) else list(node.keys())
        for key in keys:
            child = hydra_internals.child(node, key)
            if hydra_internals.is_missing(child):
                found.add(hydra_internals.full_key(node, key))
            elif OmegaConf.is_config(child) and not hydra_internals.is_interpolation(child):
                gather(child)
            elif (hydra_internals.is_interpolation(child)
                  and not _ENV_ONLY.fullmatch(str(hydra_internals.value(child)))
                  and OmegaConf.is_config(node[key])):
                gather(node[key])

    gather(cfg)
    return found


def check_seed(seed, name="seed"):
    """``seed`` as an int, or one line: a whole number in [0, 2**63)."""
    if (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
            or not 0 <= seed < 2**63):
        raise UserError(f"{name}={seed} must be a whole number in [0, 2**63)")
    return int(seed)


def check_passes(passes, name="solver.passes"):
    """``passes`` as a float, or one line: a finite number > 0."""
    value = number(name, passes)
    if not value > 0:
        raise UserError(f"{name}={passes} must be > 0")
    return value


def oracle(cfg):
    """The configured :class:`~ssvmbench.tasks.oracle.Oracle` (unknown keys refused)."""
    given = OmegaConf.to_container(cfg.oracle, resolve=True)
    known = [f.name for f in dataclasses.fields(Oracle)]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UserError(f"oracle.{unknown[0]}: not an oracle setting; they are {known}")
    return Oracle(**given)
