"""One run: config -> data -> task -> solver -> checkpoints -> HDF5 run log, composed from
its settings (:mod:`ssvmbench.run.settings`), its directory's lifecycle
(:mod:`ssvmbench.run.rundir`), the stop signals (:mod:`ssvmbench.run.stop_signals`) and its
provenance (:mod:`ssvmbench.run.provenance`)."""

import contextlib
import dataclasses
import math
import os
import signal
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from omegaconf import OmegaConf

from ssvmbench.common.errors import Incompatible, PluginError, UserError
from ssvmbench.common.messages import say
from ssvmbench.common.paths import data_root
from ssvmbench.common.plugins import blamed
from ssvmbench.compiled import coldstart, keyed_cache
from ssvmbench.data import load_split
from ssvmbench.run.monitor import evaluation_threads, measure, one_blas_thread, schedule
from ssvmbench.run.provenance import attributes
from ssvmbench.run.rundir import MESSAGES_NAME, RunDirectory
from ssvmbench.run.runlock import Busy
from ssvmbench.run.runlog import RUN_CONTROL, Diverged, Interrupted, LostOwnership, read_log
from ssvmbench.run.settings import read
from ssvmbench.run.stop_signals import Stopped, StopSignals
from ssvmbench.solvers import describe, is_built_in, result_columns, solver_class
from ssvmbench.tasks import describe as describe_task
from ssvmbench.tasks import is_built_in as is_built_in_task
from ssvmbench.tasks import make_task
from ssvmbench.tasks.metrics import check_split_metric


def load_tasks(settings):
    """``(split, train task, test task)`` of the dataset of ``settings`` (a
    :class:`~ssvmbench.run.settings.RunSettings`), with the kernels in the cache keyed by their
    sources (:func:`ssvmbench.compiled.keyed_cache.use`)."""
    keyed_cache.use()
    split = load_split(settings.data, **settings.data_options)
    train, test = make_task(split.train, settings.loss), make_task(split.test, settings.loss)
    check_split_metric(split, describe_task(type(test)))
    return split, train, test


def prepare(settings):
    """Everything a run needs, validated before any result is written:
    ``(solver, train task, test task, split, lam)``."""
    split, train, test = load_tasks(settings)
    lam, l1 = settings.objective.at(train.n)
    return settings.solver_on(train, lam, l1), train, test, split, lam


WARM_UP_EXAMPLES = 2


def warm_up(settings, split, lam, l1):
    """Compile (or load from numba's cache) every kernel the run will call, by one pass and
    one checkpoint of the same solver on the first ``WARM_UP_EXAMPLES`` training and test
    examples: the same array types, so the timed loop never compiles (benchopt's warm-up).
    Returns its seconds, logged as ``jit_s`` and never counted in ``time_s``; says
    ``compiling kernels (first run only, ~N s)`` when numba starts compiling
    (:mod:`ssvmbench.compiled.coldstart`)."""
    start = time.perf_counter()
    tiny_train, tiny_test = (make_task(part.subset(range(min(WARM_UP_EXAMPLES, part.n))),
                                       settings.loss)
                             for part in (split.train, split.test))
    # (a replayed order, +solver.order, names the full set's examples: not these)
    tiny = dataclasses.replace(settings, solver_options={
        key: value for key, value in settings.solver_options.items() if key != "order"})
    # a cold start compiles the checkpoint's kernels in a second process meanwhile
    with coldstart.compile_notice(settings.solver, coldstart.checkpoint_compiler(
            tiny, tiny_train, tiny_test, lam, l1)) as compiling:
        solver = tiny.solver_on(tiny_train, lam, l1)
        solver.run_until(2 * tiny_train.n)
        compiling.join()
        measure(solver, tiny_train, tiny_test)
    return time.perf_counter() - start


