"""``ssvmbench status DIR``: where a batch of runs stands, from any shell at any time (the
submitting command attached, detached or gone; local or SLURM), read from the files alone:
the batch's plan (:mod:`ssvmbench.batch.plan`), each run folder's lock
(:mod:`ssvmbench.run.runlock`), log attributes (:mod:`ssvmbench.run.runlog`) and messages
(``app.log``), and, under SLURM, the array's task states from ``squeue``.

A run is

- *running*: its ``run.lock`` has a live owner (a fresh heartbeat, and on this host a
  process of that pid), or SLURM runs its task;
- *pending*: planned, not started (no log), and SLURM (if any) has not ended its task;
- *requeued*: SLURM has its task waiting again after it ran (a time limit, a preemption);
- *held*: SLURM holds its task until someone releases or cancels it;
- *finished*, *diverged*, *skipped*, *failed*, *interrupted*: as its log says (a log that says
  running with no live owner: killed, i.e. interrupted; no log, an error in ``app.log``:
  failed with that line).

The time left: each outstanding run's passes to go (solver.passes minus the last logged
effective pass) times its seconds per pass so far (``run_s`` over its passes), else the
median seconds per pass of the runs that have some, else the plan's expected seconds, the
median finished run's seconds or the median planned passes at the median seconds per pass;
the wall time takes them on as many workers as run now, longest first. Reading is cheap on
purpose: a few HDF5 attributes and one number per log (of a sample of the finished runs),
the lock file, ``app.log`` only of runs that have no log or run now; no pandas, no Hydra.
"""

import contextlib
import dataclasses
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np

from ssvmbench.batch.plan import PLAN_NAME, read_plan
from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import duration
from ssvmbench.common.processes import process_alive

# the run folder's files (runlog.LOG_NAME, runlock.LOCK_NAME, rundir.MESSAGES_NAME) and the
# lock's staleness (runlock.STALE_S), here as values so that status imports neither pandas
# nor the run machinery (tests/batch/test_status.py checks they agree)
LOG_NAME, LOCK_NAME, MESSAGES_NAME, STALE_S = "run.h5", "run.lock", "app.log", 600
STARTING_S = 10              # a lock file this young and still empty: its owner writes it now
SUBMITIT = ".submitit"

STATES = ("finished", "diverged", "running", "pending", "requeued", "held", "failed",
          "interrupted", "skipped")
SHOWN_ALWAYS = ("finished", "running", "pending", "requeued", "failed", "interrupted",
                "skipped")
OUTSTANDING = ("running", "pending", "requeued")    # what the time left counts
REASONS_SHOWN = 20
SAMPLED = 200                # finished runs whose seconds per pass are read, at most about

SLURM_RUNNING = {"RUNNING", "COMPLETING", "CONFIGURING", "STAGE_OUT", "SIGNALING",
                 "RESIZING"}
SLURM_WAITING = {"PENDING", "REQUEUED", "REQUEUE_FED"}
SLURM_HELD = {"REQUEUE_HOLD": "held by SLURM after a requeue",
              "SPECIAL_EXIT": "held by SLURM (special exit)",
              "SUSPENDED": "suspended by SLURM", "STOPPED": "stopped by SLURM"}
SLURM_ENDED = {"CANCELLED": "cancelled", "PREEMPTED": "preempted", "TIMEOUT": "time limit",
               "NODE_FAIL": "node failure", "FAILED": "failed", "OUT_OF_MEMORY":
               "out of memory", "BOOT_FAIL": "node boot failure", "DEADLINE": "deadline",
               "REVOKED": "revoked"}


def configure_parser(parser):
    parser.add_argument("dir", metavar="DIR",
                        help="a sweep folder (hydra.sweep.dir of `ssvmbench run -m`), the --out "
                             "folder of `ssvmbench reproduce`, or any folder of run folders")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (counts, time left, every run with its "
                             "state and reason, the SLURM array, the report) for scripts")


