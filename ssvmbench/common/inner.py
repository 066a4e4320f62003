"""Kernels that compiled code calls, compiled without numba's entry wrappers.

numba gives every function it compiles two entry points beside the function itself: a
CPython wrapper (unboxing each argument from Python objects, a named tuple of arrays
field by field) and a C wrapper, each lowered, optimized and turned into machine code. A
kernel that only other kernels call never uses them; on the README's first command
(BCFW on OCR, an empty cache) they took about 2 of its 12 seconds of compiling.

:func:`inner` compiles a kernel without them. Called from Python (a test, a prompt), it
runs a twin compiled with them, cached on its own, with the same values."""

import types

from numba.core.registry import CPUDispatcher

_WITHOUT_WRAPPERS = {"nopython": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class InnerKernel(CPUDispatcher):
    """A dispatcher compiled without entry wrappers (:func:`inner`): compiled callers link
    it as any kernel; a call from Python goes to :meth:`from_python`."""

    def from_python(self):
        """The same function compiled with its entry wrappers (made on the first call
        from Python; cached as ``<name>_from_python``)."""
        twin = self.__dict__.get("_twin")
        if twin is None:
            twin = self._twin = CPUDispatcher(_renamed(self.py_func, "_from_python"),
                                              targetoptions={"nopython": True})
            twin.enable_caching()
        return twin

    def __call__(self, *args, **kwargs):
        return self.from_python()(*args, **kwargs)


def _renamed(py_func, suffix):
    """A copy of ``py_func`` whose qualified name (numba's cache file name) ends in
    ``suffix``."""
    copy = types.FunctionType(py_func.__code__, py_func.__globals__, py_func.__name__,
                              py_func.__defaults__, py_func.__closure__)
    copy.__kwdefaults__ = py_func.__kwdefaults__
    copy.__qualname__ = py_func.__qualname__ + suffix
    copy.__module__ = py_func.__module__
    copy.__doc__ = py_func.__doc__
    return copy


def inner(py_func):
    """``@nb.njit(cache=True)`` for a kernel that only compiled code calls (a task's
    helpers, the kernels of :mod:`ssvmbench.tasks.kernels`): no entry wrappers to compile;
    a call from Python still works (:class:`InnerKernel`)."""
    kernel = InnerKernel(py_func, targetoptions=dict(_WITHOUT_WRAPPERS))
    kernel.enable_caching()
    return kernel
