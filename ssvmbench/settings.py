"""A run's settings read from its config and checked before any data are loaded: the
objective's parameters (BCFW eq. 3's ``lambda``, SAP OP5's ``C``, ``rho1``, ``rho2``), the
oracle (Casimir Definition 1), the seed, the passes and the option names."""

import dataclasses
import math
import numbers
import re

from omegaconf import OmegaConf

from ssvmbench.data import check_options as check_data_options
from ssvmbench.errors import UserError, number
from ssvmbench.solvers import solver_class
from ssvmbench.tasks.oracles import Oracle

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


def resolve_objective(cfg, n):
    """``(lam, l1)`` of the objective ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)``: from
    ``lambda`` (default 0.01) and ``l1`` (default 0), or from SAP's parameters ``C``, ``rho1``,
    ``rho2`` (OP5: ``rho1 ||w||_1 + rho2/2 ||w||^2 + C sum_i xi_i``, divided by ``C n``):
    ``lam = rho2 / (C n)``, ``l1 = rho1 / (C n)``, with ``rho2 = 1 - rho1`` by default as in
    SAP Section V."""
    C, rho1, rho2 = cfg.get("C"), cfg.get("rho1"), cfg.get("rho2")
    if C is None:
        if rho1 is not None or rho2 is not None:
            raise UserError("rho1= and rho2= go with C= (SAP's parameters); give C too, or use "
                            "lambda= and l1=")
        lam = resolve_lambda(0.01 if cfg["lambda"] is None else cfg["lambda"], n)
        l1 = 0.0 if cfg.l1 is None else resolve_lambda(cfg.l1, n, "l1", allow_zero=True)
        return lam, l1
    if cfg["lambda"] is not None or cfg.l1 is not None:
        raise UserError("give either lambda= / l1= or SAP's C= / rho1= / rho2=, not both")
    C = number("C", C)
    rho1 = 0.0 if rho1 is None else number("rho1", rho1)
    rho2 = 1.0 - rho1 if rho2 is None else number("rho2", rho2)
    if not (C > 0 and rho1 >= 0 and rho2 > 0):
        raise UserError(f"C={C}, rho1={rho1}, rho2={rho2}: need C > 0, rho1 >= 0 and rho2 > 0 "
                        "(rho2 defaults to 1 - rho1)")
    return rho2 / (C * n), rho1 / (C * n)


def check_settings(cfg):
    """Refuse a bad run setting in one line before any data are loaded: the seed, the
    passes, the objective's parameters (their syntax; ``1/n`` is resolved later), the oracle,
    and the names of the solver's and the dataset's options (``+solver.pases=5`` would
    otherwise be ignored); the options' values are checked when the solver is built."""
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        raise UserError(f"{', '.join(missing)} must be given (e.g. {missing[0]}=VALUE)")
    if "experiment" in cfg:
        raise UserError("presets are not run configs: run `ssvmbench reproduce NAME` "
                        "(`ssvmbench reproduce` lists them), not `run +experiment=NAME`")
    solver_class(cfg.solver.name).check_option_names(
        [key for key in cfg.solver if key not in ("name", "passes")])
    check_data_options(cfg.data.name, [key for key in cfg.data if key != "name"])
    check_seed(cfg.seed)
    check_passes(cfg.solver.passes)
    resolve_objective(cfg, 1)
    oracle(cfg)
    for key in ("gap", "time_s"):
        if cfg.stop[key] is not None and not number(f"stop.{key}", cfg.stop[key]) > 0:
            raise UserError(f"stop.{key}={cfg.stop[key]} must be positive (or null)")


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
    """The configured :class:`~ssvmbench.tasks.oracles.Oracle` (unknown keys refused)."""
    given = OmegaConf.to_container(cfg.oracle, resolve=True)
    known = [f.name for f in dataclasses.fields(Oracle)]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UserError(f"oracle.{unknown[0]}: not an oracle setting; they are {known}")
    return Oracle(**given)
