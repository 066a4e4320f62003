"""A batch of runs: the runs of one or more sweeps, each a run directory and the overrides
of its ``ssvmbench run``, handed to a launcher (:mod:`ssvmbench.batch.launchers`: a local pool of
workers or a SLURM array) and reported one line per run as it ends, with a table at the end.

``sweep_jobs`` expands a sweep's overrides as Hydra's basic sweeper does and names each run's
directory as ``hydra.sweep.subdir`` does (configs/config.yaml), so a batch finds the runs of
an earlier ``ssvmbench run -m`` into the same directory, and the other way round (also in a
folder an earlier version named: :func:`ssvmbench.run.compose.find_run_dirname`).
:func:`ssvmbench.run.job.execute` runs one job in the calling process (a worker's, or a SLURM
task's).
"""

import dataclasses
import os
import signal
import time
from pathlib import Path

from ssvmbench.batch.plan import write_plan
from ssvmbench.common import hydra_internals
from ssvmbench.common.errors import Incompatible
from ssvmbench.common.messages import Planning, duration, end_planning, say
from ssvmbench.run.compose import Composer, find_run_dirname, parse_overrides, sweep_listing
from ssvmbench.run.rundir import MESSAGES_NAME
from ssvmbench.run.runlog import LOG_NAME, read_log, setting_words
from ssvmbench.run.settings import check_seed, read
from ssvmbench.solvers import result_columns


@dataclasses.dataclass(frozen=True)
class Job:
    """One run of a batch: ``ssvmbench run OVERRIDES hydra.run.dir=RUN_DIR`` inside a sweep
    (a combination that cannot run is skipped with its reason); ``expected_s``: its
    expected seconds, for ordering (longest first) and the plan; ``search_path``: the
    config sources the sweep had beyond the package's (``file://DIR`` of ``--config-dir``)."""

    overrides: tuple
    run_dir: Path
    expected_s: float = 0.0
    search_path: tuple = ()      # config sources beyond the package's (--config-dir)

    @property
    def log(self):
        return Path(self.run_dir) / LOG_NAME

    @property
    def messages(self):
        return Path(self.run_dir) / MESSAGES_NAME


def is_hydra_override(word):
    """``hydra.…=`` and ``hydra/…=`` set the launcher, the directories, …, not the run."""
    return word.lstrip("+~").startswith(("hydra.", "hydra/"))


def sweep_jobs(words, sweep_dir, expected_s=0.0):
    """The runs of ``ssvmbench run -m WORDS hydra.sweep.dir=SWEEP_DIR`` in Hydra's order."""
    overrides = parse_overrides([word for word in words if not is_hydra_override(word)])
    combinations = hydra_internals.sweep_combinations(overrides)
    listing, progress = sweep_listing(sweep_dir), Planning("naming", len(combinations))
    jobs = []
    for k, combination in enumerate(combinations):
        named = sorted(setting_words(combination))
        jobs.append(Job(tuple(combination),
                        Path(sweep_dir) / find_run_dirname(",".join(named), sweep_dir, listing),
                        expected_s))
        if k % 256 == 0:
            progress(k)
    return jobs


def check_jobs(jobs):
    """Compose and check, before anything runs or is written, the first run of ``jobs`` with
    each value of each override (``lambda=0.1,abc``: the run with ``abc`` too), so that a
    bad override is one line now, not one failed run, and its folder, per combination; a
    combination that cannot run (:class:`~ssvmbench.common.errors.Incompatible`) is for the run
    to skip. Hydra composes once per distinct choice of config groups (:class:`Composer`)."""
    seen, composers = set(), {}
    progress = Planning("checking", len(jobs))
    for k, job in enumerate(jobs):
        if k % 64 == 0:
            progress(k)
        new = set(job.overrides) - seen
        if not new:
            continue
        seen.update(job.overrides)
        if len(new) == 1 and _checked_alone(next(iter(new))):
            continue
        composer = composers.setdefault(job.search_path, Composer(job.search_path))
        try:
            with composer.composed(job.overrides) as cfg:
                read(cfg)
        except Incompatible:
            continue


