"""A batch on SLURM: every run one task of one array job, submitted through submitit (which
writes the batch script and requeues a task on its time-limit warning), watched with
``squeue`` until every task has ended.

The cluster contract (docs/guide/cluster.md):

- *Time limit, preemption*: ``signal_delay_s`` before ``timeout_min`` SLURM sends SIGUSR2;
  the run saves its state at its next step boundary
  (:class:`~ssvmbench.run.stop_signals.StopSignals`) and hands over to submitit, which requeues the
  task (:class:`SlurmRun`); the requeued task continues from the state, so a run longer than its
  time limit finishes after requeues with the trace of an uninterrupted run. SIGTERM (``scancel``, a
  preemption without warning) saves the state too.
- *Cancelled or failed*: one line naming the run directory and its log; the other runs go on;
  the command ends with the table and a non-zero status. Job states come from ``squeue``
  (which keeps ended jobs for ``MinJobAge``), else from ``sacct``; without accounting a
  vanished task is reported from its run log, so the command never waits forever.
- *Ctrl-C or SIGTERM* on the submitting command cancels every task (each run saves its
  state), reports, and exits with 128 + the signal; the same command continues them.
"""

import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import submitit
from omegaconf import OmegaConf

from ssvmbench.batch import jobs as batch
from ssvmbench.batch.plan import write_plan
from ssvmbench.common.errors import UserError
from ssvmbench.common.messages import say
from ssvmbench.common.slurm_jobs import ENDED, HELD, accounted_state, queue_states
from ssvmbench.run.job import execute

POLL_S = float(os.environ.get("SSVMBENCH_SLURM_POLL_S", 5))
MAYBE_REQUEUED = {"PREEMPTED", "NODE_FAIL"}   # SLURM may requeue these: wait a while first
REQUEUE_WAIT_S = 60
SAVE_S = 60        # at least this long between SLURM's warning signal and the start of a job
MIN_SIGNAL_DELAY_S = 60   # SLURM sends --signal warnings from a check it makes every 30-60 s
GONE_AFTER_S = 60  # a task squeue has not listed for this long (while it answers) has ended
CANCEL_WAIT_S = 300  # after scancel, how long the command waits for runs to save and end


class SlurmRun(submitit.helpers.Checkpointable):
    """A SLURM task's callable: run the job; stopped by SLURM's SIGUSR2 (its state saved),
    hand over to submitit's handler, which resubmits this same callable
    (:meth:`checkpoint`) with ``scontrol requeue`` and exits. A run that failed ends its task
    with its exit status (:func:`end_failed`), so that SLURM says FAILED, not COMPLETED."""

    def __init__(self, job):
        self.job = job

    def __call__(self):
        import numba

        requeue = signal.getsignal(signal.SIGUSR2)     # submitit's, set before this call
        cpus = int(os.environ.get("SLURM_CPUS_PER_TASK", 1))
        status = execute(self.job, eval_threads=min(cpus, numba.config.NUMBA_NUM_THREADS))
        if status == 128 + signal.SIGUSR2 and callable(requeue):
            requeue(signal.SIGUSR2, None)
        if 0 < status < 128:
            end_failed(status, submitit.JobEnvironment().paths.result_pickle)
        return status


def end_failed(status, result_pickle):
    """End a task whose run failed with ``status``: its result written as submitit writes a
    returned one (the watcher reads it, :func:`_status`), then exit with ``status``; submitit
    would exit 0 after a returned status, and SLURM record the task COMPLETED."""
    with submitit.core.utils.temporary_save_path(result_pickle) as written:
        submitit.core.utils.cloudpickle_dump(("success", status), written)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def check(params):
    """Refuse, in one line, a batch that SLURM cannot run as asked: no ``sbatch`` here, a
    warning asked for less than :data:`MIN_SIGNAL_DELAY_S` before the time limit (SLURM looks
    for due warnings only every 30 s or so, and sbatch's manual says a ``--signal`` may come
    up to 60 s early: a shorter delay can pass unsent, and the run dies at the limit with its
    log saying ``running``), or a time limit that leaves no time before the warning (SLURM
    would send it at once, before the run can save anything)."""
    missing = [tool for tool in ("sbatch", "squeue", "scancel") if not shutil.which(tool)]
    if missing:
        raise UserError(f"hydra/launcher=slurm needs SLURM's {', '.join(missing)} on PATH; "
                        "run on a cluster's login node, or use hydra/launcher=local")
    timeout_s, delay_s = 60 * params["timeout_min"], params.get("signal_delay_s", 90)
    if delay_s < MIN_SIGNAL_DELAY_S:
        raise UserError(f"hydra.launcher.signal_delay_s={delay_s}: give at least "
                        f"{MIN_SIGNAL_DELAY_S} s; SLURM checks for due warnings only every "
                        "30-60 s, so a shorter warning may never be sent and the run would "
                        "die at its time limit without saving")
    if timeout_s < delay_s + SAVE_S:
        raise UserError(f"hydra.launcher.timeout_min={params['timeout_min']} leaves "
                        f"{timeout_s - delay_s:.0f} s before SLURM's warning signal "
                        f"(hydra.launcher.signal_delay_s={delay_s}); give a time limit at "
                        f"least {SAVE_S} s longer than signal_delay_s")