def main(args):
    started = time.perf_counter()
    found = status(args.dir)
    found["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        print(text(found))
    return 0


# -- the files -------------------------------------------------------------------------

def scan(root):
    """``(run folders, plan files)`` under ``root``: a run folder holds a run log, a lock or
    (only) messages; run folders are not searched further, nor ``.submitit`` and other
    hidden folders."""
    runs, plans, stack = [], [], [str(root)]
    while stack:
        here = stack.pop()
        names, subdirs = set(), []
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    names.add(entry.name)
                    if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
        except (NotADirectoryError, PermissionError, FileNotFoundError):
            continue
        if PLAN_NAME in names:
            plans.append(Path(here) / PLAN_NAME)
        if LOG_NAME in names or LOCK_NAME in names or (
                MESSAGES_NAME in names and not subdirs and PLAN_NAME not in names):
            runs.append((here, names))
            continue
        stack.extend(subdirs)
    return runs, plans


def lock_state(run_dir, this_host=None):
    """``(state, owner)`` of the run folder's lock: state ``live`` (its owner may still run:
    a fresh heartbeat and, on this host, a process of its pid), ``stale`` (no heartbeat for
    :data:`STALE_S`), ``gone`` (on this host, no such process) or None (no lock)."""
    path = Path(run_dir) / LOCK_NAME
    try:
        age = time.time() - path.stat().st_mtime
        owner = json.loads(path.read_text())
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError):
        return ("live" if age < STARTING_S else "gone"), None
    if not isinstance(owner, dict):
        return "gone", None
    if age > STALE_S:
        return "stale", owner
    if process_alive(owner.get("host"), owner.get("pid", 0), this_host) is False:
        return "gone", owner
    return "live", owner


def _planned_passes(config):
    """``solver.passes`` of a run's resolved YAML, read without a YAML parser (a direct
    child of the top-level ``solver:``), or None."""
    if not isinstance(config, str):
        return None
    match = re.search(r"^solver:\n(?:[ ].*\n)*?  passes: *([0-9.eE+-]+) *$", config,
                      flags=re.MULTILINE)
    try:
        return float(match.group(1)) if match else None
    except ValueError:
        return None


_FAPL = None


def _file_access():
    """HDF5 file-access settings for reading logs that runs may be writing: no file lock
    (as :func:`ssvmbench.run.runlog.read_log`), every handle closed with the file."""
    global _FAPL
    if _FAPL is None:
        _FAPL = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        _FAPL.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
        _FAPL.set_file_locking(False, True)
    return _FAPL


def read_run_log(path, detail=True):
    """The attributes ``status`` needs of the log at ``path``: ``status``; with ``detail``
    or for a run not done, also ``run_s``, ``error``, ``resumed``, the planned passes
    and the last logged effective pass (``done``; the trace's one number read). Raises
    OSError and the like if it does not read. (h5py's low-level calls: a third of the
    time of its ``File`` and ``attrs``, which matters for thousands of logs.)"""
    fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY, fapl=_file_access())
    try:
        info = {"status": _attr(fid, b"status"), "run_s": None, "done": None,
                "passes": None}
        if detail or info["status"] not in ("finished", "diverged"):
            for key in ("run_s", "error", "resumed"):
                info[key] = _attr(fid, key.encode())
            info["passes"] = _planned_passes(_attr(fid, b"config"))
            n = int(_attr(fid, b"n_rows") or 0)
            if n:
                with contextlib.suppress(KeyError):
                    info["done"] = float(h5py.File(fid)["trace/effective_pass"][n - 1])
    finally:
        fid.close()
    return info


def _attr(fid, name):
    """The file's root attribute ``name`` (bytes) as a plain value, or None."""
    try:
        attribute = h5py.h5a.open(fid, name)
    except KeyError:
        return None
    value = np.empty(attribute.shape, dtype=attribute.dtype)
    attribute.read(value)
    return _plain(value[()])


def _plain(value):
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value.item() if hasattr(value, "item") else value


