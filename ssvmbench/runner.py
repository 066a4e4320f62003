"""One run: config -> data -> task -> solver -> checkpoints -> HDF5 run log."""

import contextlib
import ctypes
import dataclasses
import logging
import math
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numba
import numpy as np
from omegaconf import OmegaConf
from tqdm import tqdm

from ssvmbench.data import check_options as check_data_options
from ssvmbench.data import load_split
from ssvmbench.messages import say
from ssvmbench.errors import Incompatible, PluginError, UserError, number
from ssvmbench.files import write_atomically
from ssvmbench import objective
from ssvmbench.monitor import evaluation_threads, measure, schedule
from ssvmbench.paths import data_root, source_digest
from ssvmbench.runlock import Busy, RunLock
from ssvmbench.runlog import (LOG_NAME, Diverged, DiskFull, Interrupted, LostOwnership,
                              RunLog, check_space, make_room, read_log, resumable,
                              write_skipped)
from ssvmbench.solvers import describe, is_built_in, make_solver, solver_class
from ssvmbench.tasks import make_task
from ssvmbench.tasks.oracles import Oracle

_PER_N = re.compile(r"^\s*(?:(\d*\.?\d+(?:[eE][-+]?\d+)?)\s*/\s*n|inv_n)\s*$")


def resolve_lambda(spec, n, name="lambda", allow_zero=False):
    """``lambda`` (or ``l1``) as given on the command line -> a number; ``1/n``, ``inv_n`` and
    ``C/n`` select ``C/n`` for the training-set size ``n`` (BCFW uses 1/n for CoNLL)."""
    if isinstance(spec, str):
        match = _PER_N.match(spec)
        if match:
            return float(match.group(1) or 1.0) / n
        try:
            spec = float(spec)
        except ValueError:
            raise UserError(f"{name}={spec} is not a number; give e.g. {name}=0.01, "
                            f"{name}=1/n or {name}=inv_n") from None
    number_given = isinstance(spec, (int, float)) and not isinstance(spec, bool)
    if (not number_given or not math.isfinite(spec)
            or not (spec >= 0 if allow_zero else spec > 0)):
        kind = "non-negative" if allow_zero else "positive"
        raise UserError(f"{name}={spec} must be a finite {kind} number (or 1/n, inv_n)")
    return float(spec)


def resolve_objective(cfg, n):
    """``(lam, l1)`` of the objective ``lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)``: from
    ``lambda`` (default 0.01) and ``l1`` (default 0), or from SAP's parameters ``C``, ``rho1``,
    ``rho2`` (OP5: ``rho1 ||w||_1 + rho2/2 ||w||^2 + C sum_i xi_i``, divided by ``C n``):
    ``lam = rho2 / (C n)``, ``l1 = rho1 / (C n)``, with ``rho2 = 1 - rho1`` by default as in
    SAP Section V."""
    C, rho1, rho2 = cfg.get("C"), cfg.get("rho1"), cfg.get("rho2")
    if C is None:
        if rho1 is not None or rho2 is not None:
            raise UserError("rho1= and rho2= go with C= (SAP's parameters); give C too, or use "
                            "lambda= and l1=")
        lam = resolve_lambda(0.01 if cfg["lambda"] is None else cfg["lambda"], n)
        l1 = 0.0 if cfg.l1 is None else resolve_lambda(cfg.l1, n, "l1", allow_zero=True)
        return lam, l1
    if cfg["lambda"] is not None or cfg.l1 is not None:
        raise UserError("give either lambda= / l1= or SAP's C= / rho1= / rho2=, not both")
    C = number("C", C)
    rho1 = 0.0 if rho1 is None else number("rho1", rho1)
    rho2 = 1.0 - rho1 if rho2 is None else number("rho2", rho2)
    if not (C > 0 and rho1 >= 0 and rho2 > 0):
        raise UserError(f"C={C}, rho1={rho1}, rho2={rho2}: need C > 0, rho1 >= 0 and rho2 > 0 "
                        "(rho2 defaults to 1 - rho1)")
    return rho2 / (C * n), rho1 / (C * n)


