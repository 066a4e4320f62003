"""A run directory's lifecycle in one place: who owns it (:class:`~ssvmbench.run.runlock.RunLock`),
whether its run is done (skipped), continues from its saved state or starts afresh (earlier
logs kept aside, :func:`~ssvmbench.run.runlog.make_room`), its log, its saved state and its final
weights (docs/guide/runs.md)."""

import contextlib
import pickle
from pathlib import Path

import numpy as np

from ssvmbench.common.files import write_atomically
from ssvmbench.common.messages import say
from ssvmbench.run.provenance import code_identity
from ssvmbench.run.runlock import RunLock
from ssvmbench.run.runlog import (LOG_NAME, DiskFull, RunLog, check_size_limit, check_space,
                                  make_room, resumable, write_skipped)

STATE_NAME = "state.pkl"

MESSAGES_NAME = "app.log"    # a run's messages (and a plugin's traceback) beside its log


def read_state(path):
    """The saved state at ``path``, or None if it does not read (a truncated or foreign
    file): then it is kept aside as ``state.pkl.unreadable-<mtime>`` and the run starts
    afresh, saying so in one line."""
    try:
        with open(path, "rb") as saved:
            state = pickle.load(saved)
        if isinstance(state, dict) and {"solver", "clock"} <= set(state):
            return state
        problem = "not a solver state"
    except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError,
            IndexError, pickle.UnpicklingError) as err:
        problem = f"{type(err).__name__}: {err}"
    aside = path.with_name(f"{path.name}.unreadable-{int(path.stat().st_mtime)}")
    path.rename(aside)
    say(f"{path}: the saved state does not read ({problem}); kept as {aside.name}, the run "
        "starts afresh")
    return None


def _save(path, content, write, ready=None):
    """:func:`~ssvmbench.common.files.write_atomically` after checking the disk has room for
    ``content`` (the bytes of every array in it) beside the previous version of ``path``,
    which it replaces (:func:`~ssvmbench.run.runlog.check_space`), and that the file size
    limit allows them (:func:`~ssvmbench.run.runlog.check_size_limit`); a failed write raises
    :class:`~ssvmbench.run.runlog.DiskFull` (saying that the previous version is intact)."""
    previous, size = path.stat().st_size if path.exists() else 0, array_bytes(content)
    check_space(path.parent, size, replaced=previous)
    check_size_limit(path, size)
    try:
        write_atomically(path, write, ready)
    except OSError as err:
        raise DiskFull(str(err)) from None


def array_bytes(content):
    """The bytes of every NumPy array in ``content``, however deep (dicts, lists, tuples,
    objects' attributes): about what pickling it writes (a solver's averaged iterates and
    index blocks included, not only its top-level arrays)."""
    seen, total, stack = set(), 0, [content]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes
        elif isinstance(item, dict):
            stack += item.values()
        elif isinstance(item, (list, tuple)):
            stack += item
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            stack += vars(item).values()
    return total


def save_state(path, solver, clock, ready=None):
    """The solver's state and the clocks, written atomically beside the run log (``ready``:
    :func:`~ssvmbench.common.files.write_atomically`'s check before the new file replaces the
    old)."""
    state = {"solver": solver.state_dict(), "clock": dict(clock)}
    _save(path, state, lambda out: pickle.dump(state, out, protocol=pickle.HIGHEST_PROTOCOL),
          ready)


WEIGHTS_NAME = "weights.npz"


def save_weights(path, solver):
    """The final weights of every logged iterate (``raw``, ``wavg``, …; float64, compressed)
    beside the run log, written atomically: ``np.load(path)["wavg"]`` is a trained model
    for ``make_task(split).evaluate(w)``."""
    weights = {name: w for name, w, _ in solver.iterates()}
    _save(path, weights, lambda out: np.savez_compressed(out, **weights))


class RunDirectory:
    """``with RunDirectory(run_dir, config) as here:`` owns ``run_dir`` for the block (or
    raises :class:`~ssvmbench.run.runlock.Busy`); ``config`` is the run's resolved YAML. Every
    write checks first that the directory is still ours (:meth:`owned`)."""

    def __init__(self, run_dir, config, restart=False, reuse_stale=False):
        run_dir = Path(run_dir)
        self.log_path = run_dir / LOG_NAME
        self.state_path = run_dir / STATE_NAME
        self.weights_path = run_dir / WEIGHTS_NAME
        self.config = config
        self.code = code_identity()
        self.restart, self.reuse_stale = restart, reuse_stale
        self._lock = RunLock(run_dir, config)

    def __enter__(self):
        self._lock.__enter__()
        return self

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def owned(self):
        """Raise :class:`~ssvmbench.run.runlog.LostOwnership` if the directory is no longer
        ours."""
        self._lock.check()

    def begin(self):
        """``(go, state)``: ``go`` False if the directory holds this run done already (to
        skip); else ``state``, the saved state of this run stopped earlier to continue from,
        or None to start afresh (an earlier log of another status kept aside)."""
        if (not self.restart and self.state_path.exists()
                and resumable(self.log_path, self.config, self.code)):
            state = read_state(self.state_path)
            if state is not None:
                return True, state
        if not make_room(self.log_path, self.config, self.code, self.reuse_stale):
            return False, None
        self.state_path.unlink(missing_ok=True)
        return True, None

    def skip(self, attrs, reason):
        """Leave a log saying the run cannot run here and why (``status=skipped``)."""
        write_skipped(self.log_path, {"config": self.config, **attrs, "code": self.code},
                      reason)

    def open_log(self, attrs, continue_from=None):
        """The run log: new with ``attrs``, or the stopped one continued from
        ``continue_from`` oracle calls (its rows beyond them dropped)."""
        log = (RunLog(self.log_path, attrs) if continue_from is None
               else RunLog.reopen(self.log_path, continue_from))
        log.guard = self.owned
        return log

    def save_state(self, solver, clock):
        """:func:`save_state`, replacing the saved state only if the directory is still
        ours when the new one is written (a pause during the write may outlast the lock)."""
        save_state(self.state_path, solver, clock, ready=self.owned)

    def save_weights(self, solver):
        self.owned()
        save_weights(self.weights_path, solver)

    def interrupted(self, solver, clock):
        """A stopped run's state saved for its continuation (a full disk keeps the last
        periodic one)."""
        self.owned()
        with contextlib.suppress(DiskFull):
            save_state(self.state_path, solver, clock, ready=self.owned)

    def ended(self):
        """The run finished or diverged: its saved state goes."""
        self.state_path.unlink(missing_ok=True)
