"""The package's import structure: no cycles among ssvmbench's modules (imports inside
functions count: a circle of them is a circle all the same), and data modules independent of
the tasks and solvers that consume them."""

import ast
from pathlib import Path

import ssvmbench

PACKAGE = Path(ssvmbench.__file__).parent


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """The ssvmbench modules a file imports, at module level or inside functions (``from a
    import b`` counts as ``a.b`` when ``a.b`` is a module, else ``a``)."""
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
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
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def test_data_modules_import_no_tasks_or_solvers():
    offenders = {module: sorted(i for i in imports
                                if i.startswith(("ssvmbench.tasks", "ssvmbench.solvers")))
                 for module, imports in _graph().items() if module.startswith("ssvmbench.data")}
    assert not {m: i for m, i in offenders.items() if i}


def test_no_import_cycles():
    graph = _graph()
    state, cycles = {}, []

    def visit(module, stack):
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if target == module:
                continue
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles


def test_the_graph_follows_from_imports_to_modules():
    """The graph reader follows ``from a import b`` to the module a.b (so the test above can
    fail): ssvmbench.report imports ssvmbench.presets."""
    assert "ssvmbench.presets" in _graph()["ssvmbench.report"]


def test_solvers_import_no_task_module():
    """A solver reaches a task only through the seam (issue 30): the task contract, the
    registry, the kernel API and the oracle settings; never a task's own module."""
    seam = {"ssvmbench.tasks", "ssvmbench.tasks.base", "ssvmbench.tasks.kernels",
            "ssvmbench.tasks.oracles"}
    offenders = {module: sorted(i for i in imports
                                if i.startswith("ssvmbench.tasks") and i not in seam)
                 for module, imports in _graph().items() if module.startswith("ssvmbench.solvers")}
    assert not {m: i for m, i in offenders.items() if i}


def test_imports_inside_functions_count():
    """The graph reads imports inside functions (so a circle made of them fails the test
    above): ssvmbench.cli imports the Hydra app only inside its run command."""
    assert "ssvmbench.app" in _graph()["ssvmbench.cli"]