def identity(cfg):
    """The resolved config a log records and is recognised by, with :data:`RUN_CONTROL` at
    their defaults, so that ``restart=true`` or ``reuse_stale=true`` acts on the log of the
    same run instead of being refused as another configuration."""
    cfg = cfg.copy()
    for key in RUN_CONTROL:
        if key in cfg:
            cfg[key] = False
    return OmegaConf.to_yaml(cfg, resolve=True)


def run(cfg, run_dir, overrides=(), sweep=False, eval_threads=None) -> Path:
    """Train as configured and log to ``run_dir/run.h5`` (skipped if it holds this
    configuration's finished log, see :func:`~ssvmbench.run.runlog.make_room`); returns the log
    path. ``overrides``: the command line's, recorded in the log. In a ``sweep``, a
    combination that cannot run (:class:`~ssvmbench.common.errors.Incompatible`) leaves a skipped
    log with the reason and lets the sweep go on. ``eval_threads``: the threads of a
    checkpoint's evaluation (default: this run's share of the cores,
    :func:`~ssvmbench.run.monitor.evaluation_threads`)."""
    new = not sweep and _only_messages(run_dir, empty=True)
    try:
        settings = read(cfg)
        points = schedule(settings.passes, settings.eval["every"], settings.eval["log_start"],
                          settings.eval["per_decade"])
        here = RunDirectory(run_dir, identity(cfg), cfg.get("restart", False),
                            cfg.get("reuse_stale", False))
        try:
            with here:
                return _run_owned(settings, here, overrides, sweep, points,
                                  eval_threads or evaluation_threads())
        except Busy as busy:
            if not busy.same_config:
                raise UserError(f"{run_dir} is being written by another run ({busy}); choose "
                                "another hydra.run.dir / hydra.sweep.dir") from None
            say(f"{here.log_path}: being written by another process ({busy}), skipped")
            return here.log_path
    except (UserError, Interrupted) as err:
        if new and not isinstance(err, PluginError) and _only_messages(run_dir):
            _remove_unstarted(run_dir)
        raise


def _only_messages(run_dir, empty=False):
    """Whether ``run_dir`` holds nothing but the run's messages (``app.log``; ``empty``:
    and those empty, as a run's folder is when it starts)."""
    messages = Path(run_dir) / MESSAGES_NAME
    try:
        names = set(os.listdir(run_dir))
        return names <= {MESSAGES_NAME} and not (empty and messages.exists()
                                                 and messages.stat().st_size)
    except OSError:
        return False


def _remove_unstarted(run_dir):
    """A single run that never started (a bad setting, missing data, a stop before training):
    its folder made for it goes, with only its messages (said on the terminal too)."""
    with contextlib.suppress(OSError):
        (Path(run_dir) / MESSAGES_NAME).unlink(missing_ok=True)
        Path(run_dir).rmdir()