def last_error(messages, level="ERROR"):
    """The last ``level`` line of a run's ``app.log`` (None: of any level), without its
    prefix, or ''."""
    try:
        with open(messages, "rb") as f:
            f.seek(max(0, os.path.getsize(messages) - 65536))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    mark = f"][{level}] - " if level else "] - "
    for line in reversed(lines):
        if mark in line:
            return line.split(mark, 1)[1].strip()
    return ""


def _since(started):
    """Seconds since a lock's ``started`` (its owner's local time, ISO), or None."""
    try:
        return max(0.0, time.time() - time.mktime(time.strptime(started,
                                                                  "%Y-%m-%dT%H:%M:%S")))
    except (TypeError, ValueError, OverflowError):
        return None


def _one_line(reason):
    reason = " ".join(str(reason or "").split())
    return reason if len(reason) <= 300 else reason[:297] + "..."


# -- SLURM -----------------------------------------------------------------------------

def slurm_array(plan_path, plan):
    """``(array id, parallelism)`` of the SLURM array a plan's batch submitted (submitit's
    ``.submitit/ID/ID_submission.sh`` beside the plan, written after it, with as many tasks
    as the plan has runs), or None."""
    folder = Path(plan_path).parent / SUBMITIT
    try:
        written = Path(plan_path).stat().st_mtime
        candidates = sorted((int(entry.name) for entry in os.scandir(folder)
                             if entry.name.isdigit()), reverse=True)
    except OSError:
        return None
    for array in candidates:
        script = folder / str(array) / f"{array}_submission.sh"
        try:
            if script.stat().st_mtime < written - 5:
                continue
            match = re.search(r"^#SBATCH --array=0-(\d+)(?:%(\d+))?", script.read_text(),
                              flags=re.MULTILINE)
        except OSError:
            continue
        if match and int(match.group(1)) + 1 == len(plan["runs"]):
            return str(array), int(match.group(2) or len(plan["runs"]))
    return None


def squeue_states(array):
    """``{task index: (state, reason)}`` SLURM lists for the array (ended tasks for a while,
    then none), or None if ``squeue`` is absent or does not answer."""
    if not shutil.which("squeue"):
        return None
    try:
        out = subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%i|%T|%r", "-j",
                              array], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return {} if "Invalid job id" in out.stderr else None
    states = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[0].startswith(f"{array}_"):
            index = parts[0].split("_", 1)[1]
            if index.isdigit():
                states[int(index)] = (parts[1], parts[2])
    return states


# -- one run -----------------------------------------------------------------------------

@dataclasses.dataclass
class _Run:
    """What :func:`classify` reads of one run folder: its record so far, its lock's state and
    owner, its log's attributes and status, and SLURM's word on its task."""

    record: dict
    names: set
    lock: str | None
    owner: dict | None
    info: dict | None
    slurm_state: str | None
    slurm_reason: str
    task: str | None

    @property
    def status(self):
        return (self.info or {}).get("status")

    @property
    def ended(self):
        """What SLURM says ended its task (``time limit``, ...), or ''."""
        return SLURM_ENDED.get(self.slurm_state, "")

    def messages(self):
        return os.path.join(self.record["dir"], MESSAGES_NAME)


def classify(run_dir, names=None, planned=False, slurm=None, this_host=None, detail=True):
    """One run's record: ``dir``, ``state`` (:data:`STATES`), ``reason``, ``done`` (last
    logged effective pass), ``passes`` (planned), ``run_s``; ``slurm``: its task's
    ``(state, reason[, task id])`` from squeue, if known. Without ``detail``, a finished run's
    ``run_s``, ``done`` and ``passes`` are not read (None). The first of the rules below that
    applies decides (a live owner or SLURM's running task first, then SLURM's holds and
    queue, then the log, then what a run that ended early left)."""
    run = _read(str(run_dir), names, slurm, this_host, detail)
    for rule in (_running, _held, _waiting, _logged, _killed, _unreadable):
        if rule(run):
            return run.record
    _ended_early(run, planned)
    return run.record