def check_settings(cfg):
    """Refuse a bad run setting in one line before any data are loaded: the seed, the
    passes, the objective's parameters (their syntax; ``1/n`` is resolved later), the oracle,
    and the names of the solver's and the dataset's options (``+solver.pases=5`` would
    otherwise be ignored); the options' values are checked when the solver is built."""
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        raise UserError(f"{', '.join(missing)} must be given (e.g. {missing[0]}=VALUE)")
    if "experiment" in cfg:
        raise UserError("presets are not run configs: run `ssvmbench reproduce NAME` "
                        "(`ssvmbench reproduce` lists them), not `run +experiment=NAME`")
    solver_class(cfg.solver.name).check_option_names(
        [key for key in cfg.solver if key not in ("name", "passes")])
    check_data_options(cfg.data.name, [key for key in cfg.data if key != "name"])
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise UserError(f"seed={seed} must be a whole number in [0, 2**63)")
    passes = number("solver.passes", cfg.solver.passes)
    if not passes > 0:
        raise UserError(f"solver.passes={cfg.solver.passes} must be > 0")
    resolve_objective(cfg, 1)
    oracle(cfg)
    for key in ("gap", "time_s"):
        if cfg.stop[key] is not None and not number(f"stop.{key}", cfg.stop[key]) > 0:
            raise UserError(f"stop.{key}={cfg.stop[key]} must be positive (or null)")


def load_tasks(cfg):
    """``(split, train task, test task)`` of the configured dataset."""
    data_cfg = OmegaConf.to_container(cfg.data, resolve=True)
    name = data_cfg.pop("name")
    split = load_split(name, **data_cfg)
    return split, make_task(split.train, cfg.loss), make_task(split.test, cfg.loss)


def build_solver(cfg, task, lam, l1):
    """The configured solver on ``task`` (options checked, unknown names refused)."""
    options = OmegaConf.to_container(cfg.solver, resolve=True)
    solver_name = options.pop("name")
    options.pop("passes")
    return make_solver(solver_name, task, lam, options, int(cfg.seed), oracle(cfg), l1)


def oracle(cfg):
    """The configured :class:`~ssvmbench.tasks.oracles.Oracle` (unknown keys refused)."""
    given = OmegaConf.to_container(cfg.oracle, resolve=True)
    known = [f.name for f in dataclasses.fields(Oracle)]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UserError(f"oracle.{unknown[0]}: not an oracle setting; they are {known}")
    return Oracle(**given)


def prepare(cfg):
    """Everything a run needs, validated before any result is written:
    ``(solver, train task, test task, split, lam)``."""
    split, train, test = load_tasks(cfg)
    lam, l1 = resolve_objective(cfg, train.n)
    return build_solver(cfg, train, lam, l1), train, test, split, lam


WARM_UP_EXAMPLES = 2


def warm_up(cfg, split, lam, l1):
    """Compile (or load from numba's cache) every kernel the run will call, by one pass and
    one checkpoint of the same solver on the first ``WARM_UP_EXAMPLES`` training and test
    examples: the same array types, so the timed loop never compiles (benchopt's warm-up).
    Returns its seconds, logged as ``jit_s`` and never counted in ``time_s``."""
    start = time.perf_counter()
    tiny_train, tiny_test = (make_task(part.subset(range(min(WARM_UP_EXAMPLES, part.n))),
                                       cfg.loss)
                             for part in (split.train, split.test))
    solver = build_solver(cfg, tiny_train, lam, l1)
    solver.run_until(2 * tiny_train.n)
    measure(solver, tiny_train, tiny_test)
    return time.perf_counter() - start


def run(cfg, run_dir, overrides=(), sweep=False, eval_threads=None) -> Path:
    """Train as configured and log to ``run_dir/run.h5`` (skipped if it holds this
    configuration's finished log, see :func:`~ssvmbench.runlog.make_room`); returns the log
    path. ``overrides``: the command line's, recorded in the log. In a ``sweep``, a
    combination that cannot run (:class:`~ssvmbench.errors.Incompatible`) leaves a skipped
    log with the reason and lets the sweep go on. ``eval_threads``: the threads of a
    checkpoint's evaluation (default: this run's share of the cores,
    :func:`~ssvmbench.monitor.evaluation_threads`)."""
    check_settings(cfg)
    points = schedule(float(cfg.solver.passes), cfg.eval.every, cfg.eval.log_start,
                      cfg.eval.per_decade)
    path = Path(run_dir) / LOG_NAME
    config = OmegaConf.to_yaml(cfg, resolve=True)
    try:
        with RunLock(run_dir, config) as lock:
            return _run_owned(cfg, path, config, overrides, sweep, points,
                              eval_threads or evaluation_threads(), lock.check)
    except Busy as busy:
        if not busy.same_config:
            raise UserError(f"{run_dir} is being written by another run ({busy}); choose "
                            "another hydra.run.dir / hydra.sweep.dir") from None
        say(f"{path}: being written by another process ({busy}), skipped")
        return path


