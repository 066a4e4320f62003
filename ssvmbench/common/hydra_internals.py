"""Hydra's and OmegaConf's private calls that ssvmbench relies on, in one place: nothing else
in ssvmbench (or its launchers plugin) names ``hydra._internal`` or a node's private method.

Checked against the versions in :data:`CHECKED` (hydra-core 1.3.x is what ``pyproject.toml``
admits); ``tests/common/test_hydra_internals.py`` fails, naming this module, when another
version is installed, and exercises every call below. To admit a new version: run the test
suite with it, read the calls below against its sources, and add it.

Why private calls at all: a sweep of thousands of runs needs each job's configuration and
folder name without composing each one through Hydra's public path (seconds per thousand
jobs instead of minutes: docs/benchmarks.md, "Planning a big sweep"), exactly as Hydra's basic
sweeper and config loader would give them.
"""

CHECKED = {"hydra-core": ("1.3.8",), "omegaconf": ("2.3.1",)}


def unchecked_versions():
    """``["hydra-core 1.4.0", ...]``: the installed versions of :data:`CHECKED`'s packages that
    these calls were not checked against (empty if all were)."""
    from importlib.metadata import version

    return [f"{package} {version(package)}" for package, checked in CHECKED.items()
            if version(package) not in checked]


def basic_sweeper():
    """Hydra's basic sweeper class (``hydra._internal.core_plugins.basic_sweeper``), which
    ssvmbench's batch sweeper extends."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    return BasicSweeper


def sweep_combinations(overrides):
    """Every combination of the parsed sweep ``overrides`` as Hydra's basic sweeper expands
    them (``a=1,2 b=3,4``: four lists of words), in its order."""
    return basic_sweeper().split_arguments(overrides, None)[0]


def overrides_dirname(overrides, exclude_keys, item_sep, kv_sep):
    """The ``override_dirname`` Hydra gives a job with the parsed ``overrides``."""
    from hydra._internal.config_loader_impl import get_overrides_dirname

    return get_overrides_dirname(overrides=overrides, exclude_keys=exclude_keys,
                                 item_sep=item_sep, kv_sep=kv_sep)


def apply_overrides(overrides, cfg):
    """Apply the parsed config ``overrides`` to ``cfg`` in place, as Hydra's loader does."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    ConfigLoaderImpl._apply_overrides_to_config(overrides, cfg)


def config_repository(loader, config_name, overrides):
    """The caching config repository of Hydra's config ``loader`` for ``config_name`` and the
    ``hydra`` ``overrides`` (what answers whether a name is a config group)."""
    return loader._parse_overrides_and_create_caching_repo(config_name, overrides)[1]


def child(node, key):
    """The child node ``key`` of an OmegaConf container ``node`` (None if absent), without
    resolving it."""
    return node._get_node(key)


def is_interpolation(node):
    """Whether an OmegaConf node holds an interpolation (``${...}``)."""
    return node._is_interpolation()


def is_missing(node):
    """Whether an OmegaConf node's value is missing (``???``)."""
    return node._is_missing()


def full_key(node, key):
    """The dotted key of ``node``'s child ``key`` from the config's root."""
    return node._get_full_key(key)


def value(node):
    """The value an OmegaConf value node holds, unresolved."""
    return node._value()


def set_value(node, new):
    """Set an OmegaConf value node's value in place (validated as OmegaConf does)."""
    node._set_value(new)
