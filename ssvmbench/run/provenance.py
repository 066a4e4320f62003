"""What a run log records of where its numbers come from: settings, data, code, machine."""

import os
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numba

from ssvmbench.common.paths import source_digest
from ssvmbench.solvers import objective


def attributes(config, overrides, settings, solver, split, lam):
    """A new run log's attributes: ``config`` (the resolved config's YAML), the command
    line's ``overrides``, its :class:`~ssvmbench.run.settings.RunSettings`, the built solver, the
    data's split and the resolved ``lam``."""
    return {
        "config": config,
        "overrides": list(overrides),
        "solver": solver.name,
        "method": solver.method,
        "data": settings.data,
        "data_variant": split.variant,
        "data_source": split.source,
        "dataset_checksum": split.checksum,
        "lambda": lam,
        "lambda_spec": settings.objective.spec,
        "l1": solver.l1,
        "seed": settings.seed,
        "n": solver.task.n,
        "d": solver.task.d,
        "n_test": split.test.n,
        "test_metric": split.metric,
        "objective": objective.FORMULA,
        "loss": solver.task.loss,
        "iterates": ",".join(solver.iterate_names),
        "oracle": solver.oracle.name,
        "oracle_K": solver.oracle.K,
        "oracle_mu": float(solver.oracle.mu),
        "oracle_ties": solver.oracle.ties,
        "solver_threads": 1,
        "eval_threads": numba.get_num_threads(),
        "versions": {pkg: package_version(pkg) for pkg in
                     ("ssvmbench", "numpy", "numba", "llvmlite", "scipy", "daqp", "pandas",
                      "h5py", "hydra-core")},
        "code": code_identity(),
        "python": sys.version.split()[0],
        "git_revision": git_revision(),
        "host": os.uname().nodename,
    }


def code_identity():
    """What a finished log must have been made by to be reused: the digest of the package's
    sources (:func:`~ssvmbench.common.paths.source_digest`; unlike the git revision it changes with
    an uncommitted edit and not with a commit of docs alone) and the versions of the
    packages that shape a run's numbers."""
    return {"sources": source_digest(),
            **{pkg: package_version(pkg) for pkg in ("numpy", "numba", "scipy", "daqp")}}


def package_version(name):
    """The installed version of ``name``, or ``"not installed"`` (ssvmbench run from a
    checkout on ``PYTHONPATH``: the git revision then identifies the code)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def git_revision():
    """Commit of the source tree (the package's, else the working directory's)."""
    for where in (Path(__file__).parent, Path.cwd()):
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                 text=True, cwd=where, timeout=5)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0:
            return out.stdout.strip()
    return "unknown"


def committed_files(directory):
    """The files under ``directory`` that git tracks (none outside a git work tree)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    try:
        out = subprocess.run(["git", "ls-files", "--", "."], capture_output=True, text=True,
                             cwd=directory, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return out.stdout.split() if out.returncode == 0 else []
