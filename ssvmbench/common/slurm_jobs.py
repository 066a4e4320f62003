"""What SLURM says of its jobs (``squeue``, ``sacct``, ``sinfo``), for the batch's watcher
(:mod:`ssvmbench.batch.launchers.slurm`) and a run lock whose owner was a SLURM task
(:mod:`ssvmbench.run.runlock`). Every query answers None when SLURM cannot be asked (no such
command here, no answer in time): the caller then decides by other means."""

import shutil
import subprocess

ENDED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "PREEMPTED", "NODE_FAIL",
         "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED"}
# waiting for a person: reported, not waited for; HELD is a PENDING job whose reason is a
# hold (`scontrol hold`, `requeuehold`), which squeue shows as plain PENDING
HELD = {"REQUEUE_HOLD", "SPECIAL_EXIT", "HELD"}
TIMEOUT_S = 60


def _ask(command):
    """``command``'s output, or None if it is not here, fails to run or times out."""
    if not shutil.which(command[0]):
        return None
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None


def queue_states(job_ids):
    """``{job id: state}`` of the jobs (array tasks as ``ARRAY_TASK``) SLURM still lists
    (ended ones for ``MinJobAge``) among the arrays or jobs of ``job_ids``, or None if
    squeue did not answer; a held pending job's state is ``HELD``."""
    arrays = sorted({str(job).split("_")[0] for job in job_ids})
    out = _ask(["squeue", "-h", "-r", "--states=all", "-o", "%i|%T|%r", "-j",
                ",".join(arrays)])
    if out is None or (out.returncode != 0 and "Invalid job id" not in out.stderr):
        return None                                  # (all of them aged out: none listed)
    states = {}
    for line in out.stdout.splitlines():
        job, state, reason = (line.strip().split("|") + ["", ""])[:3]
        if job and state:
            states[job] = "HELD" if state == "PENDING" and reason.startswith("JobHeld") \
                else state
    return states


def accounted_state(job_id):
    """The state SLURM's accounting has for ``job_id``, or None (no accounting here)."""
    out = _ask(["sacct", "-n", "-X", "-P", "-o", "State", "-j", str(job_id)])
    words = out.stdout.split() if out is not None else []
    return words[0] if out is not None and out.returncode == 0 and words else None


def node_down(host):
    """Whether SLURM reports node ``host`` down or drained after a failure (True), up
    (False), or cannot say (None: not a node of this cluster, no sinfo)."""
    out = _ask(["sinfo", "-h", "-N", "-n", host, "-o", "%T"])
    states = out.stdout.split() if out is not None and out.returncode == 0 else []
    if not states:
        return None
    return all(state.rstrip("*~#!%$@^-").lower() in ("down", "fail", "failing")
               for state in states)


def job_ended(job_id):
    """Whether SLURM says job (or array task) ``job_id`` has ended (True), is still queued or
    running (False), or cannot say (None)."""
    states = queue_states([job_id])
    if states is None:
        return None
    state = states.get(str(job_id)) or accounted_state(job_id)
    return state is None or state in ENDED      # not listed any more: it ended long ago


def partition_cpus(partition=None):
    """The CPUs of ``partition`` (the default one if None), or None if sinfo cannot say."""
    out = _ask(["sinfo", "-h", "-o", "%C", *(["-p", str(partition)] if partition else [])])
    if out is None or out.returncode != 0:
        return None
    totals = [line.split("/")[-1] for line in out.stdout.split() if line.count("/") == 3]
    return sum(int(total) for total in totals if total.isdigit()) or None