def _run_owned(settings, here, overrides, sweep, points, eval_threads):
    """:func:`run` once the run directory ``here`` (a :class:`RunDirectory`) is ours."""
    path = here.log_path
    go, state = here.begin()
    if not go:
        return path
    say(f"ssvmbench run: solver={settings.solver} data={settings.data} (data root "
        f"{data_root(settings.data_root())}) -> {path}")
    with StopSignals() as signals:
        numba.set_num_threads(eval_threads)
        try:
            split, train, test = load_tasks(settings)
            lam, l1 = settings.objective.at(train.n)
            with blame_plugin(settings.solver, type(train)):
                jit_s = warm_up(settings, split, lam, l1)
        except Incompatible as err:
            if not sweep:
                raise
            here.skip({"overrides": list(overrides), "solver": settings.solver,
                       "data": settings.data}, str(err))
            say(f"skipped: {err} (log: {path})")
            return path
        try:
            signals.check()
        except Interrupted as err:
            raise Interrupted(f"{err} before training started, nothing written yet",
                              err.signum) from None
        with blame_plugin(settings.solver, type(train)):
            solver = settings.solver_on(train, lam, l1)
            if state is not None:
                solver.load_state(state["solver"])
        clock = {"solver_s": 0.0, "eval_s": 0.0}
        if state is not None:
            clock.update(state["clock"])
            log = here.open_log(None, continue_from=solver.oracle_calls)
            say(f"{path}: continuing the stopped run from pass "
                f"{solver.oracle_calls / train.n:.3g} (restart=true starts afresh)")
        else:
            log = here.open_log({**attributes(here.config, overrides, settings, solver, split,
                                            lam), "jit_s": jit_s})
        try:
            with log, one_blas_thread():      # after the warm-up: every BLAS is loaded
                _train(settings, solver, train, test, points, log, signals, clock,
                       lambda: here.save_state(solver, clock), here.owned)
                if settings.save_weights:
                    here.save_weights(solver)
        except Interrupted as err:
            here.interrupted(solver, clock)
            raise Interrupted(f"{err} after {solver.oracle_calls / train.n:.3g} passes; "
                              f"its log {path} says status=interrupted", err.signum) from None
        except Diverged as err:
            say(f"ssvmbench run: diverged: {err}; its log {path} says status=diverged "
                "(a smaller step size may help)", error=True)
            here.ended()
            return path
        here.ended()
    say(finished_summary(path, path.parent.parent if sweep else path.parent))
    if signals.received is not None:          # while the finished run's results were written
        say(f"ssvmbench run: received {signal.Signals(signals.received).name} while writing "
            f"the finished run's results; they are complete ({path} says status=finished)",
            error=True)
        raise Stopped(128 + signals.received)
    return path


def blame_plugin(solver_name, task_class=None):
    """Around the calls into a solver (build, load_state, steps, iterates, measurements) on a
    task of ``task_class``: an exception raised there by a plugin solver or task is one line
    naming the plugins involved and their entry points (:func:`ssvmbench.common.plugins.blamed`)."""
    culprits = [describe(cls) for cls in [solver_class(solver_name)] if not is_built_in(cls)]
    if task_class is not None and not is_built_in_task(task_class):
        culprits.append(describe_task(task_class))
    return blamed(culprits, passing=(Interrupted, Diverged, LostOwnership))


def finished_summary(path, logs):
    """What a finished run reached: per logged iterate its last primal, dual and gap (with a
    dual) and test metric, the passes and seconds, where the log is and the next command
    (plotting the logs under ``logs``: the run's, or the sweep's, directory)."""
    trace, attrs = read_log(path)
    last = trace[trace["effective_pass"] == trace["effective_pass"].max()]
    metric = attrs.get("test_metric", "metric")
    lines = [f"finished: {attrs.get('method')} on {attrs.get('data')}, lambda = "
             f"{attrs.get('lambda'):.4g}, {last['effective_pass'].iloc[0]:.4g} passes in "
             f"{last['time_s'].iloc[0]:.3g} s (+ {attrs.get('jit_s', 0.0):.3g} s compiling, "
             f"{last['eval_time_s'].iloc[0]:.3g} s evaluating)"]
    shown = result_columns.shown([attrs.get("solver")])
    lines += [f"  {row.iterate:6s} primal {row.primal:.6g}  "
              + (f"dual {row.dual:.6g}  gap {row.gap:.3g}  " if math.isfinite(row.dual) else "")
              + f"test {metric} {row.test_metric:.4g}"
              + "".join(f"  {part}" for part in
                        result_columns.parts({**attrs, **row._asdict()}, shown))
              for row in last.itertuples()]
    lines += [f"run log: {path}", f"next: ssvmbench plot {logs} -o {logs / 'figures'}"]
    return "\n".join(lines)