def _run_owned(cfg, path, config, overrides, sweep, points, eval_threads, owned):
    """:func:`run` once the run directory is ours (``owned()`` raises
    :class:`~ssvmbench.runlog.LostOwnership` once it is not, checked before every write)."""
    state_path = path.with_name(STATE_NAME)
    code = code_identity()
    resume = (not cfg.get("restart", False) and state_path.exists()
              and resumable(path, config, code))
    state = read_state(state_path) if resume else None
    resume = state is not None
    if not resume:
        if not make_room(path, config, code, cfg.get("reuse_stale", False)):
            return path
        state_path.unlink(missing_ok=True)
    say(f"ssvmbench run: solver={cfg.solver.name} data={cfg.data.name} (data root "
        f"{data_root(cfg.data.get('root'))}) -> {path}")
    with StopSignals() as signals:
        numba.set_num_threads(eval_threads)
        try:
            split, train, test = load_tasks(cfg)
            lam, l1 = resolve_objective(cfg, train.n)
            with blame_plugin(cfg.solver.name):
                jit_s = warm_up(cfg, split, lam, l1)
        except Incompatible as err:
            if not sweep:
                raise
            write_skipped(path, {"config": config, "overrides": list(overrides),
                                 "solver": cfg.solver.name, "data": cfg.data.name,
                                 "code": code}, str(err))
            say(f"skipped: {err} (log: {path})")
            return path
        try:
            signals.check()
        except Interrupted as err:
            raise Interrupted(f"{err} before training started; nothing was written",
                              err.signum) from None
        with blame_plugin(cfg.solver.name):
            solver = build_solver(cfg, train, lam, l1)
            if resume:
                solver.load_state(state["solver"])
        clock = {"solver_s": 0.0, "eval_s": 0.0}
        if resume:
            clock.update(state["clock"])
            log = RunLog.reopen(path, solver.oracle_calls)
            say(f"{path}: continuing the stopped run from pass "
                f"{solver.oracle_calls / train.n:.3g} (restart=true starts afresh)")
        else:
            log = RunLog(path, {**_attributes(config, overrides, cfg, solver, split, lam),
                                "jit_s": jit_s})
        log.guard = owned
        try:
            with log:
                _train(cfg, solver, train, test, points, log, signals, clock,
                       lambda: save_state(state_path, solver, clock), owned)
                owned()
                if cfg.get("save_weights", True):
                    save_weights(path.with_name(WEIGHTS_NAME), solver)
        except Interrupted as err:
            owned()
            with contextlib.suppress(DiskFull):   # else the last periodic state stays
                save_state(state_path, solver, clock)
            raise Interrupted(f"{err} after {solver.oracle_calls / train.n:.3g} passes; "
                              f"its log {path} says status=interrupted", err.signum) from None
        except Diverged as err:
            say(f"ssvmbench run: diverged: {err}; its log {path} says status=diverged "
                "(a smaller step size may help)", error=True)
            state_path.unlink(missing_ok=True)
            return path
        state_path.unlink(missing_ok=True)
    say(finished_summary(path, path.parent.parent if sweep else path.parent))
    if signals.received is not None:          # while the finished run's results were written
        say(f"ssvmbench run: received {signal.Signals(signals.received).name} while writing "
            f"the finished run's results; they are complete ({path} says status=finished)",
            error=True)
        raise Stopped(128 + signals.received)
    return path


@contextlib.contextmanager
def blame_plugin(solver_name):
    """Around the calls into a solver (build, load_state, steps, iterates): an exception
    raised there by a plugin solver is one line naming the plugin and its entry point
    (:class:`~ssvmbench.errors.PluginError`); its traceback goes to the run's ``app.log``,
    and ``SSVMBENCH_DEBUG=1`` lets the exception itself through."""
    try:
        yield
    except (UserError, Interrupted, Diverged, LostOwnership, OSError, MemoryError):
        raise
    except Exception as err:
        cls = solver_class(solver_name)
        if is_built_in(cls) or os.environ.get("SSVMBENCH_DEBUG"):
            raise
        logging.getLogger("ssvmbench").exception(f"{describe(cls)} raised")
        raise PluginError(f"{describe(cls)} raised {type(err).__name__}: {err} (its traceback "
                          "is in the run's app.log; SSVMBENCH_DEBUG=1 shows it here)") from None


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
    lines += [f"  {row.iterate:6s} primal {row.primal:.6g}  "
              + (f"dual {row.dual:.6g}  gap {row.gap:.3g}  " if math.isfinite(row.dual) else "")
              + f"test {metric} {row.test_metric:.4g}" for row in last.itertuples()]
    lines += [f"run log: {path}", f"next: ssvmbench plot {logs} -o {logs / 'figures'}"]
    return "\n".join(lines)


