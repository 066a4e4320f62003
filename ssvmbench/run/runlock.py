"""Who is writing a run directory: an explicit lock file beside the run log, so that two runs
never write one log, whatever the file system (HDF5's own locking is often off on NFS and
Lustre: ``HDF5_USE_FILE_LOCKING=FALSE``).

``run.lock`` is created atomically (``O_EXCL``) and holds its owner (host, pid, start time,
SLURM job id and array task, the configuration's hash); a thread refreshes its modification
time every ``HEARTBEAT_S`` seconds. A lock is taken over at once when its owner is gone: on
this host, no such process; on another, a SLURM job that SLURM says has ended, or a node it
says is down. One whose heartbeat is older than ``STALE_S`` is taken over too; any other is
respected. Ages are read by the file system's clock (:func:`ssvmbench.common.file_lock.age_s`), so
nodes whose clocks disagree by minutes neither see a live lock as stale nor keep a dead one. A run checks
that the lock is still its own before every write (:meth:`RunLock.check`): a run paused
(SIGSTOP, a suspended job) until its lock looked stale and was taken over stops with one
line instead of writing into the other run's directory.
"""

import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

from ssvmbench.common import slurm_jobs
from ssvmbench.common.file_lock import age_s
from ssvmbench.common.processes import process_alive
from ssvmbench.run.runlog import LostOwnership

LOCK_NAME = "run.lock"
HEARTBEAT_S = 30
STALE_S = 600


class Busy(Exception):
    """Another live process owns the run directory; ``owner`` says who."""

    def __init__(self, owner, same_config):
        self.owner, self.same_config = owner, same_config
        super().__init__(describe(owner))


def describe(owner):
    job = f", SLURM job {owner['slurm_job']}" if owner.get("slurm_job") else ""
    if owner.get("slurm_task"):
        job += f" (array task {owner['slurm_task']})"
    return f"pid {owner.get('pid')} on {owner.get('host')} since {owner.get('started')}{job}"


class RunLock:
    """``with RunLock(run_dir, config):`` owns ``run_dir`` for the block, or raises
    :class:`Busy`; ``name``: the lock file's (another kind of owner of the same folder,
    e.g. ``reproduce`` of its ``--out``)."""

    def __init__(self, run_dir, config, name=LOCK_NAME):
        self.path = Path(run_dir) / name
        self.config = hashlib.sha256(config.encode()).hexdigest()[:16]
        self._stop = threading.Event()

    def __enter__(self):
        owner = {"host": socket.gethostname(), "pid": os.getpid(),
                 "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
                 "slurm_job": os.environ.get("SLURM_JOB_ID", ""),
                 "slurm_task": _array_task(), "config": self.config}
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                current = self._read()
                if current is None and self._age() < 10:    # its owner is writing it now
                    raise Busy({"pid": "?", "host": "?", "started": "just now"},
                               False) from None
                if current is not None and self._alive(current):
                    raise Busy(current, current.get("config") == self.config) from None
                self.path.unlink(missing_ok=True)     # its owner is gone: take it over
                continue
            with os.fdopen(fd, "w") as out:
                json.dump(owner, out)
            self.owner = owner
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()
            return self
        raise Busy(self._read() or {}, False)

    def check(self):
        """Raise :class:`~ssvmbench.run.runlog.LostOwnership` if the lock is no longer this
        run's (another run took the directory over while this one was paused): another
        owner read from it, or no lock file at all, three times in a row (a network file
        system may fail a read now and then)."""
        for attempt in range(3):
            try:
                current = json.loads(self.path.read_text())
            except FileNotFoundError:
                current = None
            except (OSError, ValueError):
                current = self.owner               # not readable now: no evidence
            if current == self.owner:
                return
            time.sleep(0.1 * attempt)
        if current != self.owner:
            self.lost = current or {}
            raise LostOwnership(
                f"{self.path.parent} was taken over by "
                f"{describe(self.lost) if self.lost else 'another run'} while this run was "
                "paused (its lock looked stale); this run wrote nothing more there")

    def __exit__(self, *exc):
        self._stop.set()
        if self._read() == self.owner:            # never another run's lock
            self.path.unlink(missing_ok=True)
        return False

    def _beat(self):
        while not self._stop.wait(HEARTBEAT_S):
            try:
                os.utime(self.path)
            except OSError:
                return

    def _read(self):
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def _age(self):
        """Seconds since the last heartbeat (infinite if the lock is gone)."""
        return age_s(self.path)

    def _alive(self, owner):
        """Whether the lock's owner may still be running: not if its heartbeat is stale, if
        it was an earlier attempt of this very SLURM job (requeued, so that attempt has
        ended: SLURM runs one at a time), if it was on this host and has no process any
        more, or, on another host, if SLURM says its job has ended or its node is down."""
        if self._age() > STALE_S:
            return False
        job = os.environ.get("SLURM_JOB_ID")
        if job and owner.get("slurm_job") == job and owner.get("pid") != os.getpid():
            return False
        alive = process_alive(owner.get("host"), owner.get("pid", 0))
        if alive is not None:                     # this host: its process says
            return alive
        if owner.get("slurm_job") and slurm_jobs.job_ended(owner["slurm_job"]) is True:
            return False
        return slurm_jobs.node_down(str(owner.get("host"))) is not True


def _array_task():
    """``ARRAYJOB_TASK`` of this SLURM array task, or "" outside one."""
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    return f"{array}_{task}" if array and task else ""