def _read(run_dir, names, slurm, this_host, detail):
    """The :class:`_Run` of the folder ``run_dir`` (``names``: its entries, if known)."""
    if names is None:
        try:
            names = set(os.listdir(run_dir))
        except OSError:
            names = set()
    record = {"dir": run_dir, "state": "pending", "reason": "", "done": None,
              "passes": None, "run_s": None}
    lock, owner = lock_state(run_dir, this_host) if LOCK_NAME in names else (None, None)
    info = None
    if LOG_NAME in names:
        try:
            info = read_run_log(os.path.join(run_dir, LOG_NAME), detail)
        except Exception as err:          # being replaced now (a continued run), or damaged
            info = {"status": "unreadable", "error": f"{type(err).__name__}: {err}"}
        record.update({key: info.get(key) for key in ("done", "passes", "run_s")})
    slurm_state, slurm_reason, task = (tuple(slurm) + (None,))[:3] if slurm else (None, "",
                                                                                None)
    if slurm is not None:
        record["slurm"] = f"{slurm_state} ({slurm_reason})" if slurm_reason not in (
            "", "None") else slurm_state
        if task:
            record["slurm_task"] = task
    if lock == "live" and (slurm_state in SLURM_ENDED or slurm_state == "COMPLETED"):
        lock = "gone"                 # SLURM says its task has ended (a lost node, a kill)
    return _Run(record, names, lock, owner, info, slurm_state, slurm_reason, task)


def _running(run):
    """A live owner, or SLURM runs its task: the pass it is at (else what it is doing) and
    who runs it."""
    if not (run.lock == "live" or run.slurm_state in SLURM_RUNNING):
        return False
    record, owner = run.record, run.owner
    record["state"] = "running"
    parts = []
    if record["done"] is not None:
        parts.append(f"pass {record['done']:g}" + (f" of {record['passes']:g}"
                                                   if record["passes"] else ""))
    else:                                 # not logging yet: what it is doing
        news = last_error(run.messages(), None)
        if not news or news.startswith("ssvmbench run: solver="):    # its first line
            news = "starting"
        parts.append(_one_line(news if len(news) <= 100 else news[:97] + "..."))
    if owner:
        since = _since(owner.get("started"))
        parts.append(f"pid {owner.get('pid')} on {owner.get('host')}"
                     + (f" for {duration(since)}" if since is not None else "")
                     + (f", SLURM job {owner['slurm_job']}" if owner.get("slurm_job")
                        else ""))
    elif run.task:
        parts.append(f"SLURM task {run.task}")
    record["reason"] = "; ".join(parts)
    return True


def _held(run):
    """SLURM holds its task: how to release or cancel it."""
    if not (run.slurm_state in SLURM_HELD
            or (run.slurm_state == "PENDING" and "Held" in run.slurm_reason)):
        return False
    task = run.task or "ID"
    run.record["state"] = "held"
    run.record["reason"] = (SLURM_HELD.get(run.slurm_state,
                                           f"held by SLURM ({run.slurm_reason})")
                            + f": release it (scontrol release {task}) or cancel it "
                            f"(scancel {task})")
    return True


def _waiting(run):
    """SLURM has its task in the queue: pending, or requeued once it has run."""
    if run.slurm_state not in SLURM_WAITING:
        return False
    record = run.record
    started = run.status in ("running", "interrupted") or run.slurm_state != "PENDING"
    record["state"] = "requeued" if started else "pending"
    where = (f"stopped at pass {record['done']:g}" + (
        f" of {record['passes']:g}" if record["passes"] else "")
        if started and record["done"] is not None else "")
    waits = "" if run.slurm_reason in ("None", "") else f"SLURM: {run.slurm_reason}"
    record["reason"] = "; ".join(part for part in (where, waits) if part)
    return True


def _logged(run):
    """Its log says how it ended: that, with the error of a run that did not finish."""
    status = run.status
    if status not in ("finished", "diverged", "skipped", "failed", "interrupted"):
        return False
    record = run.record
    record["state"] = status
    if status != "finished":
        record["reason"] = _one_line(run.info.get("error") or (
            last_error(run.messages()) if status == "failed" else ""))
    if status == "interrupted" and run.ended:
        record["reason"] = _one_line(f"{run.ended}: {record['reason']}".rstrip(": "))
    return True