STATE_NAME = "state.pkl"


class Stopped(Exception):
    """A run whose results are complete but that was asked to stop on the way out: the exit
    status to give (128 + the signal)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


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


def _save(path, arrays, write):
    """:func:`~ssvmbench.files.write_atomically` after checking the disk has room for
    ``arrays`` (their bytes); a failed write raises :class:`~ssvmbench.runlog.DiskFull`."""
    check_space(path.parent, sum(a.nbytes for a in arrays if isinstance(a, np.ndarray)))
    try:
        write_atomically(path, write)
    except OSError as err:
        raise DiskFull(f"could not write {path}: {err}") from None


def save_state(path, solver, clock):
    """The solver's state and the clocks, written atomically beside the run log."""
    state = {"solver": solver.state_dict(), "clock": dict(clock)}
    _save(path, state["solver"].values(),
                      lambda out: pickle.dump(state, out, protocol=pickle.HIGHEST_PROTOCOL))


WEIGHTS_NAME = "weights.npz"


def save_weights(path, solver):
    """The final weights of every logged iterate (``raw``, ``wavg``, …; float64, compressed)
    beside the run log, written atomically: ``np.load(path)["wavg"]`` is a trained model
    for ``make_task(split).evaluate(w)``."""
    weights = {name: w for name, w, _ in solver.iterates()}
    _save(path, weights.values(), lambda out: np.savez_compressed(out, **weights))


