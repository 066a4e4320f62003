"""The run configuration composed from the command line's configs (``configs/``) and
overrides: one layer below the Hydra app, the Python API, the batch and a job's run, so that
each of them reads a configuration the same way and imports downwards only."""

import contextlib
import copy
import difflib
import functools
import hashlib
import os
import re
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from ssvmbench import data as datasets
from ssvmbench.common import hydra_internals
from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import config_dir
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


def find_run_dirname(overrides, sweep_dir=None, listing=None):
    """The folder of a sweep job in ``sweep_dir``: :func:`run_dirname`, or the folder an
    earlier version made for the same overrides (:func:`legacy_run_dirname`) if only that
    one is there, so that a sweep run again into a folder of old runs resumes and skips
    them rather than starting them again. ``listing``: ``sweep_dir``'s entries as
    :func:`sweep_listing` read them once for a whole sweep (else two look-ups per job)."""
    name = run_dirname(overrides)
    if listing is not None:
        folders, entries = listing
        legacy = legacy_run_dirname(overrides)
        return legacy if legacy in folders and name not in entries else name
    if sweep_dir is not None:
        folder, legacy = Path(str(sweep_dir)), legacy_run_dirname(overrides)
        if (folder / legacy).is_dir() and not (folder / name).exists():
            return legacy
    return name


SUBDIR = "${run_dirname:${hydra.job.override_dirname},${hydra.sweep.dir}}"   # config.yaml
_NOW_ONLY = re.compile(r"(?:[^$]|\$(?!\{)|\$\{now:[^${}]*\})*")


_KEY_INT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=(-?(?:0|[1-9][0-9]*))")


