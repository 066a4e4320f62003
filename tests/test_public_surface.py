"""The public surface (``ssvmbench.PUBLIC``): every module a plugin, a script or a notebook
may import keeps its path whatever moves inside the package, and every name the
documentation, the README and the example plugins import from ssvmbench is there."""

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ssvmbench

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
              *sorted((ROOT / "examples").rglob("*.py")),
              *sorted((ROOT / "examples").rglob("*.md"))]
FROM_IMPORT = re.compile(r"^\s*(?:>>> )?from (ssvmbench(?:\.\w+)*) import ([\w, ]+)", re.M)
# a dotted name in prose: ssvmbench.x.y (a module, then perhaps an attribute of it)
DOTTED = re.compile(r"(?<![\w./])(ssvmbench(?:\.\w+)+)")
ENTRY_POINT_GROUPS = {"ssvmbench.solvers", "ssvmbench.tasks", "ssvmbench.datasets",
                      "ssvmbench.metrics"}


def _documented_imports():
    found = set()
    for path in DOCUMENTED:
        for module, names in FROM_IMPORT.findall(path.read_text()):
            found |= {(module, name.strip()) for name in names.split(",") if name.strip()}
    return sorted(found)


def _documented_dotted():
    found = set()
    for path in DOCUMENTED:
        if path.name == "changelog.md":          # history: what the names were then
            continue
        found |= set(DOTTED.findall(path.read_text()))
    return sorted(found - ENTRY_POINT_GROUPS)


def _resolves(dotted):
    """Whether ``dotted`` names a module, or an attribute (at any depth) of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


@pytest.mark.parametrize("public, home", sorted(ssvmbench.PUBLIC.items()))
def test_a_public_path_is_its_module(public, home):
    """``import ssvmbench.errors`` gives the very module of ssvmbench/common/errors.py (one
    class ``UserError``, not two)."""
    assert importlib.import_module(public) is importlib.import_module(home)


@pytest.mark.parametrize("module, name", _documented_imports())
def test_every_documented_import_works(module, name):
    """``from MODULE import NAME``: NAME an attribute of MODULE, or a module beneath it."""
    assert _resolves(f"{module}.{name}"), f"from {module} import {name}"


def test_the_example_plugins_import_only_public_paths():
    """What a plugin may import is the public surface: the three example plugins show it."""
    imported = set()
    for path in sorted((ROOT / "examples").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported |= {node.module} | {f"{node.module}.{alias.name}"
                                             for alias in node.names}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
    modules = {name for name in imported if name.split(".")[0] == "ssvmbench"
               and importlib.util.find_spec(name.rsplit(".", 1)[0]) is not None
               and _is_module(name)}
    assert modules and not sorted(modules - set(ssvmbench.PUBLIC) - {"ssvmbench"})


def _is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_every_dotted_name_in_the_documentation_resolves():
    assert not [name for name in _documented_dotted() if not _resolves(name)]


def test_the_package_face():
    for name in ssvmbench.__all__:
        assert getattr(ssvmbench, name) is not None
    with pytest.raises(AttributeError):
        ssvmbench.not_a_name                                       # noqa: B018


def test_public_paths_work_in_a_fresh_process():
    """A plugin's first import is a public path, before anything else of ssvmbench."""
    probe = ("from ssvmbench.errors import UserError; from ssvmbench.metrics import Metric; "
             "from ssvmbench.testing import check_task; "
             "from ssvmbench.tasks.oracles import Oracle; "
             "import ssvmbench.common.errors as home; assert UserError is home.UserError; "
             "print(Oracle.__module__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "ssvmbench.tasks.oracle"


def test_only_the_public_table_is_answered():
    """A moved module's old path that is not public is not kept (no second way to it)."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ssvmbench.runner")
