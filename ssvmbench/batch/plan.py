"""A batch's plan on disk: before any of its runs starts, a batch
(:class:`ssvmbench.batch.jobs.Report`) writes ``ssvmbench-batch.json`` into the folder that holds
all its run folders (a sweep's ``hydra.sweep.dir``; ``DIR/logs`` of ``ssvmbench reproduce --out
DIR``), so that ``ssvmbench status`` (:mod:`ssvmbench.batch.status`) can tell a run not started yet
from one that was never planned, estimate the time left and find the SLURM array of the batch.

The plan holds the run folders (relative to the plan's folder) in the order the batch hands
them to its launcher (longest expected first: a SLURM array's task ``i`` is run ``i``), each
with its expected seconds (0: not known), and the submitting process (host, pid) and when it
started. A later batch into the same folder replaces the plan (the run folders of an earlier
batch are still found by ``status``). Writing it never stops a batch: a plan that cannot be
written is one warning line.
"""

import datetime
import json
import os
import socket
from pathlib import Path

PLAN_NAME = "ssvmbench-batch.json"
PLAN_VERSION = 1
DEPTH = 4          # run folders at most this deep below the plan (reproduce --with:
#                    OUT/logs/added/FOLDER/SWEEP/RUN below OUT/logs)


def plan_dir(run_dirs):
    """The folder holding every one of ``run_dirs`` (their common parent)."""
    paths = [os.path.abspath(d) for d in run_dirs]
    if len(paths) == 1:
        return Path(paths[0]).parent
    return Path(os.path.commonpath(paths))


def write_plan(jobs):
    """Write the plan of ``jobs`` (objects with ``run_dir`` and ``expected_s``, in launch
    order) atomically into their common parent (a sweep folder, or a folder of sweep
    folders); returns its path, or None if there are no jobs, no such folder or it could
    not be written (then one warning line, and the batch goes on)."""
    from ssvmbench.common.files import write_text

    jobs = list(jobs)
    if not jobs:
        return None
    try:
        where = plan_dir(job.run_dir for job in jobs)
        if where == Path(where.anchor) or any(
                len(Path(os.path.relpath(os.path.abspath(job.run_dir), where)).parts) > DEPTH
                for job in jobs):
            return None         # no sweep folder (or folder of sweeps) holds them all
        plan = {"version": PLAN_VERSION,
                "written": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                "host": socket.gethostname(), "pid": os.getpid(),
                "runs": [{"dir": os.path.relpath(os.path.abspath(job.run_dir), where),
                          "expected_s": round(float(job.expected_s or 0.0), 3)}
                         for job in jobs]}
        path = where / PLAN_NAME
        write_text(path, json.dumps(plan, indent=0) + "\n")
        return path
    except (OSError, ValueError) as err:
        print(f"ssvmbench: warning: the batch's plan was not written ({err}); "
              "`ssvmbench status` will not know its runs not started yet", flush=True)
        return None


def read_plan(path):
    """The plan at ``path`` as a dict (``runs`` with absolute ``dir`` paths), or None if it
    does not read (a plan of a later version, a damaged file)."""
    path = Path(path)
    try:
        plan = json.loads(path.read_text())
        if plan.get("version") != PLAN_VERSION:
            return None
        for run in plan["runs"]:
            run["dir"] = os.path.normpath(path.parent / run["dir"])
        return plan
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