@functools.lru_cache(maxsize=1 << 16)
def parsed_override(word):
    """Hydra's reading of one override word (an ``Override``, not to be changed), kept for
    the next job with the same word: the checks, the sweeper and the folder names of a
    sweep read each word once, not once per job each. ``key=INT`` (``seed=4711``, the
    axis of the biggest sweeps) is read without Hydra's parser, to the same ``Override``
    (a test compares them)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Override, OverrideType, ValueType

    plain = _KEY_INT.fullmatch(word)
    if plain:
        return Override(type=OverrideType.CHANGE, key_or_group=plain.group(1),
                        value_type=ValueType.ELEMENT, _value=int(plain.group(2)),
                        input_line=word)
    return OverridesParser.create().parse_override(word)


def sweep_subdir(master):
    """A function from a job's overrides to its ``hydra.sweep.subdir`` as Hydra's
    ``load_sweep_config`` resolves it for a job of the sweep whose config is ``master``
    (with ``hydra``), without composing the job: ``hydra.job.override_dirname`` by Hydra's
    function, then :func:`find_run_dirname` with the sweep folder listed once. None unless
    the sweep uses configs/config.yaml's ``subdir`` and its ``hydra.sweep.dir`` depends on
    nothing a job changes (plain text and ``${now:…}``, whose value a job copies from the
    sweep's): then each job is composed as Hydra does."""
    raw = OmegaConf.to_container(master.hydra.sweep, resolve=False)
    if raw.get("subdir") != SUBDIR or not (isinstance(raw.get("dir"), str)
                                           and _NOW_ONLY.fullmatch(raw["dir"])):
        return None
    sweep_dir = master.hydra.sweep.dir
    options = master.hydra.job.config.override_dirname
    exclude = list(options.exclude_keys)
    listing = sweep_listing(sweep_dir)

    def subdir(overrides):
        dirname = hydra_internals.overrides_dirname(
            [parsed_override(word) for word in overrides], exclude, options.item_sep,
            options.kv_sep)
        return find_run_dirname(dirname, sweep_dir, listing)
    return subdir


def sweep_listing(sweep_dir):
    """``(folder names, entry names)`` in ``sweep_dir`` (empty if it is not there), for
    :func:`find_run_dirname` on every job of a sweep with one read of the folder."""
    folders, entries = set(), set()
    try:
        with os.scandir(str(sweep_dir) or ".") as scan:
            for entry in scan:
                entries.add(entry.name)
                if entry.is_dir():
                    folders.add(entry.name)
    except OSError:
        pass
    return folders, entries


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
    line (:class:`~ssvmbench.common.errors.UserError`): a key or option name that is not there, with
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


class Composer:
    """The configurations of many override lists (a sweep's runs), each the one
    :func:`config` composes, at a fraction of its cost: Hydra composes once per distinct set
    of config-group choices (``solver=``, ``data=``, ``oracle=``, ``hydra/…``, with the
    ``hydra.…`` settings), and the plain settings of each list (``seed=3``, ``lambda=1/n``,
    ``+data.subset=0.1``, ``~key``, ``solver.iterates=[raw,avg]``) are applied to a copy of
    that composition by the function Hydra applies them with, in the same order. Hydra
    decides what a group is (the config repository), so the split is Hydra's own. Anything
    this way cannot apply (an unknown key, a value of the wrong type, a sweep) goes
    through :func:`config`, so its error is the same one line.

    :meth:`composed` lends the configuration for a ``with`` block only: where each setting
    replaces one value (``seed=3``), it is set on one working copy per composition and set
    back afterwards, so that checking thousands of runs copies no configuration."""

    _KEY = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")

    def __init__(self, search_path=(), sweep=None):
        self.search_path = tuple(search_path)
        self.sweep = sweep       # (Hydra's config loader, a sweep's config): compose its jobs
        self._groups = None      # config group name -> whether it is one (Hydra's repo)
        self._bases = {}         # group overrides -> their composed config (None: an error)
        self._work = {}          # group overrides -> a working copy of their config

    def config(self, overrides):
        """:func:`config` of ``overrides`` (a list or tuple of ``key=value`` words): a
        configuration of its own."""
        overrides = list(overrides)
        try:
            fixed, varying = self._split(overrides)
        except Exception:                               # Hydra's words on it, from config()
            return self._compose(overrides)
        base = self._base(tuple(fixed))
        if base is None:
            return self._compose(overrides)
        cfg = copy.deepcopy(base)
        try:
            hydra_internals.apply_overrides(varying, cfg)
        except Exception:
            return self._compose(overrides)
        return cfg

    @contextlib.contextmanager
    def composed(self, overrides):
        """:func:`config` of ``overrides`` for the ``with`` block (to read, not to keep or
        change: it may be a working copy set back when the block ends)."""
        overrides = list(overrides)
        try:
            fixed, varying = self._split(overrides)
        except Exception:
            fixed, varying = None, None
        fixed = tuple(fixed) if fixed is not None else None
        if fixed is None or self._base(fixed) is None or not all(map(self._replaces_value,
                                                                     varying)):
            yield self.config(overrides)
            return
        work = self._work.get(fixed)
        if work is None:
            work = self._work[fixed] = copy.deepcopy(self._bases[fixed])
        undo = self._set(work, varying)
        if undo is None:                                # Hydra's error, or its config
            self._work.pop(fixed, None)
            yield self.config(overrides)
            return
        try:
            yield work
        finally:
            try:
                for node, old in reversed(undo):
                    hydra_internals.set_value(node, old)
            except Exception:
                self._work.pop(fixed, None)

    @staticmethod
    def _set(work, varying):
        """Apply ``varying`` (each replacing one value) to ``work`` in place as Hydra does;
        ``[(node, its value before)]`` to set back, or None if one cannot be applied so (the
        working copy is then spoilt)."""
        undo = []
        try:
            for override in varying:
                *path, leaf = override.key_or_group.split(".")
                holder = work
                for part in path:
                    holder = hydra_internals.child(holder, part)
                    if (not OmegaConf.is_dict(holder)
                            or hydra_internals.is_interpolation(holder)):
                        return None
                node = hydra_internals.child(holder, leaf)
                if node is None or OmegaConf.is_config(node):
                    return None
                old = hydra_internals.value(node)
                hydra_internals.apply_overrides([override], work)
                if hydra_internals.child(holder, leaf) is not node:   # replaced: no undo
                    return None
                undo.append((node, old))
        except Exception:
            return None
        return undo

    def _replaces_value(self, override):
        """Whether ``override`` sets a value where one is (``seed=3``, not ``+``, ``~``, a
        list or a dict): what :meth:`composed` can set and set back."""
        return (not (override.is_add() or override.is_delete() or override.is_force_add())
                and override.package is None and self._KEY.fullmatch(override.key_or_group)
                and not isinstance(override.value(), (dict, list)))

    @staticmethod
    def _parse(word):
        return parsed_override(word)

    def _split(self, overrides):
        """``(group overrides and hydra's, the others as Hydra's Override)``: Hydra's own
        split (its defaults list's ``Overrides``: a dict value or a name that is no
        config group is a config override), the ``hydra.…`` settings on the composed side."""
        fixed, varying = [], []
        for word in overrides:
            override = self._parse(word)
            if override.is_sweep_override():
                raise ValueError(word)                  # config() refuses it
            key = override.key_or_group
            if (key == "hydra" or key.startswith(("hydra.", "hydra/"))
                    or (self._is_group(key) and not isinstance(override.value(), dict))):
                fixed.append(word)
            else:
                varying.append(override)
        return fixed, varying

    def _compose(self, overrides):
        """The configuration Hydra composes for ``overrides``: :func:`config`, or, inside a
        sweep of the Hydra app, its loader's ``load_sweep_config`` (with the ``hydra``
        node; its errors are Hydra's, as for each job of Hydra's basic sweeper)."""
        if self.sweep is None:
            return config(overrides, self.search_path)
        loader, master = self.sweep
        return loader.load_sweep_config(master, list(overrides))

    def _is_group(self, name):
        if self._groups is None:
            from hydra.core.global_hydra import GlobalHydra

            if self.sweep is not None:
                loader, master = self.sweep
                self._repo = hydra_internals.config_repository(
                    loader, master.hydra.job.config_name, list(master.hydra.overrides.hydra))
            else:
                store_plugin_configs()
                extra = ([f"hydra.searchpath=[{','.join(self.search_path)}]"]
                         if self.search_path else [])
                with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
                    loader = GlobalHydra.instance().config_loader()
                    self._repo = hydra_internals.config_repository(loader, "config", extra)
            self._groups = {}
        if name not in self._groups:
            self._groups[name] = self._repo.group_exists(name)
        return self._groups[name]

    def _base(self, fixed):
        if fixed not in self._bases:
            try:
                self._bases[fixed] = self._compose(fixed)
            except Exception:
                self._bases[fixed] = None
        return self._bases[fixed]


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
    cannot read is one line naming it (:class:`~ssvmbench.common.errors.UserError`), not Hydra's
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
