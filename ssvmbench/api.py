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
    the nearest one (``solver.pases``: did you mean ``solver.passes``?), or a group given
    something else than an option's name (``solver=1``, ``solver=null``: Hydra's
    ValueError)."""
    from hydra.errors import HydraException

    store_plugin_configs()
    extra = [f"hydra.searchpath=[{','.join(search_path)}]"] if search_path else []
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        try:
            return compose(config_name="config", overrides=[*overrides, *extra])
        except (HydraException, ValueError) as err:
            problem = unknown_name(overrides, extra) or "; ".join(
                line.strip() for line in str(err).splitlines() if line.strip())
            raise UserError(problem) from None


def unknown_name(overrides, extra=()):
    """What names nothing in ``overrides`` (called inside Hydra's initialization): a config
    group's option (``solver=bcfx``) or a key (``solver.pases=5``), with the nearest existing
    name; a key close to none is a new one, added with ``+``. None if every name exists."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    from ssvmbench.batch import parse_overrides

    parsed = [o for o in parse_overrides(overrides)
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
    ``results/runs/DATE/TIME_SOLVER_DATA``); returns ``(trace, attrs)`` of the log.
    ``overrides``: strings (``["solver=bcfw", "lambda=0.01"]``) or ``{key: value}``."""
    words = override_words(overrides)
    cfg = config(words)
    if run_dir is None:
        now = datetime.datetime.now()
        run_dir = Path("results", "runs", f"{now:%Y-%m-%d}",
                       f"{now:%H-%M-%S-%f}_{cfg.solver.name}_{cfg.data.name}")
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    return read_log(run_config(cfg, run_dir, words))


def sweep(overrides=(), sweep_dir=None):
    """Run a sweep as ``ssvmbench run -m OVERRIDES hydra.sweep.dir=SWEEP_DIR`` does (default
    ``results/sweeps/DATE/TIME``): ``overrides`` as strings (``["solver=bcfw,ssg",
    "seed=0,1"]``) or ``{key: value or list of values}``; a ``hydra/launcher=...`` override
    chooses where the runs go (default: one local worker; ``hydra.launcher.n_jobs=2`` two;
    ``hydra/launcher=slurm`` a SLURM array). Finished runs in ``sweep_dir`` are kept, stopped
    ones continued. Returns the results table of the sweep (:func:`ssvmbench.results.table`:
    one row per run, failed ones included). A value of the wrong type is one
    :class:`~ssvmbench.errors.UserError` naming the setting, as on the command line."""
    from ssvmbench.batch import check_jobs, is_hydra_override, sweep_jobs
    from ssvmbench.launchers import launcher_settings, run_batch
    from ssvmbench.results import table

    words = override_words(overrides)
    if sweep_dir is None:
        now = datetime.datetime.now()
        sweep_dir = Path("results", "sweeps", f"{now:%Y-%m-%d}", f"{now:%H-%M-%S-%f}")
    jobs = sweep_jobs(words, sweep_dir)
    settings = launcher_settings([word for word in words if is_hydra_override(word)], sweep_dir)
    check_jobs(jobs)
    run_batch(jobs, settings)
    return table(sweep_dir)


def override_words(overrides):
    """The command line's words of ``overrides``: a list of ``key=value`` strings as it is,
    or ``{key: value}`` written as Hydra reads values (a list or tuple of values at the top
    is a sweep, ``0,1``; nested ones ``[0,1]``, dicts ``{a:1}``; None, True ``null``,
    ``true``); anything else is one line naming the setting."""
    if isinstance(overrides, dict):
        return [f"{key}={_value(key, value, top=True)}" for key, value in overrides.items()]
    if isinstance(overrides, str) or not all(isinstance(word, str) for word in overrides):
        raise UserError(f"overrides={overrides!r}: give a list of 'key=value' strings or a "
                        "dict {key: value}")
    return list(overrides)


def _value(key, value, top=False):
    """``value`` of setting ``key`` as an override writes it (see :func:`override_words`)."""
    if isinstance(value, (list, tuple, range)):
        text = ",".join(_value(key, item) for item in value)
        return text if top else f"[{text}]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{name}:{_value(key, item)}" for name, item in value.items()) + "}"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (str, int, float)):
        return str(value)
    raise UserError(f"{key}={value!r}: a value of type {type(value).__name__} is not a "
                    "setting's; give a number, a string, True, False, None, a list of values "
                    "to sweep or a dict")
