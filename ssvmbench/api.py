"""ssvmbench from Python: one run or a sweep with the command line's configs.

    >>> from ssvmbench import api
    >>> trace, attrs = api.run(["solver=bcfw", "data=ocr", "lambda=0.01", "solver.passes=5"],
    ...                        run_dir="results/runs/bcfw_ocr")

``trace`` is the run log's tidy table (one row per checkpoint and iterate) and ``attrs`` its
attributes, as :func:`ssvmbench.runlog.read_log` returns them; the log stays in
``run_dir/run.h5`` (a finished log of the same configuration is read, not recomputed).

    >>> table = api.sweep({"solver": ["bcfw", "ssg"], "seed": [0, 1], "data": "ocr",
    ...                    "+data.subset": 0.05, "solver.passes": 5})

runs what ``ssvmbench run -m solver=bcfw,ssg seed=0,1 data=ocr +data.subset=0.05
solver.passes=5`` runs (into ``results/sweeps/DATE/TIME``, one folder per combination) and
returns ``ssvmbench results``' table of it (:func:`ssvmbench.results.table`).
"""

import datetime
import difflib
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ssvmbench.app import store_plugin_configs
from ssvmbench.errors import UserError
from ssvmbench.paths import config_dir
from ssvmbench.runlog import read_log
from ssvmbench.runner import run as run_config


def config(overrides=(), search_path=()):
    """The resolved run configuration of ``overrides`` (``key=value`` strings, as after
    ``ssvmbench run``), plugin solvers included; ``search_path``: more config sources
    (``file://DIR``, as ``--config-dir DIR`` adds). An override Hydra cannot apply is one
    line (:class:`~ssvmbench.errors.UserError`): a key or option name that is not there, with
    the nearest one (``solver.pases``: did you mean ``solver.passes``?)."""
    from hydra.errors import HydraException

    store_plugin_configs()
    extra = [f"hydra.searchpath=[{','.join(search_path)}]"] if search_path else []
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        try:
            return compose(config_name="config", overrides=[*overrides, *extra])
        except HydraException as err:
            problem = unknown_name(overrides, extra) or "; ".join(
                line.strip() for line in str(err).splitlines() if line.strip())
            raise UserError(problem) from None


def unknown_name(overrides, extra=()):
    """What names nothing in ``overrides`` (called inside Hydra's initialization): a config
    group's option (``solver=bcfx``) or a key (``solver.pases=5``), with the nearest existing
    name; a key close to none is a new one, added with ``+``. None if every name exists."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parsed = [o for o in OverridesParser.create().parse_overrides(list(overrides))
              if not (o.is_add() or o.is_delete() or o.is_force_add()
                      or o.key_or_group.startswith("hydra"))]
    loader = GlobalHydra.instance().config_loader()
    groups, keys = {}, []
    for override in parsed:
        options = loader.get_group_options(override.key_or_group)
        if not options:
            keys.append(override)
            continue
        values = (list(override.sweep_string_iterator()) if override.is_sweep_override()
                  else [override.get_value_element_as_str()])
        for value in values:
            if value not in options:
                near = difflib.get_close_matches(value, options, n=1)
                return (f"{override.key_or_group}={value}: no such {override.key_or_group}"
                        + (f"; did you mean {override.key_or_group}={near[0]}?" if near else "")
                        + f" (one of: {', '.join(options)})")
        groups[override.key_or_group] = values[0]
    try:
        base = compose(config_name="config",
                       overrides=[f"{group}={value}" for group, value in groups.items()]
                       + list(extra))
    except HydraException:
        return None
    known = list(_dotted(OmegaConf.to_container(base)))
    for override in keys:
        key = override.key_or_group
        if key not in known:
            near = _nearest(key, known)
            return (f"{key}: no such setting; "
                    + (f"did you mean {near}?" if near else
                       f"a new one is added with a +: +{key}=..."))
    return None


def _nearest(key, known):
    """The existing key nearest ``key``: a sibling with a close name (``solver.pases`` ->
    ``solver.passes``), or, under a parent that is not there either, any close key."""
    parent, _, leaf = key.rpartition(".")
    if parent and parent not in known:
        near = difflib.get_close_matches(key, known, n=1)
        return near[0] if near else None
    siblings = [k.rpartition(".")[2] for k in known if k.rpartition(".")[0] == parent]
    near = difflib.get_close_matches(leaf, siblings, n=1)
    return (f"{parent}.{near[0]}" if parent else near[0]) if near else None


def _dotted(node, prefix=""):
    """Every key of a config (``solver``, ``solver.passes``, ...), dotted."""
    for key, value in node.items():
        yield prefix + str(key)
        if isinstance(value, dict):
            yield from _dotted(value, f"{prefix}{key}.")


def run(overrides=(), run_dir=None):
    """Train as ``ssvmbench run OVERRIDES`` does, logging to ``run_dir/run.h5`` (default
    ``results/runs/DATE/TIME_SOLVER_DATA``); returns ``(trace, attrs)`` of the log."""
    cfg = config(overrides)
    if run_dir is None:
        now = datetime.datetime.now()
        run_dir = Path("results", "runs", f"{now:%Y-%m-%d}",
                       f"{now:%H-%M-%S-%f}_{cfg.solver.name}_{cfg.data.name}")
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    return read_log(run_config(cfg, run_dir, list(overrides)))


def sweep(overrides=(), sweep_dir=None):
    """Run a sweep as ``ssvmbench run -m OVERRIDES hydra.sweep.dir=SWEEP_DIR`` does (default
    ``results/sweeps/DATE/TIME``): ``overrides`` as strings (``["solver=bcfw,ssg",
    "seed=0,1"]``) or ``{key: value or list of values}``; a ``hydra/launcher=...`` override
    chooses where the runs go (default: one local worker; ``hydra.launcher.n_jobs=2`` two;
    ``hydra/launcher=slurm`` a SLURM array). Finished runs in ``sweep_dir`` are kept, stopped
    ones continued. Returns the results table of the sweep (:func:`ssvmbench.results.table`:
    one row per run, failed ones included)."""
    from ssvmbench.batch import check_jobs, is_hydra_override, sweep_jobs
    from ssvmbench.launchers import launcher_settings, run_batch
    from ssvmbench.results import table

    words = [f"{key}={_values(value)}" for key, value in overrides.items()] \
        if isinstance(overrides, dict) else list(overrides)
    if sweep_dir is None:
        now = datetime.datetime.now()
        sweep_dir = Path("results", "sweeps", f"{now:%Y-%m-%d}", f"{now:%H-%M-%S-%f}")
    jobs = sweep_jobs(words, sweep_dir)
    settings = launcher_settings([word for word in words if is_hydra_override(word)], sweep_dir)
    check_jobs(jobs)
    run_batch(jobs, settings)
    return table(sweep_dir)


def _values(value):
    """A sweep's values as an override writes them: ``[0, 1]`` -> ``0,1``, ``None`` ->
    ``null``, ``True`` -> ``true``."""
    if isinstance(value, (list, tuple, range)):
        return ",".join(map(_values, value))
    return {None: "null", True: "true", False: "false"}.get(value, str(value)) \
        if isinstance(value, (bool, type(None))) else str(value)
