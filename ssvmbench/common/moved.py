"""Public import paths that outlive the modules' places: ``import ssvmbench.errors`` finds
:mod:`ssvmbench.common.errors`, the same module object (not a copy), so that plugins,
scripts and notebooks written against the documented surface (``ssvmbench.PUBLIC``) keep
working when a file moves between layer folders. Only the names in the table are answered;
every other import goes on to Python's own finders."""

import importlib
import importlib.abc
import importlib.util


class PublicPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A finder and loader for the table ``{public name: module it stands for}``."""

    def __init__(self, table):
        self.table = dict(table)

    def find_spec(self, name, path=None, target=None):
        if name in self.table:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(self.table[spec.name])

    def exec_module(self, module):
        """Nothing to run: the module it stands for ran when it was imported."""


def install(table, meta_path):
    """Put one finder for ``table`` on ``meta_path`` (``sys.meta_path``), once."""
    if not any(isinstance(finder, PublicPaths) and finder.table == table
               for finder in meta_path):
        meta_path.append(PublicPaths(table))
