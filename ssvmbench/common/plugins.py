"""What other installed packages add through entry points (docs/guide/plugins.md):
solvers (group ``ssvmbench.solvers``: ``NAME = "module:SolverClass"``), datasets
(``ssvmbench.datasets``: ``NAME = "module:loader"``, a function returning a
:class:`~ssvmbench.data.sequences.SplitData`) and metrics (``ssvmbench.metrics``: ``NAME =
"module:metric"``, a :class:`~ssvmbench.tasks.metrics.Metric`)."""

import contextlib
import logging
import os
from importlib.metadata import entry_points

from ssvmbench.common.errors import PluginError, UserError


def load(group, kind, built_in, accept, name_of):
    """``{name: object}`` of the entry points of ``group``; one that does not load, fails
    ``accept`` (whose message ends the error) or takes a built-in's name is refused by name.
    ``name_of(object)``: the name the object itself carries (None: none), which must be its
    entry point's."""
    found = {}
    for point in entry_points(group=group):
        where = f"{kind} plugin '{point.name}' ({point.value}, entry point {group})"
        try:
            value = point.load()
        except Exception as err:           # a plugin's import error, whatever it is
            raise UserError(f"{where} does not load: {type(err).__name__}: {err}") from None
        problem = accept(value)
        if problem:
            raise UserError(f"{where} {problem}")
        own = name_of(value)
        if point.name in built_in or (own is not None and own != point.name):
            raise UserError(f"{where}: the entry point must carry its {kind}'s own name "
                            f"({own or point.name}), and not a built-in's ({sorted(built_in)})")
        found[point.name] = value
    return found


@contextlib.contextmanager
def blamed(culprits, passing=()):
    """Around calls into plugins: an exception raised there is one line naming the plugins
    involved (``culprits``: their descriptions, e.g. ``solver gap_bcfw (plugin m:C, entry
    point ssvmbench.solvers)``; none: built-ins only, and the exception goes through), its
    traceback logged (the run's ``app.log``); ``SSVMBENCH_DEBUG=1`` lets it through. A
    :class:`~ssvmbench.common.errors.UserError`, ``OSError``, ``MemoryError`` and the exceptions
    ``passing`` (a stop, a divergence) go through as they are."""
    try:
        yield
    except (UserError, OSError, MemoryError, *passing):
        raise
    except Exception as err:
        if not culprits or os.environ.get("SSVMBENCH_DEBUG"):
            raise
        who = " or ".join(culprits)
        logging.getLogger("ssvmbench").exception(f"{who} raised")
        raise PluginError(f"{who} raised {type(err).__name__}: {err} (its traceback is in the "
                          "run's app.log; SSVMBENCH_DEBUG=1 shows it here)") from None