def _train(cfg, solver, train, test, points, log, signals, clock, save, owned):
    """The timed loop: solver steps up to each checkpoint (in slices of an eighth of a pass,
    so that a stop is seen within one), then the measurements, appended to ``log`` (a
    checkpoint the log has, ``log.last_calls``, is not redone; one the solver reached but
    the log lacks, e.g. after a full disk, is measured now); the
    state is saved (``save()``) after a checkpoint when :func:`_save_due`, ``owned()``
    checked first. ``clock``: the cumulative solver and evaluation seconds."""
    last_save, save_cost = time.perf_counter(), 0.0
    bar = tqdm(total=float(cfg.solver.passes), unit="pass", disable=not sys.stderr.isatty(),
               bar_format="{l_bar}{bar}| {n:.2f}/{total:.0f} passes [{elapsed}<{remaining}"
                          "{postfix}]")
    for target in points:
        calls = int(np.ceil(target * train.n - 1e-9))
        if calls <= log.last_calls:          # logged already (a continued run)
            continue
        while solver.oracle_calls < calls and not solver.converged:
            start = time.perf_counter()
            with blame_plugin(solver.name):
                solver.run_until(min(calls, solver.oracle_calls + max(1, train.n // 8)))
            clock["solver_s"] += time.perf_counter() - start
            if solver.oracle_calls < calls:   # a checkpoint reached is logged before a stop
                signals.check()
        start = time.perf_counter()
        with blame_plugin(solver.name):
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
        if _save_due(cfg.resume, time.perf_counter() - last_save, save_cost):
            owned()
            start = time.perf_counter()
            save()
            last_save = time.perf_counter()
            save_cost = last_save - start
        signals.check()
        bar.update(solver.oracle_calls / train.n - bar.n)
        bar.set_postfix(primal=f"{rows['primal'][0]:.4g}", gap=f"{rows['gap'][0]:.3g}")
        if solver.converged or _should_stop(cfg.stop, rows["gap"][0], clock["solver_s"]):
            break
    bar.close()


def _save_due(resume, since_save, save_cost):
    """Whether to save the state at this checkpoint: ``resume.every_s`` seconds after the last
    save, or by default (``every_s: null``) at every checkpoint whose save costs at most
    ``resume.max_overhead`` of the time since the last one (the last save's seconds,
    ``save_cost``, stand for the next one's), so that a SIGKILL loses about one checkpoint
    interval at a few percent of the run's time."""
    if resume.every_s is not None:
        return since_save >= resume.every_s
    return save_cost <= resume.max_overhead * since_save


def _should_stop(stop, gap, solver_time):
    return ((stop.gap is not None and gap <= stop.gap)
            or (stop.time_s is not None and solver_time >= stop.time_s))


class StopSignals:
    """Record SIGTERM, SIGINT and SIGUSR2 (a cluster's warning before its time limit or a
    preemption, submitit's signal) instead of raising inside whatever runs (a compiled solver
    pass, an HDF5 write, numba compiling): :meth:`check`, called between steps, raises
    :class:`Interrupted` (with the signal) once one has arrived, so no signal is lost, the
    state is saved and the run log is closed with ``status=interrupted``. The first signal
    is acknowledged at once on stderr; a second one ends the process at once (the handler is
    one-shot at the C level, so this holds even inside compiled code that never returns to
    Python), and the run continues later from its last saved checkpoint."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR2)
    one_shot = True     # False in a batch's workers: their parent kills them on a second
    #                     signal, and a dying parent's death signal may come more than once

    def __enter__(self):
        self.received = None

        def handler(signum, frame):
            if self.received is None:                  # the first: a second ends it
                self.received = signum
                os.write(2, f"ssvmbench run: {signal.Signals(signum).name}: stopping at the "
                            "next step with the state saved (compiling can take a minute; "
                            "again to stop at once)\n".encode())
        self._previous = {sig: signal.signal(sig, handler) for sig in self.SIGNALS}
        for sig in self.SIGNALS if self.one_shot else ():
            one_shot(sig)
        return self

    def check(self):
        if self.received is not None:
            raise Interrupted(f"received signal {self.received} "
                              f"({signal.Signals(self.received).name})", self.received)

    def __exit__(self, *exc):
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        return False


class _SigAction(ctypes.Structure):
    """glibc's ``struct sigaction`` (Linux)."""
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


def one_shot(sig):
    """Linux: make the handler now installed for ``sig`` one-shot at the C level
    (``SA_RESETHAND``): once it has been delivered, the next ``sig`` has its default action
    (the process ends), whether or not Python got to run the handler."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    action = _SigAction()
    if libc.sigaction(int(sig), None, ctypes.byref(action)) == 0:
        action.flags |= -0x80000000                       # SA_RESETHAND, as a C int
        libc.sigaction(int(sig), ctypes.byref(action), None)


def _attributes(config, overrides, cfg, solver, split, lam):
    return {
        "config": config,
        "overrides": list(overrides),
        "solver": solver.name,
        "method": solver.method,
        "data": cfg.data.name,
        "data_variant": split.variant,
        "data_source": split.source,
        "dataset_checksum": split.checksum,
        "lambda": lam,
        "lambda_spec": str(cfg["lambda"] if cfg.get("C") is None else
                           f"C={cfg.C} rho1={cfg.rho1} rho2={cfg.rho2}"),
        "l1": solver.l1,
        "seed": int(cfg.seed),
        "n": solver.task.n,
        "d": solver.task.d,
        "n_test": split.test.n,
        "test_metric": split.metric,
        "objective": objective.FORMULA,
        "loss": solver.task.loss,
        "iterates": ",".join(solver.iterate_names),
        "oracle": solver.oracle.name,
        "oracle_K": solver.oracle.K,
        "oracle_mu": float(solver.oracle.mu),
        "solver_threads": 1,
        "eval_threads": numba.get_num_threads(),
        "versions": {pkg: package_version(pkg) for pkg in
                     ("ssvmbench", "numpy", "numba", "llvmlite", "scipy", "daqp", "pandas",
                      "h5py", "hydra-core")},
        "code": code_identity(),
        "python": sys.version.split()[0],
        "git_revision": git_revision(),
        "host": os.uname().nodename,
    }


def code_identity():
    """What a finished log must have been made by to be reused: the digest of the package's
    sources (:func:`~ssvmbench.paths.source_digest`; unlike the git revision it changes with
    an uncommitted edit and not with a commit of docs alone) and the versions of the
    packages that shape a run's numbers."""
    return {"sources": source_digest(),
            **{pkg: package_version(pkg) for pkg in ("numpy", "numba", "scipy", "daqp")}}


def package_version(name):
    """The installed version of ``name``, or ``"not installed"`` (ssvmbench run from a
    checkout on ``PYTHONPATH``: the git revision then identifies the code)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def git_revision():
    """Commit of the source tree (the package's, else the working directory's)."""
    for where in (Path(__file__).parent, Path.cwd()):
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                 text=True, cwd=where, timeout=5)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0:
            return out.stdout.strip()
    return "unknown"
