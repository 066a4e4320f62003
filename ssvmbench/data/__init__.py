"""Dataset loaders: one module per dataset family, each returning a :class:`SplitData`."""

import dataclasses
import importlib

from ssvmbench.errors import UserError

# name -> (module, loader); a loader's module is imported when its dataset is asked for
LOADERS = {"ocr": ("ocr", "load"), "conll2000": ("conll", "load_conll2000"),
           "conll2003": ("conll", "load_conll2003"), "pos": ("treebank", "load_pos"),
           "wsjpos": ("treebank", "load_wsjpos"), "brown": ("brown", "load_brown"),
           "voc": ("voc", "load_voc"), "voc_synthetic": ("scenes", "load_scenes"),
           "alignment": ("alignment", "load_alignment")}


def load_split(name, subset=None, **options):
    """Train/test splits of dataset ``name``; ``options`` go to its loader. ``subset`` (a
    fraction in (0, 1]) keeps the first part of the training sequences, for scaling studies."""
    if name not in LOADERS:
        raise UserError(f"unknown dataset '{name}': choose one of {sorted(LOADERS)}")
    module, loader = LOADERS[name]
    split = getattr(importlib.import_module(f"ssvmbench.data.{module}"), loader)(**options)
    if subset is None:
        return split
    if not 0 < subset <= 1:
        raise UserError(f"data.subset={subset} must be a fraction in (0, 1]")
    keep = max(1, round(subset * split.train.n))
    return dataclasses.replace(split, train=split.train.subset(range(keep)),
                               variant=f"{split.variant}; first {subset:g} of train")