def make_executor(params):
    """submitit's SLURM executor with hydra-submitit-launcher's settings (the plugin's own
    mapping: ``max_num_timeout`` at construction, the queue settings prefixed ``slurm_``)."""
    from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf

    params = dict(params)
    executor = submitit.AutoExecutor(folder=params.pop("submitit_folder"), cluster="slurm",
                                     slurm_max_num_timeout=params.pop("max_num_timeout"))
    common = set(OmegaConf.structured(BaseQueueConf).keys())
    executor.update_parameters(**{key if key in common else f"slurm_{key}": value
                                  for key, value in params.items()})
    return executor


def submit(jobs, params):
    """Submit ``jobs`` (longest expected first) as one array and return without watching it
    (``--detach``): the array's job id."""
    params = {key: value for key, value in params.items() if key not in ("detach", "_target_")}
    check(params)
    jobs = batch.longest_first(jobs)
    write_plan(jobs)         # no Report here: the plan for `ssvmbench status` (batch.plan)
    return _submit(jobs, params)[0].job_id.split("_")[0]


def _submit(jobs, params):
    """Submit ``jobs`` in this order as one array (one line says so); their submitit jobs."""
    executor = make_executor(params)
    try:
        with executor.batch():
            tasks = [executor.submit(SlurmRun(job)) for job in jobs]
    except (submitit.core.utils.FailedJobError, submitit.core.utils.FailedSubmissionError,
            OSError) as err:
        lines = [line for line in str(err).splitlines() if line.strip()]
        raise UserError("SLURM did not take the batch: "
                        + (lines[-1] if lines else type(err).__name__)) from None
    say(f"ssvmbench: submitted as SLURM job {tasks[0].job_id.split('_')[0]}; submitit's "
        f"files in {Path(str(params['submitit_folder'])).parent}", log=False)
    return tasks


def run_slurm(jobs, params):
    """Submit ``jobs`` (longest expected first) as one array and watch it; returns the batch's
    exit status (:meth:`ssvmbench.batch.jobs.Report.summary`). With ``detach`` (``run -m …
    hydra.launcher.detach=true``), return once submitted: ``ssvmbench status DIR`` follows."""
    params = dict(params)
    if params.pop("detach", False):
        if jobs:
            job = submit(jobs, params)
            say(f"ssvmbench: detached; SLURM job {job} runs the {len(jobs)} runs without this "
                f"shell: `ssvmbench status DIR` says how they do", log=False)
        return 0
    check(params)
    jobs = batch.longest_first(jobs)
    report = batch.Report(jobs, "as one SLURM array (Ctrl-C cancels every task; the same "
                                "command continues them)", params.get("max_num_timeout"))
    if not jobs:
        return report.summary()
    tasks = _submit(jobs, params)
    stopped = []

    def on_signal(signum, frame):
        if stopped:
            say("ssvmbench: stopped without waiting for the cancelled tasks", error=True, log=False)
            os._exit(128 + stopped[0][0])
        stopped.append((signum, time.monotonic()))
        say(f"ssvmbench: {signal.Signals(signum).name}: cancelling every task (each run saves "
            "its state); again to stop waiting", error=True, log=False)
        subprocess.run(["scancel", *sorted({task.job_id.split("_")[0] for task in tasks})],
                       check=False)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _watch(report, tasks, stopped)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return report.summary(stopped[0][0] if stopped else None)


def _watch(report, tasks, stopped):
    """Poll the tasks' states until each has ended (reported as it does) or, after a cancel
    (``stopped``: ``[(signal, when)]``), until :data:`CANCEL_WAIT_S` has passed. A poll
    that squeue does not answer changes nothing; a state SLURM may requeue from is reported
    only once it has held for :data:`REQUEUE_WAIT_S`."""
    waiting = dict(enumerate(tasks))
    listed = {index: time.monotonic() for index in waiting}   # last seen listed (or submitted)
    ended_since = {}
    while waiting:
        if stopped and time.monotonic() - stopped[0][1] > CANCEL_WAIT_S:
            break
        states = queue_states(task.job_id for task in waiting.values())
        now = time.monotonic()
        for index, task in list(waiting.items()):
            if states is None:                        # squeue did not answer this time
                break
            state = states.get(task.job_id)
            if state is not None:
                listed[index] = now
            elif now - listed[index] > GONE_AFTER_S:
                state = accounted_state(task.job_id) or "UNKNOWN"
            if state not in ENDED | HELD | {"UNKNOWN"}:
                ended_since.pop(index, None)
                continue
            if state in MAYBE_REQUEUED and now - ended_since.setdefault(index, now) \
                    < REQUEUE_WAIT_S:
                continue
            del waiting[index]
            report.ended(index, _status(task), None if state == "UNKNOWN" else state)
        if waiting:
            time.sleep(POLL_S)


def _status(task):
    """The exit status the task's :class:`SlurmRun` returned (submitit's result file), or
    None if it wrote none (cancelled, killed, requeued too often)."""
    try:
        with open(task.paths.result_pickle, "rb") as result:
            outcome, value = pickle.load(result)
    except (OSError, EOFError, ValueError, pickle.UnpicklingError):
        return None
    return value if outcome == "success" and isinstance(value, int) else 1
