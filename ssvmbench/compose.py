"""The run configuration composed from the command line's configs (``configs/``) and
overrides: one layer below the Hydra app, the Python API, the batch and a job's run, so that
each of them reads a configuration the same way and imports downwards only."""

import difflib
import hashlib
import re
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from ssvmbench import data as datasets
from ssvmbench.errors import UserError
from ssvmbench.paths import config_dir
from ssvmbench.solvers import SOLVERS, registered


# A sweep job's folder name (issue 44): its settings, short, in a fixed order, then a hash of
# the whole override list, e.g. solver-bcfw_data-ocr_lambda-1_n_seed-0_passes-2_1e0c3a0f5b.
# Only the POSIX portable file name characters [A-Za-z0-9._-]: no quoting in any shell, no
# glob ([ ] * ?), nothing Hydra reads as a sweep or an override (, = [ ] : ' ") when the
# folder is given back as hydra.run.dir=..., no / and no case-only differences (the hash is
# lower case and differs). The hash makes the name unique: the readable part may drop a
# prefix (+, ++), shorten a key to its last part and a value to VALUE_WIDTH characters,
# but two override lists that differ have different hashes. The full overrides are in the
# run's log (run.h5, attribute ``overrides``), which ``ssvmbench results`` reads.
FIRST = ("solver", "data", "lambda", "l1", "seed")     # then the other keys, sorted
VALUE_WIDTH = 24         # a longer value's readable part is cut (a path's: its last part)
NAME_WIDTH = 120         # a longer readable part ends at the last setting that fits
HASH_WIDTH = 10          # hex digits of sha1(overrides): 40 bits


def split_overrides(overrides):
    """The words of Hydra's ``override_dirname`` (``key=value`` joined by ``,``), a comma
    inside brackets, braces, parentheses or quotes (``solver.iterates=[raw,avg]``) kept."""
    words, word, depth, quote, escaped = [], "", 0, None, False
    for char in overrides:
        if escaped:
            word, escaped = word + char, False
            continue
        if char == "\\":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            words.append(word)
            word = ""
            continue
        word += char
    return [*words, word] if word or words else []


def _key_value(word):
    """``(key, value, deleted)`` of an override word (``+data.subset=0.05``)."""
    key, sep, value = word.partition("=")
    return key.lstrip("+~"), value if sep else None, key.startswith("~")


def _readable(word):
    """``key-value`` of one override word, in the name's characters: the key's last part
    (``solver.passes`` → ``passes``), a path value's last part, ``/`` as ``_`` (``1/n`` →
    ``1_n``), list and dict separators as ``-``, brackets and quotes left out."""
    key, value, deleted = _key_value(word)
    leaf = re.sub(r"[^A-Za-z0-9_]", "_", re.split(r"[./]", key)[-1]) or "_"
    if deleted:
        return f"{leaf}-deleted"
    value = (value or "").strip("'\"")
    if value.startswith(("/", "./", "../", "~/")) or value.count("/") > 1:   # a path
        value = value.rstrip("/").rsplit("/", 1)[-1]
    value = re.sub(r"[,:\s]+", "-", value.replace("/", "_"))
    return f"{leaf}-{re.sub(r'[^A-Za-z0-9._-]', '', value)[:VALUE_WIDTH]}"


def _order(word):
    key = _key_value(word)[0]
    return (FIRST.index(key) if key in FIRST else len(FIRST), key, word)


def run_dirname(overrides):
    """A sweep job's folder name from its sorted overrides (Hydra's ``override_dirname``:
    ``+data.subset=0.05,data=ocr,lambda=1/n,seed=0,solver=bcfw``): each setting as
    ``key-value`` (:func:`_readable`), ``solver``, ``data``, ``lambda``, ``l1``, ``seed``
    first and the others by key, joined by ``_``, then ``_`` and a hash of the whole
    ``overrides`` that keeps every combination in its own folder:
    ``solver-bcfw_data-ocr_lambda-1_n_seed-0_subset-0.05_…``. No overrides: ``defaults``."""
    if not overrides:
        return "defaults"
    readable = ""
    for part in (_readable(word) for word in sorted(split_overrides(overrides), key=_order)):
        if readable and len(readable) + 1 + len(part) > NAME_WIDTH:
            break
        readable = f"{readable}_{part}" if readable else part[:NAME_WIDTH]
    digest = hashlib.sha1(overrides.encode()).hexdigest()[:HASH_WIDTH]
    return f"{readable}_{digest}"


def legacy_run_dirname(overrides):
    """The folder name versions before issue 44 gave a sweep job: the sorted overrides
    themselves, ``/`` as ``_``, over 200 characters cut and ending with a hash."""
    name = overrides.replace("/", "_") or "defaults"
    if len(name) > 200:
        name = name[:180] + "-" + hashlib.sha1(name.encode()).hexdigest()[:12]
    return name


def find_run_dirname(overrides, sweep_dir=None):
    """The folder of a sweep job in ``sweep_dir``: :func:`run_dirname`, or the folder an
    earlier version made for the same overrides (:func:`legacy_run_dirname`) if only that
    one is there, so that a sweep run again into a folder of old runs resumes and skips
    them rather than starting them again."""
    name = run_dirname(overrides)
    if sweep_dir is not None:
        folder, legacy = Path(str(sweep_dir)), legacy_run_dirname(overrides)
        if (folder / legacy).is_dir() and not (folder / name).exists():
            return legacy
    return name


OmegaConf.register_new_resolver("run_dirname", find_run_dirname, replace=True)


def store_plugin_configs():
    """Give every plugin solver and dataset its ``solver=NAME`` / ``data=NAME`` config (the
    solver's ``default_config``, the loader's keyword arguments; the built-ins have theirs in
    configs/solver/ and configs/data/)."""
    store = ConfigStore.instance()
    for name, cls in registered().items():
        if name not in SOLVERS:
            store.store(group="solver", name=name, node=cls.default_config())
    for name in datasets.registered():
        store.store(group="data", name=name, node=datasets.default_config(name))


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


def parse_overrides(words):
    """Hydra's reading of the override ``words`` (``key=value``, ``key=a,b``, ...); one it
    cannot read is one line naming it (:class:`~ssvmbench.errors.UserError`), not Hydra's
    multi-line parse report or its traceback."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser, parsed = OverridesParser.create(), []
    for word in words:
        try:
            parsed += parser.parse_overrides([word])
        except OverrideParseException as err:
            raise UserError(f"{word}: not a setting Hydra reads ({str(err).splitlines()[0]}; "
                            "write key=value, key=a,b to sweep, key=[a,b] for a list, quoted "
                            "as 'key=value' in a shell)") from None
    return parsed