def _checked_alone(word):
    """Whether ``word`` is a ``seed=N`` whose check needs nothing of the run's configuration
    (:func:`~ssvmbench.run.settings.check_seed`, done here; a bad seed is its one line): a seed
    sweep then reads one run's settings, not every run's."""
    key, _, value = word.partition("=")
    if key != "seed" or not value.lstrip("-").isdigit():
        return False
    check_seed(int(value))
    return True


def longest_first(jobs):
    """``jobs`` by expected seconds, longest first (ties keep their order): the order that
    shortens a batch's wall time on a few workers (LPT scheduling)."""
    return sorted(jobs, key=lambda job: -job.expected_s)


def expected_wall_s(jobs, workers, startup_s=0.0):
    """Seconds ``jobs`` take on ``workers`` taken longest first, each run plus
    ``startup_s``, each worker taking the next run when it is free."""
    free = [0.0] * max(1, min(workers, len(jobs) or 1))
    for job in longest_first(jobs):
        k = free.index(min(free))
        free[k] += job.expected_s + startup_s
    return max(free)


def _stamps():
    """Now as the run logs write times (UTC, seconds) and as ``app.log`` does (local time),
    each comparable as text."""
    import datetime
    now = datetime.datetime.now(datetime.timezone.utc)
    return (now.isoformat(timespec="seconds"),
            now.astimezone().strftime("%Y-%m-%d %H:%M:%S"))


def _last_error(job, since):
    """The last error line the run wrote to its ``app.log`` since ``since`` (local time as
    the lines start: ``[YYYY-mm-dd HH:MM:SS,ms]``), without the prefix."""
    try:
        lines = [line for line in job.messages.read_text().splitlines()
                 if "][ERROR] - " in line and line[1:20] >= since]
    except OSError:
        return ""
    return lines[-1].split("][ERROR] - ", 1)[1] if lines else ""


HELD_TEXT = "held by SLURM: release or cancel it"
STOPPED_STATES = {"CANCELLED": "cancelled", "PREEMPTED": "preempted", "TIMEOUT": "time limit",
                  "NODE_FAIL": "node failure", "REQUEUE_HOLD": HELD_TEXT,
                  "SPECIAL_EXIT": HELD_TEXT, "HELD": HELD_TEXT}
KINDS = ("finished", "diverged", "skipped", "done before", "failed", "busy", "interrupted")


def outcome(job, code, since, state=None, requeues=None):
    """``(kind, text)`` of a job that ended with exit status ``code`` (None: unknown, e.g.
    a SLURM task; negative: killed by that signal) and, under SLURM, its job ``state``:
    ``kind`` one of :data:`KINDS`, from its run log (a log finished before the batch
    started was done before). ``since``: the batch's start (:func:`_stamps`);
    ``requeues``: how often a SLURM task may be requeued at its time limit."""
    since_utc, since_local = since
    if code is not None and code < 0:
        code = 128 - code                       # killed by signal -code
    try:
        trace, attrs = read_log(job.log)
        passes = trace["effective_pass"] if len(trace) else None
    except (OSError, KeyError, ValueError, RuntimeError):
        trace, attrs, passes = None, {}, None
    status = attrs.get("status")
    if status in ("finished", "diverged") and attrs.get("finished", "") >= since_utc:
        last = trace[passes == passes.max()] if passes is not None else trace
        text = "no rows"
        if passes is not None:
            text = (f"{last['effective_pass'].iloc[0]:.4g} passes, primal "
                    f"{last['primal'].iloc[0]:.6g}, {last['time_s'].iloc[0]:.3g} s")
            text += "".join(f", {part}" for part in result_columns.parts(
                {**attrs, **last.iloc[0]}, result_columns.shown([attrs.get("solver")])))
        return ("finished" if status == "finished" else "diverged"), text
    if status in ("finished", "diverged", "skipped") and (code == 0 or state == "COMPLETED"):
        if status == "skipped" and attrs.get("finished", "") >= since_utc:
            return "skipped", attrs.get("error", "")
        return "done before", f"{status} already"
    error = _last_error(job, since_local)
    if code == 2:
        return "failed", error or "bad input"
    if code == 0 and status == "running":
        return "busy", "another process is writing it; run the same command again later"
    if state in STOPPED_STATES or status == "interrupted" or (code is not None and code > 128):
        what = STOPPED_STATES.get(state, "stopped")
        if code == 128 + signal.SIGUSR2 and requeues is not None:   # its warning came last
            what = f"time limit: requeues used up ({requeues})"
        where = f" after {passes.max():.4g} passes" if passes is not None else ""
        return "interrupted", f"{what}{where}; the same command continues it"
    reason = error or (f"SLURM state {state}" if state else f"exit status {code}")
    return "failed", reason