def _train(settings, solver, train, test, points, log, signals, clock, save, owned):
    """The timed loop: solver steps up to each checkpoint (in slices of an eighth of a pass,
    so that a stop is seen within one), then the measurements, appended to ``log`` (a
    checkpoint the log has, ``log.last_calls``, is not redone; one the solver reached but
    the log lacks, e.g. after a full disk, is measured now); the
    state is saved (``save()``) after a checkpoint when :func:`_save_due`, ``owned()``
    checked first. ``clock``: the cumulative solver and evaluation seconds."""
    last_save, save_cost = time.perf_counter(), 0.0
    bar = progress_bar(settings.passes)
    for target in points:
        calls = int(np.ceil(target * train.n - 1e-9))
        if calls <= log.last_calls:          # logged already (a continued run)
            continue
        while solver.oracle_calls < calls and not solver.converged:
            start = time.perf_counter()
            with blame_plugin(solver.name, type(train)):
                solver.run_until(min(calls, solver.oracle_calls + max(1, train.n // 8)))
            clock["solver_s"] += time.perf_counter() - start
            if solver.oracle_calls < calls:   # a checkpoint reached is logged before a stop
                signals.check()
        start = time.perf_counter()
        with blame_plugin(solver.name, type(train)):
            rows = measure(solver, train, test)
        clock["eval_s"] += time.perf_counter() - start
        k = len(rows["iterate"])
        rows.update(effective_pass=[solver.oracle_calls / train.n] * k,
                    oracle_calls=[solver.oracle_calls] * k,
                    time_s=[clock["solver_s"]] * k, eval_time_s=[clock["eval_s"]] * k)
        log.append(rows)
        bad = [name for name, value in zip(rows["iterate"], rows["primal"])
               if not math.isfinite(value)]
        if bad:
            raise Diverged(f"the primal objective of iterate {bad[0]} is not finite after "
                           f"{solver.oracle_calls / train.n:.3g} passes")
        if _save_due(settings.resume, time.perf_counter() - last_save, save_cost):
            owned()
            start = time.perf_counter()
            save()
            last_save = time.perf_counter()
            save_cost = last_save - start
        signals.check()
        bar.update(solver.oracle_calls / train.n - bar.n)
        bar.set_postfix(primal=f"{rows['primal'][0]:.4g}", gap=f"{rows['gap'][0]:.3g}")
        if solver.converged or _should_stop(settings.stop, rows["gap"][0], clock["solver_s"]):
            break
    bar.close()


def progress_bar(passes):
    """The passes done of ``passes``: Jupyter's widget in a notebook (``tqdm.autonotebook``,
    the class ``tqdm.auto`` builds on: std.tqdm outside Jupyter, where ``tqdm.auto``'s is
    an asyncio subclass), text at a terminal, nothing otherwise (a file or a pipe)."""
    from tqdm import TqdmExperimentalWarning, std

    with warnings.catch_warnings():             # as tqdm.auto imports it
        warnings.simplefilter("ignore", TqdmExperimentalWarning)
        from tqdm import autonotebook
    bar = autonotebook.tqdm
    return bar(total=passes, unit="pass", disable=bar is std.tqdm and not sys.stderr.isatty(),
               bar_format="{l_bar}{bar}| {n:.2f}/{total:.0f} passes [{elapsed}<{remaining}"
                          "{postfix}]")


def _save_due(resume, since_save, save_cost):
    """Whether to save the state at this checkpoint: ``resume.every_s`` seconds after the last
    save, or by default (``every_s: null``) at every checkpoint whose save costs at most
    ``resume.max_overhead`` of the time since the last one (the last save's seconds,
    ``save_cost``, stand for the next one's), so that a SIGKILL loses about one checkpoint
    interval at a few percent of the run's time."""
    if resume["every_s"] is not None:
        return since_save >= resume["every_s"]
    return save_cost <= resume["max_overhead"] * since_save


def _should_stop(stop, gap, solver_time):
    return ((stop["gap"] is not None and gap <= stop["gap"])
            or (stop["time_s"] is not None and solver_time >= stop["time_s"]))


