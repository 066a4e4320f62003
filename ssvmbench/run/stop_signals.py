"""Signals a run turns into a clean stop (SIGTERM, SIGINT, SIGUSR2): recorded by a handler
and raised between steps, so the state is saved and the log closed (docs/guide/cluster.md)."""

import ctypes
import os
import signal
import sys

from ssvmbench.compiled import coldstart
from ssvmbench.run.runlog import Interrupted

CONTINUES = "the same command continues the run"    # what to do after a stop


class Stopped(Exception):
    """A run whose results are complete but that was asked to stop on the way out: the exit
    status to give (128 + the signal)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


class StopSignals:
    """Record SIGTERM, SIGINT and SIGUSR2 (a cluster's warning before its time limit or a
    preemption, submitit's signal) instead of raising inside whatever runs (a compiled solver
    pass, an HDF5 write, numba compiling): :meth:`check`, called between steps, raises
    :class:`Interrupted` (with the signal) once one has arrived, so no signal is lost, the
    state is saved and the run log is closed with ``status=interrupted``. The first signal
    is acknowledged at once on stderr; a second one ends the process at once (the handler is
    one-shot at the C level, so this holds even inside compiled code that never returns to
    Python), and the run continues later from its last saved checkpoint."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR2)
    one_shot = True     # False in a batch's workers: their parent kills them on a second
    #                     signal, and a dying parent's death signal may come more than once

    def __enter__(self):
        self.received = None

        def handler(signum, frame):
            if self.received is None:                  # the first: a second ends it
                self.received = signum
                os.write(2, f"ssvmbench run: {signal.Signals(signum).name}: "
                            f"{acknowledgement()}\n".encode())
        self._previous = {sig: signal.signal(sig, handler) for sig in self.SIGNALS}
        for sig in self.SIGNALS if self.one_shot else ():
            one_shot(sig)
        return self

    def check(self):
        if self.received is not None:
            raise Interrupted(f"received signal {self.received} "
                              f"({signal.Signals(self.received).name})", self.received)

    def __exit__(self, *exc):
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        return False


def acknowledgement():
    """What a run does on its first stop signal: stop at the next step, or, while numba
    compiles (which no signal interrupts), once the compile is done, with how long it is
    expected to take (:func:`~ssvmbench.compiled.coldstart.compiling`)."""
    now = coldstart.compiling()
    when = ("at the next step" if now is None else
            f"once the kernels are compiled (~{now[0]:.0f} s expected, {now[1]:.0f} s so far)")
    return f"stopping {when} with the state saved; {CONTINUES} (again to stop at once)"


class _SigAction(ctypes.Structure):
    """glibc's ``struct sigaction`` (Linux)."""
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


def one_shot(sig):
    """Linux: make the handler now installed for ``sig`` one-shot at the C level
    (``SA_RESETHAND``): once it has been delivered, the next ``sig`` has its default action
    (the process ends), whether or not Python got to run the handler."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    action = _SigAction()
    if libc.sigaction(int(sig), None, ctypes.byref(action)) == 0:
        action.flags |= -0x80000000                       # SA_RESETHAND, as a C int
        libc.sigaction(int(sig), ctypes.byref(action), None)