def _killed(run):
    """Its log says running and nobody owns it: killed, or paused past its heartbeat."""
    if run.status != "running":
        return False
    owner = run.owner or {}
    why = {"stale": f"its owner (pid {owner.get('pid')} on {owner.get('host')}) has sent no "
                    f"heartbeat for {STALE_S // 60} min",
           "gone": "its process is gone"}.get(run.lock, "no process owns it")
    run.record["state"] = "interrupted"
    run.record["reason"] = (f"{run.ended}; " if run.ended else "") + \
        f"killed: its log says running but {why}; the same command continues it"
    return True


def _unreadable(run):
    if run.status != "unreadable":
        return False
    run.record["state"] = "failed"
    run.record["reason"] = _one_line(f"its log does not read: {run.info['error']}")
    return True


def _ended_early(run, planned):
    """No log: started and ended before its log began (its last error, or SLURM's word), a
    planned run starting now, or nothing written yet (pending)."""
    if not (MESSAGES_NAME in run.names or run.ended):
        return
    record = run.record
    error = last_error(run.messages())
    record["state"] = ("interrupted" if error.startswith("ssvmbench run: interrupted")
                       or (not error and run.slurm_state in ("CANCELLED", "PREEMPTED",
                                                             "TIMEOUT")) else "failed")
    record["reason"] = _one_line(error or (f"SLURM: {run.ended}" if run.ended else
                                           "ended before its log began"))
    if not error and not run.ended and planned:
        record["state"], record["reason"] = "pending", "starting"


# -- the whole folder --------------------------------------------------------------------