def _written_since(path, since):
    """Whether ``path`` was written at or after ``since`` (seconds since the epoch): a run
    writes its messages file as it starts."""
    try:
        return os.stat(path).st_mtime >= since - 1
    except OSError:
        return False


class Report:
    """The batch's lines as runs end (``run i of N KIND: …``) and the table at the end."""

    def __init__(self, jobs, where, requeues=None):
        self.jobs, self.where, self.requeues = list(jobs), where, requeues
        self.started, self.clock, self.since = _stamps(), time.perf_counter(), time.time()
        self.kinds = {}
        self.never_started = set()
        end_planning()
        write_plan(self.jobs)             # for `ssvmbench status` (ssvmbench.batch.plan)
        say(f"ssvmbench: {len(self.jobs)} run{'s' * (len(self.jobs) != 1)} {where}", log=False)

    def ended(self, index, code=None, state=None):
        """Say how run ``index`` (of :attr:`jobs`) ended, once; returns its kind. A task
        cancelled before its run began is said once for all in :meth:`summary`."""
        if index in self.kinds or index in self.never_started:
            return self.kinds.get(index, "not started")
        job = self.jobs[index]
        if state == "CANCELLED" and not _written_since(job.messages, self.since):
            self.never_started.add(index)
            return "not started"
        try:
            kind, text = outcome(job, code, self.started, state, self.requeues)
        except Exception as err:                # a log that reads but makes no sense
            kind, text = "failed", f"its log does not read: {type(err).__name__}: {err}"
        self.kinds[index] = kind
        where = f"{job.log} (messages: {job.messages})" if kind == "failed" else job.log
        if kind == "failed" and not job.log.exists():          # it failed before its log began
            where = f"messages in {job.messages}"
        say(f"run {len(self.kinds)} of {len(self.jobs)} {kind}{' (' + text + ')' if text else ''}"
            f": {where}", error=kind in ("failed", "busy", "interrupted"), log=False)
        return kind

    def summary(self, stopped_by=None):
        """Print the table of outcomes and the wall time; returns the exit status: 128 + the
        signal that stopped the batch, 1 if a run failed, 130 if one was interrupted, else 0."""
        counts = {kind: sum(1 for k in self.kinds.values() if k == kind) for kind in KINDS}
        counts["not started"] = len(self.jobs) - len(self.kinds)
        if self.never_started:
            n = len(self.never_started)
            say(f"ssvmbench: {n} run{'s' * (n != 1)} cancelled before {'they' if n != 1 else 'it'}"
                " began; the same command runs them", error=True, log=False)
        width = max(map(len, counts))
        rows = [f"  {kind:<{width}}  {count}" for kind, count in counts.items() if count]
        rows.append(f"  {'wall time':<{width}}  {duration(time.perf_counter() - self.clock)}")
        say("ssvmbench: batch " + ("stopped" if stopped_by else "done") + "\n"
            + "\n".join(rows), log=False)
        if stopped_by:
            return 128 + stopped_by
        if counts["failed"] or counts["busy"]:
            return 1
        return 130 if counts["interrupted"] or counts["not started"] else 0
