"""Dataset loaders: one module per dataset family, each returning a :class:`SplitData`."""

from ssvmbench.data import conll, ocr
from ssvmbench.errors import UserError

LOADERS = {"ocr": ocr.load, "conll2000": conll.load_conll2000,
           "conll2003": conll.load_conll2003}


def load_split(name, **options):
    """Train/test splits of dataset ``name``; ``options`` go to its loader."""
    if name not in LOADERS:
        raise UserError(f"unknown dataset '{name}': choose one of {sorted(LOADERS)}")
    return LOADERS[name](**options)
