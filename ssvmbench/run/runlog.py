"""HDF5 run log: one file per run, one row per checkpoint and iterate (docs/guide/runs.md).

Columns are 1-D resizable datasets under ``trace/``, grown in blocks while the run writes
and cut to their rows when it ends (so h5py, HDFView or pandas read only real rows); the
number of valid rows is the root attribute ``n_rows``, updated after the data. The file is
flushed after every append, so a run killed even by SIGKILL leaves a readable file with every
checkpoint written so far (its ``status`` stays ``running``); a disk without room for the
next rows (:data:`FREE_MARGIN`) stops the run as interrupted before HDF5 fails. Existing
files are never overwritten: :func:`make_room` skips finished runs and keeps unfinished logs
under another name.
"""

import contextlib
import datetime
import os
import resource
import shutil
import time
import warnings
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import yaml

from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import say
from ssvmbench.run import traces

LOG_NAME = "run.h5"      # a run directory's log
BLOCK = 256
SCHEMA_VERSION = 1
REQUIRED_COLUMNS = ("effective_pass", "iterate", "primal")     # what every plot reads
METADATA = ("solver", "method", "data", "data_variant", "lambda", "l1", "n", "d", "seed", "status",
            "loss", "objective", "git_revision", "dataset_checksum", "overrides", "started",
            "finished", "run_s")


# settings that say how to treat an existing log, not what a run computes: not part of its
# identity (the config it records, runner.identity) nor of a sweep job's directory name
# (configs/config.yaml, hydra.job.config.override_dirname.exclude_keys; batch.sweep_jobs;
# compose.run_dirname)
RUN_CONTROL = ("restart", "reuse_stale")


def override_key(word):
    """The setting a command-line override names: ``+oracle.ties=casimir`` → ``oracle.ties``."""
    return str(word).partition("=")[0].lstrip("+~")


def setting_words(overrides):
    """A run's settings from its recorded overrides (the log's YAML list, or a list of
    words): the words without :data:`RUN_CONTROL` (how it ran, not what)."""
    words = yaml.safe_load(overrides) if isinstance(overrides, str) else overrides
    return [str(word) for word in words or [] if override_key(word) not in RUN_CONTROL]


class Interrupted(Exception):
    """Raised (by the runner's signal handler) to stop a run; the log says ``interrupted``.
    ``signum``: the signal that stopped it (None: not a signal, e.g. a full disk)."""

    def __init__(self, message="", signum=None):
        super().__init__(message)
        self.signum = signum


class LostOwnership(Exception):
    """The run's directory was taken over by another run while this one was paused: it
    stops without writing anything more there."""


class DiskFull(Interrupted):
    """The disk has no room for the next write: the run stops as interrupted, and continues
    when the same command runs again with space freed."""


FREE_MARGIN = 32 * 2**20     # bytes a write must leave free on the disk


def check_space(directory, needed=0, replaced=0):
    """Raise :class:`DiskFull`, saying how much is missing, unless the disk of ``directory``
    has room to write ``needed`` bytes and keep :data:`FREE_MARGIN` free once they replace a
    file of ``replaced`` bytes (the previous version of a state or a log: it stays until the
    new one is whole, so ``needed`` must fit beside it, and then frees its bytes). A
    continued run replacing its saved state therefore needs no more room than the run
    needed for that state in the first place."""
    free = shutil.disk_usage(directory).free
    required = max(needed, needed - replaced + FREE_MARGIN)
    if free < required:
        raise DiskFull(f"the disk of {directory} is full ({_mib(free)} free, {_mib(required)} "
                       f"needed: {_mib(required - free)} missing; free some space and run the "
                       "same command again)")


LOG_GROWTH = 2**20    # bytes one append may add to a log at most (its rows, a new block of
#                       every column, HDF5's bookkeeping)


