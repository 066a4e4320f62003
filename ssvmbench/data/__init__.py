"""Dataset loaders, above the common utilities: one module per dataset family, each returning
a :class:`SplitData`, the downloads and their checksums (``fetch``), and the loaders other
packages register under the entry-point group ``ssvmbench.datasets``. A new dataset goes
here. May import common only: no task, solver or anything above."""

import dataclasses
import importlib
import inspect
from functools import cache

import numpy as np

from ssvmbench.common import plugins
from ssvmbench.common.errors import UserError
from ssvmbench.data.sequences import SplitData

# name -> (module, loader); a loader's module is imported when its dataset is asked for
LOADERS = {"ocr": ("ocr", "load"), "conll2000": ("conll", "load_conll2000"),
           "conll2003": ("conll", "load_conll2003"),
           "conll2003_casimir": ("casimir_ner", "load"), "pos": ("treebank", "load_pos"),
           "wsjpos": ("treebank", "load_wsjpos"), "brown": ("brown", "load_brown"),
           "voc": ("voc", "load_voc"), "voc_synthetic": ("scenes", "load_scenes"),
           "alignment": ("alignment", "load_alignment"),
           "conll_files": ("conll_files", "load"), "arrays": ("arrays", "load")}


HOLDOUT_SEED = 0
ENTRY_POINTS = "ssvmbench.datasets"


@cache
def registered():
    """``{name: loader function}`` of the installed dataset plugins."""
    return plugins.load(ENTRY_POINTS, "dataset", LOADERS,
                        lambda f: None if callable(f) else "is not a loader function",
                        lambda f: None)


def default_config(name):
    """The ``data`` config of plugin dataset ``name``: its loader's keyword arguments with
    their defaults (``???``, required, where it has none)."""
    parameters = inspect.signature(registered()[name]).parameters.values()
    return {"name": name, **{p.name: "???" if p.default is p.empty else p.default
                             for p in parameters
                             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}}


def _loader(name):
    if name in LOADERS:
        module, function = LOADERS[name]
        return getattr(importlib.import_module(f"ssvmbench.data.{module}"), function)
    if name in registered():
        return registered()[name]
    raise UserError(f"unknown dataset '{name}': choose one of "
                    f"{sorted([*LOADERS, *registered()])}")


def check_options(name, options):
    """Refuse an option the loader of dataset ``name`` does not take, naming those it does
    (``subset`` and ``holdout`` are every dataset's)."""
    accepted = inspect.signature(_loader(name)).parameters
    if any(p.kind == p.VAR_KEYWORD for p in accepted.values()):
        return
    unknown = sorted(set(options) - set(accepted) - {"subset", "holdout"})
    if unknown:
        raise UserError(f"data.{unknown[0]}: not an option of data={name}; its options: "
                        f"{sorted([*accepted, 'subset', 'holdout'])}")


def load_split(name, subset=None, holdout=None, **options):
    """Train/test splits of dataset ``name``; ``options`` go to its loader. ``holdout`` (a
    fraction in (0, 0.5]) replaces the test split by that fraction of the training examples,
    drawn at random with a fixed seed, and trains on the rest: a validation split for choosing
    a parameter on held-out training data (SAP Section V: the L1-SSVM's radius "by
    cross-validation"). ``subset`` (a fraction in (0, 1]) then keeps the first part of the
    training sequences, for scaling studies."""
    load = _loader(name)
    check_options(name, options)
    if holdout is not None and not 0 < holdout <= 0.5:
        raise UserError(f"data.holdout={holdout} must be a fraction in (0, 0.5]")
    if subset is not None and not 0 < subset <= 1:
        raise UserError(f"data.subset={subset} must be a fraction in (0, 1]")
    split = load(**options)
    if not isinstance(split, SplitData):
        raise UserError(f"the loader of dataset '{name}' returned {type(split).__name__}, not "
                        "ssvmbench.data.sequences.SplitData")
    if holdout is not None:
        n = split.train.n
        held = np.random.default_rng(HOLDOUT_SEED).permutation(n)[:max(1, round(holdout * n))]
        kept = np.setdiff1d(np.arange(n), held)
        split = dataclasses.replace(
            split, train=split.train.subset(kept), test=split.train.subset(np.sort(held)),
            variant=f"{split.variant}; validation: {holdout:g} of train held out "
                    f"(seed {HOLDOUT_SEED}) as the test split")
    if subset is None:
        return split
    keep = max(1, round(subset * split.train.n))
    return dataclasses.replace(split, train=split.train.subset(range(keep)),
                               variant=f"{split.variant}; first {subset:g} of train")
