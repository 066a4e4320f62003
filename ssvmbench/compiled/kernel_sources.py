"""The source trees a compiled kernel depends on, and the key of its cached code
(:mod:`ssvmbench.compiled.keyed_cache`).

numba compiles a kernel together with every function it calls or inlines, whichever file
they come from, but re-compiles a cached kernel only when the kernel's own file changes
(BCFW's ``bcfw_steps`` in ``solvers/bcfw.py`` holds the compiled code of the task kernels
it calls). What one specialization of a kernel can compile in, and so what its key digests:

* ssvmbench's own sources (every kernel calls into them);
* the package of the kernel's own module (a plugin's kernel);
* for each class and function its signature names, at any depth (``Problem.data`` is the
  task's data), the package it comes from and, for a task's ``data_type``, the packages of
  the task whose kernels :mod:`ssvmbench.tasks.kernels` dispatches to and of those kernels.

So BCFW compiled for the chain task is keyed by ssvmbench's sources alone, and compiled for
a plugin's task by ssvmbench's and that plugin's: editing the plugin changes the second key
only. A package is read once per :func:`forget` (a run reads the sources as they are when
it starts).
"""

import functools
import hashlib
import sys
from pathlib import Path

from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.core.typing import Signature

from ssvmbench.common.paths import PACKAGE, source_digest
from ssvmbench.tasks import task_of_data


def named(value):
    """The Python classes and functions that a numba signature, type or type key names."""
    if isinstance(value, Signature):
        yield from named(value.args)
    elif isinstance(value, types.Dispatcher):
        yield value.dispatcher.py_func
    elif isinstance(value, types.Type):
        yield from named(value.key)
    elif isinstance(value, tuple):
        for part in value:
            yield from named(part)
    elif isinstance(value, type) and value.__module__ != "builtins":
        yield value


def roots(obj):
    """The folders (or the file) of the top-level package that ``obj`` is defined in; None
    if it has no source file (a class typed in at a prompt)."""
    top = sys.modules.get(obj.__module__.split(".")[0])
    if hasattr(top, "__path__"):
        return tuple(Path(path).resolve() for path in top.__path__)
    file = getattr(top, "__file__", None)
    return (Path(file).resolve(),) if file else None


def compiled_in(py_func, sig):
    """The source roots that ``py_func`` compiled for the argument types ``sig`` depends
    on (a frozenset, ssvmbench's package always in it), or None if one has no source."""
    objects = [py_func]
    for obj in named(sig):
        objects.append(obj)
        task = task_of_data(obj) if isinstance(obj, type) else None
        if task is not None:
            objects += [task, *(kernel.py_func if isinstance(kernel, Dispatcher) else kernel
                                for kernel in task.kernels.values())]
    found = {PACKAGE}
    for obj in objects:
        where = roots(obj)
        if where is None:
            return None
        found.update(where)
    return frozenset(found)


@functools.cache
def digest(root):
    """A digest of the ``.py`` sources under the folder ``root`` (of the file if a file)."""
    if root.is_dir():
        return source_digest(root)
    return hashlib.sha1(root.read_bytes()).hexdigest()[:12]


def forget():
    """Read the sources again at the next :func:`key` (they may have been edited)."""
    digest.cache_clear()


def key(found):
    """The key of the source roots ``found``: their names and digests, not where they are
    installed (a reinstall of the same sources keeps it)."""
    parts = sorted(f"{root.name}:{digest(root)}" for root in found)
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:12]