def check_size_limit(path, size):
    """Raise :class:`DiskFull`, saying how much is missing, if a file of ``size`` bytes at
    ``path`` would pass this process's file size limit (``ulimit -f``): a write past it
    fails, and HDF5 cannot recover from a failed write (its file closes in error, or the
    process crashes)."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and size > limit:
        raise DiskFull(f"{path} would pass the file size limit (ulimit -f) of {_mib(limit)} "
                       f"({_mib(size)} needed: {_mib(size - limit)} missing; raise the limit "
                       "and run the same command again)")


def _mib(size):
    """``size`` bytes in MiB (in KiB below one MiB)."""
    return f"{size / 2**20:.1f} MiB" if abs(size) >= 2**20 else f"{size / 2**10:.0f} KiB"


class NoLogs(UserError):
    """No run log or traces file with rows under the roots given (:func:`load_logs`)."""


class Diverged(Exception):
    """Raised when a logged objective is NaN or infinite; the log says ``diverged``, a
    result like ``finished`` that re-runs keep."""


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _attribute(key, value):
    """An HDF5-storable attribute value: scalars as they are, containers as YAML."""
    if isinstance(value, (dict, list, tuple)):
        return yaml.safe_dump(list(value) if isinstance(value, tuple) else value,
                              sort_keys=False)
    if isinstance(value, (str, int, float, bool, np.generic)):
        return value
    raise TypeError(f"run log attribute {key}={value!r}: use str, int, float, bool, "
                    "dict or list")


class RunLog:
    """Writer: ``with RunLog(path, attrs) as log: log.append({...})``."""

    def __init__(self, path, attrs):
        self.path = Path(path)
        values = {key: _attribute(key, value) for key, value in attrs.items()}
        try:
            self.file = h5py.File(self.path, "x")
        except FileExistsError:
            raise UserError(f"{self.path} already exists; choose another hydra.run.dir "
                            "or delete it") from None
        self.file.attrs.update(values)
        self.file.attrs.update(status="running", started=_now(),
                               schema_version=SCHEMA_VERSION, n_rows=0, run_s=0.0)
        self.trace = self.file.create_group("trace")
        self.columns = None
        self.n_rows = 0
        self.last_calls = 0
        self.ran_before_s, self.opened = 0.0, time.monotonic()
        self.file.flush()

    def append(self, rows):
        """Append rows given as ``{column: 1-D values}``, the same columns every time."""
        columns = {key: np.asarray(values) for key, values in rows.items()}
        if not columns:
            raise ValueError("append needs at least one column")
        if self.columns is None:
            self.columns = set(columns)
        elif set(columns) != self.columns:
            raise ValueError(f"columns {sorted(columns)} differ from {sorted(self.columns)}")
        if any(v.ndim != 1 for v in columns.values()) or len(
                {len(v) for v in columns.values()}) != 1:
            raise ValueError("every column must be 1-D and all of the same length: "
                             + str({key: v.shape for key, v in columns.items()}))
        end = self.n_rows + len(next(iter(columns.values())))
        self._check_owner()
        check_space(self.path.parent, replaced=self.replacing)
        check_size_limit(self.path, os.path.getsize(self.file.filename) + LOG_GROWTH)
        try:
            for key, values in columns.items():
                if key not in self.trace:
                    self._create(key, values.dtype)
                dataset = self.trace[key]
                if dataset.shape[0] < end:
                    dataset.resize((-(-end // BLOCK) * BLOCK,))
                if h5py.check_string_dtype(dataset.dtype):
                    values = values.astype(str).astype(object)
                dataset[self.n_rows:end] = values
            self.file.flush()
        except OSError as err:        # n_rows still counts only the rows fully written
            raise DiskFull(f"could not write {self.path}: {err}") from None
        self.n_rows = end
        if "oracle_calls" in columns:
            self.last_calls = int(columns["oracle_calls"][-1])
        self.file.attrs["n_rows"] = end
        self._count_run_time()
        self.file.flush()

    replacing = 0     # bytes of the log this one is a copy of (reopen): freed when it replaces it

    def _count_run_time(self):
        """Attribute ``run_s``: the seconds this log has been written, summed over the
        sessions of a continued run, so that a run stopped for a while (preempted, Ctrl-C)
        does not count the pause the way ``finished - started`` does. Updated with every
        append and at the end (a SIGKILL loses only the time since the last append). A log
        continued from a version without it keeps none (None: unknown)."""
        if self.opened is not None:
            self.file.attrs["run_s"] = self.ran_before_s + time.monotonic() - self.opened

    def _create(self, key, dtype):
        if dtype.kind in "US":
            dtype = h5py.string_dtype()
        elif dtype.kind in "biu":
            dtype = np.int64
        else:
            dtype = np.float64
        self.trace.create_dataset(key, shape=(0,), maxshape=(None,), chunks=(BLOCK,),
                                  dtype=dtype)

    @classmethod
    def reopen(cls, path, oracle_calls):
        """The log of an interrupted or killed run, to be continued from the solver state
        saved at ``oracle_calls``: its attributes and the rows logged up to that point are
        copied into a fresh file that then replaces it (a SIGKILL in the middle of an HDF5
        write can leave the old file's internals inconsistent), and the status is
        ``running`` again. Rows logged after that point are dropped: the continued run logs
        them again."""
        path = Path(path)
        with h5py.File(path, "r") as old:
            attrs = dict(old.attrs)
            n = int(attrs.get("n_rows", 0))
            calls = old["trace"]["oracle_calls"][:n] if "oracle_calls" in old["trace"] else []
            keep = int(np.sum(np.asarray(calls) <= oracle_calls))
            columns = {key: (data.asstr()[:keep].astype(str)
                             if h5py.check_string_dtype(data.dtype) else data[:keep])
                       for key, data in old["trace"].items()}
        attrs.pop("error", None)
        attrs.pop("finished", None)
        attrs.update(n_rows=0, status="running", resumed=int(attrs.get("resumed", 0)) + 1)
        fresh = path.with_name(path.name + ".resuming")
        fresh.unlink(missing_ok=True)
        size = path.stat().st_size                 # the copy's at most: it fits beside it
        check_space(path.parent, size, replaced=size)
        self = cls.__new__(cls)
        self.path, self.file = path, h5py.File(fresh, "w")
        try:
            self.file.attrs.update(attrs)
            self.trace = self.file.create_group("trace")
            self.columns, self.n_rows, self.last_calls = None, 0, 0
            self.ran_before_s = float(attrs.get("run_s", 0.0))
            self.opened = time.monotonic() if "run_s" in attrs else None
            self.replacing = size
            if keep:
                self.append(columns)
        finally:
            self.file.close()
            self.replacing = 0
        fresh.replace(path)
        self.file = h5py.File(path, "r+")
        self.trace = self.file["trace"]
        return self

    def close(self, status="finished", error=None):
        """Record the final ``status`` (and ``error`` message) and close; idempotent."""
        if not self.file:
            return
        self._check_owner()
        # on a full disk the rows written so far and n_rows stay as they are
        with contextlib.closing(self.file), contextlib.suppress(OSError):
            for dataset in self.trace.values():  # columns as long as their rows, for any reader
                if dataset.shape[0] != self.n_rows:
                    dataset.resize((self.n_rows,))
            self._count_run_time()
            self.file.attrs.update(status=status, finished=_now())
            if error:
                self.file.attrs["error"] = error
            self.file.flush()

    def __enter__(self):
        return self

    guard = None    # called before every write; raises LostOwnership when the log is not ours

    def _check_owner(self):
        if self.guard is not None:
            try:
                self.guard()
            except LostOwnership:
                self.file.close()                # not ours any more: nothing written
                raise

    def __exit__(self, kind, error, traceback):
        if kind is not None and issubclass(kind, LostOwnership):
            self.file.close()
            return False
        if kind is None:
            self.close("finished")
        elif issubclass(kind, (KeyboardInterrupt, Interrupted)):
            self.close("interrupted", str(error) or kind.__name__)
        elif issubclass(kind, Diverged):
            self.close("diverged", str(error))
        else:
            self.close("failed", f"{kind.__name__}: {error}")
        return False


def make_room(path, config, code=None, reuse_stale=False):
    """Whether a run of ``config`` (its resolved YAML) may start writing ``path``, so that a
    re-run sweep redoes only what is missing: ``False`` if ``path`` holds the finished (or
    diverged, or skipped, :func:`write_skipped`) log of this configuration made by the same
    ``code`` (the identity the log records as ``code``: git revision and the versions that
    shape its numbers; ``None``: not compared), or a log that a live process is writing
    (HDF5 keeps it locked); ``True`` if ``path`` is free, after renaming an unfinished log (killed,
    interrupted, failed) or a stale one (other code, unless ``reuse_stale``) to
    ``<path>.<status>-<start time>``, which is kept (an unreadable file: to
    ``<path>.unreadable-<mtime>``). A finished log of another configuration is refused."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as f:
            status, started = f.attrs.get("status"), f.attrs.get("started", "")
            same = f.attrs.get("config") == config
            reason = f.attrs.get("error", "")
            made_by = yaml.safe_load(f.attrs.get("code", "{}")) or {}
    except FileNotFoundError:
        return True
    except BlockingIOError:
        say(f"{path}: being written by another process, skipped")
        return False
    except (OSError, KeyError, RuntimeError, ValueError) as err:   # not HDF5, or truncated
        aside = path.with_name(f"{path.name}.unreadable-{int(path.stat().st_mtime)}")
        path.rename(aside)
        say(f"{path}: not a readable run log ({err}); kept as {aside.name}; running again")
        return True
    if status in ("finished", "skipped", "diverged"):
        if not same:
            raise UserError(f"{path} holds a {status} run of another configuration; choose "
                            "another hydra.run.dir / hydra.sweep.dir or move it away")
        changed = [f"{key} {made_by.get(key, '?')} -> {value}"
                   for key, value in (code or {}).items() if made_by.get(key) != value]
        if not changed or reuse_stale:
            say((f"{path}: {status} already, skipped" if status != "skipped" else
                 f"{path}: skipped already ({reason})")
                + (f" (made by other code, kept: reuse_stale=true; {', '.join(changed)})"
                   if changed else ""))
            return False
        status = "stale"
        say(f"{path}: made by other code ({', '.join(changed)}); running again "
            "(reuse_stale=true keeps it)")
    aside = path.with_name(f"{path.name}.{status}-{started}".replace(":", ""))
    path.rename(aside)
    say(f"{path}: the earlier {status} run is kept as {aside.name}; running again")
    return True


def resumable(path, config, code):
    """Whether ``path`` is the readable log (attributes and rows) of an interrupted or killed
    run of ``config`` made by the same ``code``, that no live process writes (HDF5 keeps a
    live log locked)."""
    try:
        with h5py.File(path, "r") as f:
            n = int(f.attrs.get("n_rows", 0))
            for dataset in f["trace"].values():       # a SIGKILL may have damaged them
                dataset[:n]
            return (f.attrs.get("status") in ("interrupted", "running")
                    and f.attrs.get("config") == config
                    and (yaml.safe_load(f.attrs.get("code", "{}")) or {}) == code)
    except (OSError, BlockingIOError, KeyError, RuntimeError, ValueError):
        return False


def write_skipped(path, attrs, reason):
    """A log without rows, ``status=skipped`` and the ``reason`` as its ``error``: a sweep's
    combination that cannot run (:class:`~ssvmbench.common.errors.Incompatible`), done for re-runs,
    absent from plots."""
    RunLog(path, attrs).close("skipped", reason)


def read_log(path):
    """``(trace DataFrame, attributes dict)`` of one run log, finished or not.

    The HDF5 file lock is not taken, so the log of a running job can be read too (as of
    its last flush)."""
    with h5py.File(path, "r", locking=False) as f:
        attrs = {key: (value.item() if isinstance(value, np.generic) else value)
                 for key, value in f.attrs.items()}
        n = int(attrs.get("n_rows", 0))
        trace = {key: (dataset.asstr()[:n] if h5py.check_string_dtype(dataset.dtype)
                       else dataset[:n])
                 for key, dataset in f["trace"].items()}
    return _default_metric(pd.DataFrame(trace), attrs.get("test_metric")), attrs


def _default_metric(trace, name):
    """``test_metric``, the column of the split's default metric ``name`` (attribute
    ``test_metric``), beside its own column ``test_<name>``: logs written before every
    metric had its own column hold only ``test_metric``."""
    if not name:
        return trace
    own = f"test_{name}"
    if own in trace and "test_metric" not in trace:
        trace["test_metric"] = trace[own]
    elif "test_metric" in trace and own not in trace:
        trace[own] = trace["test_metric"]
    return trace


def find_logs(root):
    """Every ``*.h5`` file under ``root`` (or ``root`` itself if it is one), sorted."""
    root = Path(root)
    return [root] if root.is_file() else sorted(root.rglob("*.h5"))


def load_logs(*roots):
    """All rows of all logs under the ``roots`` as one tidy table, tagged with the run's
    ``solver``, ``method`` (solver and non-default options; the solver if absent),
    ``data``, ``data_variant``, ``lambda``, ``seed``, ``status`` and ``run`` (its path). A
    root that is a traces file (:mod:`ssvmbench.run.traces`) gives the rows it holds."""
    frames = [traces.read(root) for root in roots if traces.is_traces(root)]
    logs = [root for root in roots if not traces.is_traces(root)]
    for path in sorted({path for root in logs for path in find_logs(root)}):
        try:
            trace, attrs = read_log(path)
        except (OSError, KeyError, ValueError, RuntimeError) as err:
            # RuntimeError: h5py read a log in the middle of a write by a running job
            warnings.warn(f"skipping unreadable run log {path}: {err}")
            continue
        missing = [c for c in REQUIRED_COLUMNS if c not in trace] if len(trace) else []
        schema = attrs.get("schema_version", SCHEMA_VERSION)
        if missing or schema != SCHEMA_VERSION:
            warnings.warn(f"skipping run log {path}: " + (
                f"no column {', '.join(missing)}" if missing else
                f"schema version {schema}, this ssvmbench reads {SCHEMA_VERSION}"))
            continue
        attrs.setdefault("method", attrs.get("solver", pd.NA))
        for key in METADATA:
            trace[key] = attrs.get(key, pd.NA)
        trace["run"] = str(path)
        if len(trace):
            frames.append(trace)
    if not frames:
        where = ", ".join(map(str, roots))
        raise NoLogs(f"no run logs (*.h5) or traces (*.parquet) with rows found under "
                        f"{where}; run `ssvmbench run ...` first or check the path")
    table = pd.concat(frames, ignore_index=True)
    table["lambda"] = pd.to_numeric(table["lambda"], errors="coerce").astype(float)
    return table