def status(root):
    """Everything ``ssvmbench status ROOT`` prints, as a dict (the ``--json`` output)."""
    root = Path(root)
    if not root.exists():
        raise UserError(f"{root}: no such folder; give a sweep folder (hydra.sweep.dir), "
                        "the --out folder of `ssvmbench reproduce`, or a folder of run folders")
    if not root.is_dir():
        raise UserError(f"{root} is a file; give the folder that holds the run folders")
    this_host, given, root = socket.gethostname(), root, Path(os.path.abspath(root))
    folders, plan_paths = scan(root)
    plans = [(path, plan) for path, plan in ((p, read_plan(p)) for p in plan_paths) if plan]
    if not folders and not plans:
        raise UserError(f"{root} holds no run folders (with {LOG_NAME}, {LOCK_NAME} or "
                        f"{MESSAGES_NAME}) and no batch plan ({PLAN_NAME}); give a sweep folder "
                        "(hydra.sweep.dir), the --out folder of `ssvmbench reproduce`, or a "
                        "folder of run folders")
    names = {os.path.normpath(path): found for path, found in folders}
    expected, slurm_of, batches, arrays = {}, {}, [], []
    for path, plan in plans:
        batch = {"plan": str(path), "written": plan.get("written"), "runs": len(plan["runs"]),
                 "host": plan.get("host"), "pid": plan.get("pid"),
                 "submitter_alive": _alive(plan, this_host)}
        array = slurm_array(path, plan)
        if array:
            states = squeue_states(array[0])
            batch["slurm"] = {"array": array[0], "parallelism": array[1],
                              "squeue": states is not None}
            arrays.append(batch["slurm"])
        for index, run in enumerate(plan["runs"]):
            expected[run["dir"]] = float(run.get("expected_s") or 0.0)
            if array and states is not None:
                slurm_of[run["dir"]] = (*states.get(index, ("ENDED", "")),
                                        f"{array[0]}_{index}")
        batches.append(batch)
    runs, every = [], max(1, len(names) // SAMPLED)
    prefix = os.path.join(os.path.normpath(root), "")
    for k, run_dir in enumerate(sorted(set(names) | set(expected))):
        slurm = slurm_of.get(run_dir)
        if slurm is not None and slurm[0] == "ENDED":
            slurm = None                      # SLURM lists it no more: the folder says
        record = classify(run_dir, names.get(run_dir, set()), run_dir in expected, slurm,
                          this_host, detail=k % every == 0)
        record["expected_s"] = expected.get(run_dir, 0.0)
        record["dir"] = (run_dir[len(prefix):] if run_dir.startswith(prefix)
                         else os.path.relpath(run_dir, root))
        runs.append(record)
    counts = {state: sum(1 for run in runs if run["state"] == state) for state in STATES}
    result = {"dir": str(given), "runs_total": len(runs), "counts": counts,
              "time_left": time_left(runs, arrays), "batches": batches,
              "report": report_paths(root), "runs": runs}
    return result


def _alive(plan, this_host):
    """Whether the process that wrote ``plan`` still runs (None: another host, unknown)."""
    return process_alive(plan.get("host"), plan.get("pid", 0), this_host)


def report_paths(root):
    """The report of a ``reproduce --out`` folder (``report.md``, ``report.html``) with when
    it was written, if there is one (also for ROOT being its ``logs`` folder)."""
    for folder in (root, root.parent if root.name == "logs" else None):
        if folder is None:
            continue
        found = [folder / name for name in ("report.md", "report.html")
                 if (folder / name).is_file()]
        if found:
            written = time.strftime("%Y-%m-%d %H:%M", time.localtime(
                max(path.stat().st_mtime for path in found)))
            return {"paths": [str(path) for path in found], "written": written}
    if (root / "logs").is_dir():
        return {"paths": [], "written": None}     # a reproduction's: not written yet
    return None


# -- the time left -----------------------------------------------------------------------

def remaining_s(run, rate, typical_s, typical_passes=None):
    """Seconds ``run`` needs still: its passes to go at its own seconds per pass (else at
    ``rate``, the median over the runs), else its expected seconds, else ``typical_s`` (the
    median finished run's), else ``typical_passes`` (the median planned) at ``rate``; None
    if nothing is known."""
    done, passes, run_s = run.get("done"), run.get("passes"), run.get("run_s")
    own = run_s / done if done and run_s else None
    if passes is not None and (own or rate):
        return max(0.0, (passes - (done or 0.0)) * (own or rate))
    if run.get("expected_s"):
        return max(0.0, run["expected_s"] - (run_s or 0.0))
    if typical_s is None and rate and typical_passes:
        return typical_passes * rate
    return typical_s


def wall_s(running, queued, workers):
    """Seconds until ``running`` (their seconds left) and ``queued`` (each run's seconds)
    are done on ``workers``, each worker taking the longest run left when it is free."""
    free = sorted(running) + [0.0] * max(0, workers - len(running))
    for seconds in sorted(queued, reverse=True):
        k = free.index(min(free))
        free[k] += seconds
    return max(free) if free else 0.0


def time_left(runs, arrays=()):
    """The time-left estimate of :func:`status` (see the module's docstring)."""
    measured = [run for run in runs
                if run["state"] in ("finished", "diverged", "running", "requeued")
                and run.get("done") and run.get("run_s")]
    rate = statistics.median(run["run_s"] / run["done"] for run in measured) \
        if measured else None
    finished = [run["run_s"] for run in runs if run["state"] in ("finished", "diverged")
                and run.get("run_s")]
    typical_s = statistics.median(finished) if finished else None
    planned = [run["passes"] for run in runs if run.get("passes")]
    typical_passes = statistics.median(planned) if planned else None
    left = {state: [] for state in OUTSTANDING}
    unknown = 0
    for run in runs:
        if run["state"] in OUTSTANDING:
            seconds = remaining_s(run, rate, typical_s, typical_passes)
            if seconds is None:
                unknown += 1
            else:
                left[run["state"]].append(seconds)
    running = len([run for run in runs if run["state"] == "running"])
    limit = min((array["parallelism"] for array in arrays), default=None)
    workers = min(running, limit) if limit else running
    outstanding = sum(len(v) for v in left.values()) + unknown
    result = {"runs": outstanding, "not_estimated": unknown,
              "run_s": round(sum(sum(v) for v in left.values()), 1),
              "workers": workers or None,
              "seconds_per_pass": round(rate, 4) if rate else None,
              "measured_runs": len(measured), "wall_s": None}
    if outstanding > unknown and workers:
        result["wall_s"] = round(wall_s(left["running"], left["pending"] + left["requeued"],
                                        workers), 1)
    return result


# -- the text ----------------------------------------------------------------------------

def text(found):
    """The lines ``ssvmbench status`` prints."""
    counts, runs = found["counts"], found["runs"]
    lines = [f"{found['dir']}: {found['runs_total']} run{'s' * (found['runs_total'] != 1)}"]
    shown = [(state, n) for state, n in counts.items() if n or state in SHOWN_ALWAYS]
    width = max(len(state) for state, _ in shown)
    lines += [f"  {state:<{width}}  {n}" for state, n in shown]
    lines.append("time left: " + _time_text(found["time_left"], counts))
    for batch in found["batches"]:
        lines.append(_batch_text(batch, counts))
    for state in ("running", "requeued", "failed", "interrupted", "held"):
        listed = [run for run in runs if run["state"] == state]
        if not listed:
            continue
        lines.append(f"{state}:")
        for run in listed[:REASONS_SHOWN]:
            lines.append(f"  {run['dir']}: {run['reason'] or 'no reason recorded'}")
        if len(listed) > REASONS_SHOWN:
            lines.append(f"  ... and {len(listed) - REASONS_SHOWN} more (--json lists every run)")
    report = found.get("report")
    if report is not None:
        lines.append("report: " + (", ".join(report["paths"]) + f" (written {report['written']})"
                                   if report["paths"] else
                                   "not written yet (reproduce writes report.md and report.html "
                                   "when every run is done)"))
    return "\n".join(lines)


def _time_text(left, counts):
    if not left["runs"]:
        if counts["held"]:
            return (f"nothing running or waiting but {counts['held']} held run"
                    f"{'s' * (counts['held'] != 1)} (below)")
        if counts["failed"] or counts["interrupted"]:
            return ("nothing running or waiting; the failed and interrupted runs run again "
                    "when the same command runs again")
        return "none: nothing running or waiting"
    if left["runs"] == left["not_estimated"]:
        return (f"not estimated yet ({left['runs']} runs to go, no pass measured and no "
                "expected time)")
    basis = (f"{left['seconds_per_pass']:.3g} s per pass, the median of {left['measured_runs']}"
             f" run{'s' * (left['measured_runs'] != 1)}" if left["seconds_per_pass"] else
             "the expected times")
    out = (f"~{duration(left['wall_s'])} at {left['workers']} run"
           f"{'s' * (left['workers'] != 1)} at a time (as many as run now); "
           f"~{duration(left['run_s'])} of run time in all"
           if left["wall_s"] is not None else
           f"~{duration(left['run_s'])} of run time (per-run sum: nothing runs now to tell "
           "how many run at a time)")
    out += f" ({basis})"
    if left["not_estimated"]:
        out += f"; {left['not_estimated']} run{'s' * (left['not_estimated'] != 1)} not estimated"
    return out


def _batch_text(batch, counts):
    where = os.path.dirname(batch["plan"])
    when = f"{batch['written'][:16].replace('T', ' ')} UTC" if batch["written"] else "?"
    line = f"batch: {batch['runs']} runs planned {when} in {where}"
    slurm = batch.get("slurm")
    if slurm:
        line += (f"; SLURM array {slurm['array']} (at most {slurm['parallelism']} at a time)"
                 + ("" if slurm["squeue"] else
                    "; squeue did not answer: states from the run folders"))
    elif batch["submitter_alive"] is True:
        line += f"; its command runs (pid {batch['pid']})"
    elif batch["submitter_alive"] is False:
        line += "; its command has ended" + (
            " (the same command runs what is left)" if counts["pending"] else "")
    else:
        line += f"; submitted on {batch['host']}"
    return line
