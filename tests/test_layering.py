"""The package's floor plan, enforced: every module belongs to one layer folder, the layers
are declared below in order, and an import (at module level or inside a function: a lazy
import is an arrow all the same) may point only down or within its layer; between folders
there are no circles, and between modules none either.

That it can fail: before the fifth round's floor plan, ``ssvmbench/plotting/names.py``,
``sap_tables.py`` and ``commands.py`` imported ``ssvmbench.presets`` (now
``ssvmbench.papers.presets``, a layer above plotting). :func:`test_the_check_finds_an_arrow_up`
feeds that arrow to the same check and sees it refused.
"""

import ast
import re
from pathlib import Path

import ssvmbench

PACKAGE = Path(ssvmbench.__file__).parent

# bottom layer first; folders in one layer may import each other (without circles)
LAYERS = [
    {"common"},                                   # errors, paths, files, locks, plugins
    {"data"},                                     # dataset loaders
    {"tasks"},                                    # ψ, losses, oracles, metrics
    {"solvers"},                                  # solvers, the objective
    {"compiled"},                                 # kernel cache, cold start
    {"run"},                                      # one run: config -> run log
    {"batch"},                                    # many runs: plan, launchers, status
    {"plotting", "plugin_kit", "estimators"},     # figures; checks for plugin authors; sklearn
    {"papers"},                                   # presets, claims, reproduce, report
    {"cli", "api", "__init__", "__main__"},       # the doors
]
LAYER = {folder: number for number, folders in enumerate(LAYERS) for folder in folders}


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources():
    return [p for p in PACKAGE.rglob("*.py") if "vendor" not in p.parts]


def _imports(path):
    """The ssvmbench modules a file imports, at module level or inside functions (``from a
    import b`` counts as ``a.b`` when ``a.b`` is a module, else ``a``)."""
    modules = {_module_name(p) for p in _sources()}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
    return {name for name in found if name in modules}


def _graph():
    return {_module_name(p): _imports(p) for p in _sources()}


def folder(module):
    """The layer folder of a module: ``ssvmbench.run.runner`` -> ``run``; the package's own
    ``__init__`` and the top modules are their own doors."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def arrows_up(graph):
    """``[(importer, imported)]`` whose imported module's layer is above the importer's."""
    return sorted((module, target) for module, targets in graph.items() for target in targets
                  if LAYER[folder(target)] > LAYER[folder(module)])


def _cycles(graph):
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if target == node:
                continue
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack + [target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_module_is_in_a_declared_layer():
    assert not sorted({folder(m) for m in _graph()} - set(LAYER))


def test_at_most_eight_modules_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


def test_imports_point_down():
    assert not arrows_up(_graph())


def test_the_check_finds_an_arrow_up():
    """Today's plotting names its curves without the presets; the arrow it had is refused."""
    graph = _graph()
    assert "ssvmbench.papers.presets" not in graph["ssvmbench.plotting.names"]
    graph["ssvmbench.plotting.names"] = graph["ssvmbench.plotting.names"] | {
        "ssvmbench.papers.presets"}
    assert arrows_up(graph) == [("ssvmbench.plotting.names", "ssvmbench.papers.presets")]


def test_no_circles_between_folders():
    folders = {}
    for module, targets in _graph().items():
        folders.setdefault(folder(module), set()).update(folder(t) for t in targets)
    assert not _cycles(folders)


def test_no_import_cycles():
    assert not _cycles(_graph())


def test_the_graph_follows_from_imports_to_modules():
    """The graph reader follows ``from a import b`` to the module a.b (so the tests above can
    fail): ssvmbench.papers.report imports ssvmbench.papers.presets."""
    assert "ssvmbench.papers.presets" in _graph()["ssvmbench.papers.report"]


def test_imports_inside_functions_count():
    """The graph reads imports inside functions (so a circle made of them fails the test
    above): ssvmbench.cli imports the Hydra app only inside its run command."""
    assert "ssvmbench.run.app" in _graph()["ssvmbench.cli"]


def test_data_modules_import_no_tasks_or_solvers():
    offenders = {module: sorted(i for i in imports
                                if i.startswith(("ssvmbench.tasks", "ssvmbench.solvers")))
                 for module, imports in _graph().items() if module.startswith("ssvmbench.data")}
    assert not {m: i for m, i in offenders.items() if i}


def test_solvers_import_no_task_module():
    """A solver reaches a task only through the seam (issue 30): the task contract, the
    registry, the kernel API and the oracle record; never a task's own module."""
    seam = {"ssvmbench.tasks", "ssvmbench.tasks.base", "ssvmbench.tasks.kernels",
            "ssvmbench.tasks.oracle"}
    offenders = {module: sorted(i for i in imports
                                if i.startswith("ssvmbench.tasks") and i not in seam)
                 for module, imports in _graph().items() if module.startswith("ssvmbench.solvers")}
    assert not {m: i for m, i in offenders.items() if i}


def test_the_oracle_record_is_below_every_task():
    """The record a solver and a task share imports no task (it once lived beside the
    chain's kernels and imported the chain)."""
    tasks = {m for m in _graph()["ssvmbench.tasks.oracle"] if m.startswith("ssvmbench.tasks")}
    assert tasks <= {"ssvmbench.tasks.scratch"}


def test_each_folder_says_what_it_is_and_what_it_may_import():
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc) > 80, init
        if init.parent.name not in ("cli",):
            assert "import" in doc.lower(), init


TESTS = Path(__file__).resolve().parent


def test_tests_mirror_the_package():
    """Each test folder is a layer folder of the package (plus the scripts' tests and the
    shared helpers); the top of tests/ holds the tests of the doors and of the package as a
    whole."""
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    package = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders - {"helpers", "scripts"} <= package
    assert not sorted(package - folders)


def test_no_test_file_is_named_after_a_round_an_issue_or_a_friction():
    assert not sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("test_*.py")
                      if re.search(r"round\d|issue|friction|first_hour", p.stem))


def test_no_test_module_imports_another():
    """What tests share lives in tests/helpers or tests/conftest.py."""
    test_modules = {p.stem for p in TESTS.rglob("test_*.py")}
    offenders = []
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module
                     else [])
            offenders += [(path.name, n) for n in names if n.split(".")[0] in test_modules]
    assert not offenders
