"""``ssvmbench reproduce PRESET...``: the runs, figures and report of paper presets
(:mod:`ssvmbench.papers.presets`) as one batch, optionally with methods of your own beside the
papers' (``--with``, :mod:`ssvmbench.papers.added`) and the papers' runs taken from an earlier
reproduction's traces (``--from DIR``)."""

import argparse
import shlex
import sys
from pathlib import Path

from ssvmbench.batch import detach
from ssvmbench.batch.jobs import check_jobs, expected_wall_s, is_hydra_override
from ssvmbench.batch.launchers import launcher_settings, run_batch, workers
from ssvmbench.common.errors import UserError
from ssvmbench.common.files import write_atomically
from ssvmbench.common.messages import duration, start_planning
from ssvmbench.papers import added, presets, report
from ssvmbench.plotting import folder
from ssvmbench.plotting import options as plot_options
from ssvmbench.plotting.curves import added_rows
from ssvmbench.run import traces
from ssvmbench.run.provenance import committed_files
from ssvmbench.run.runlock import Busy, RunLock
from ssvmbench.run.runlog import load_logs, read_log


class _With(argparse.Action):
    """``--with solver=NAME [KEY=VALUE ...]``: one more added method."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.methods = [*(namespace.methods or []), {"words": values, "label": None}]


class _As(argparse.Action):
    """``--as LABEL``: the label of the ``--with`` before it."""

    def __call__(self, parser, namespace, values, option_string=None):
        if not namespace.methods or namespace.methods[-1]["label"] is not None:
            parser.error("--as LABEL names the --with just before it")
        namespace.methods[-1]["label"] = values


def configure_parser(parser):
    parser.add_argument("presets", nargs="*", metavar="PRESET",
                        help="configs/experiment/PRESET.yaml, or a paper (bcfw: all its "
                             "presets); none: list them")
    parser.add_argument("--size", choices=["full", "smoke"],
                        help="full (the default): the paper's passes and seeds, asked for "
                             "confirmation at a terminal unless given; smoke: a data subset, "
                             "few passes, two seeds (about a minute)")
    parser.add_argument("--out", metavar="DIR",
                        help="logs go to DIR/logs/SWEEP, figures to DIR/PRESET, the report of "
                             "every preset in DIR to DIR/report.md (default: "
                             "results/reproduce/SIZE)")
    parser.add_argument("--with", dest="methods", nargs="+", action=_With,
                        metavar=("solver=NAME", "KEY=VALUE"),
                        help="add a method to every figure of the presets: its solver and "
                             "solver. / oracle settings, run on each preset's data, lambda "
                             "values, seeds, passes and checkpoints (its `with` sweeps), "
                             "compared with the papers' methods in the report; repeatable; "
                             "give the presets before it")
    parser.add_argument("--as", action=_As, metavar="LABEL",
                        help="the name of the --with before it in figures, tables and the "
                             "report (default: its settings, e.g. 'gap_bcfw')")
    parser.add_argument("--from", dest="source", metavar="DIR",
                        help="take the papers' methods from the traces of an earlier "
                             "reproduction of the same size (e.g. results/reproduction) and "
                             "run only the --with methods")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands and count the runs only")
    parser.add_argument("--detach", action="store_true",
                        help="submit and return: the runs, figures and report go on without "
                             "this shell (a process of its own, or on SLURM the array and a "
                             "job after it); `ssvmbench status OUT` says how they do")
    parser.add_argument("--finish", action="store_true", help=argparse.SUPPRESS)
    # --finish: the figures and the report if every run finished, else say which did not
    # (the job a detached SLURM batch submits after its array)
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="allow an --out that holds results committed to git (refused "
                             "otherwise, so that a checkout's results are not redrawn by "
                             "accident)")
    parser.add_argument("--overrides", nargs="+", default=[], metavar="OVERRIDE",
                        help="added to every sweep, replacing a value the sweep sets "
                             "(data=voc for the synthetic scenes), e.g. --overrides "
                             "hydra/launcher=local "
                             "hydra.launcher.n_jobs=2")


def main(args):
    if not args.presets:
        return _list()
    size = args.size or "full"
    start_planning()
    out = Path(args.out or f"results/reproduce/{size}")
    names = presets.expand(args.presets)
    chosen = added.methods(args.methods or [])
    if args.source and not chosen:
        raise UserError(f"--from {args.source} takes the papers' runs from its traces for the "
                        "methods --with adds; give --with solver=NAME, or leave out --from")
    sources = reused_traces(names, size, Path(args.source)) if args.source else {}
    hydra = [word for word in args.overrides if is_hydra_override(word)]
    paper = [] if sources else presets.batch_jobs(
        names, size, out, [w for w in args.overrides if w not in hydra])
    extra = added.plan(names, size, out, chosen, args.overrides)
    jobs = paper + [job for job in extra.jobs if job.run_dir not in {j.run_dir for j in paper}]
    settings = launcher_settings(hydra, out / "logs")
    parallel, startup_s = workers(settings, len(jobs))
    steps = ([] if sources else [step for step in presets.distinct_steps(
        names, size, out, args.overrides) if step[0] == "run"]) + extra.steps
    plots = [presets.plot_step(name, size, out, sources.get(name) or [
        out / "logs" / sweep for sweep in presets.load(name)["sweeps"]], extra.added[name])
        for name in names]
    plan = _plan_text(names, size, jobs, steps, parallel, startup_s, args.source)
    if args.size is None and not args.dry_run and sys.stdin.isatty():
        answer = input(f"{plan}. Run the full size? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing run; --size smoke runs a small version in minutes")
            return 0
    for line in extra.skipped:
        print(line, flush=True)
    print(f"# {plan}", flush=True)
    for step in steps + plots:
        print("#   ssvmbench " + shlex.join(map(str, step)), flush=True)
    if args.dry_run:
        return 0
    committed = committed_files(out)
    if committed and not args.overwrite_committed:
        raise UserError(f"{out} holds results committed to git (e.g. {committed[0]}): give "
                        "another --out, or --overwrite-committed to redraw them")
    out.mkdir(parents=True, exist_ok=True)
    try:
        with RunLock(out, "reproduce", OUT_LOCK):
            if args.finish:
                return _finish(out, jobs, plots)
            if not args.detach:
                return _reproduce(names, out, jobs, settings, plots)
            check_jobs(jobs)            # a bad override is one line here, not in the batch
    except Busy as busy:
        raise UserError(f"{out} is in use by another ssvmbench reproduce ({busy}); wait for "
                        "it to end, or give another --out") from None
    return _detach(args, size, out, jobs, settings)     # whoever runs the batch locks OUT


def _detach(args, size, out, jobs, settings):
    """``--detach``: hand the batch, its figures and its report to a process or SLURM jobs
    that outlive this shell (:mod:`ssvmbench.batch.detach`)."""
    command = detach.child_command(args, size, out)
    if settings["_target_"].endswith("SlurmLauncher"):
        array, finish = detach.slurm(jobs, settings, command, out)
        print(f"ssvmbench reproduce: detached: SLURM job {array} runs the {len(jobs)} runs, "
              f"job {finish} draws the figures and the report after them (its messages: "
              f"{out}/reproduce-{finish}.log); `ssvmbench status {out}` says how they do")
        return 0
    pid = detach.local(command, out)
    print(f"ssvmbench reproduce: detached: process {pid} runs the {len(jobs)} runs, the "
          f"figures and the report without this shell (its messages: {out / detach.LOG_NAME}); "
          f"`ssvmbench status {out}` says how they do")
    return 0


def _finish(out, jobs, plots):
    """``--finish``: the figures and the report if every run of ``jobs`` finished, else one
    line per run that did not and status 1."""
    unfinished = []
    for job in jobs:
        try:
            status = read_log(job.log)[1].get("status")
        except (OSError, KeyError, ValueError, RuntimeError):
            status = "not started"
        if status not in ("finished", "diverged", "skipped"):
            unfinished.append(f"{job.run_dir} ({status})")
    if unfinished:
        print(f"ssvmbench reproduce: {len(unfinished)} of {len(jobs)} runs did not finish, so "
              "no figures or report yet; the same reproduce command continues them:\n  "
              + "\n  ".join(unfinished), file=sys.stderr)
        return 1
    return _draw(out, plots)


OUT_LOCK = "reproduce.lock"      # in --out while a reproduce runs its batch, plots and report


def _reproduce(names, out, jobs, settings, plots):
    """Run the batch, then the plots and the report (``out`` is this command's)."""
    for name in names:
        if name.endswith(".yaml"):                        # the report finds it there
            write_atomically(out / presets.figure_dir(name) / presets.PRESET_COPY,
                             lambda file, name=name: file.write(Path(name).read_bytes()))
    check_jobs(jobs)
    status = run_batch(jobs, settings) if jobs else 0
    if status:
        print("ssvmbench reproduce: the plots and the report follow when every run is done: "
              "run the same command again (finished runs are kept)", file=sys.stderr)
        return status
    return _draw(out, plots)


def _draw(out, plots):
    """Run the plot steps, then the report of ``out``."""
    for step in plots + [["report", str(out)]]:
        step = [str(word) for word in step]
        print("ssvmbench " + shlex.join(step), flush=True)
        if _execute(step):
            raise UserError(f"step failed: ssvmbench {shlex.join(step)}; fix it and run "
                            "the same command again (finished runs are kept and skipped)")
    return 0


def reused_traces(names, size, source):
    """``{preset: [its traces file under source]}`` for ``--from``: each preset's traces of
    the papers' methods, at ``size`` (smoke runs never sit beside full-size traces)."""
    found = {}
    for name in names:
        path = source / presets.figure_dir(name) / traces.NAME
        if not path.is_file():
            raise UserError(f"--from {source}: no {path.relative_to(source)} (the traces of "
                            f"preset {presets.figure_dir(name)}); reproduce it there first, or "
                            "leave out --from")
        df = load_logs(path)
        if added_rows(df).any():
            raise UserError(f"--from {source}: {path} holds methods added with --with; give "
                            "the folder of a reproduction of the papers' methods")
        smaller = presets.smaller_than_full(presets.load(name), df)
        if bool(smaller) != (size != "full"):
            held = f"smaller than full size ({smaller})" if smaller else "full-size"
            raise UserError(f"--from {source}: its {presets.figure_dir(name)} traces are "
                            f"{held}, and --size {size} runs would not compare with them; "
                            f"give --size {'smoke' if smaller else 'full'} or another --from")
        found[name] = [path]
    return found


def _plan_text(names, size, jobs, steps, parallel, startup_s, source):
    """One line: the sweeps and runs to make, and their expected time where measured."""
    sweeps = len(steps)
    passes = max(presets.load(name)["sizes"][size]["passes"] for name in names)
    plan = (f"{size} size: {sweeps} sweep{'s' * (sweeps != 1)}, {len(jobs)} runs of up to "
            f"{passes:g} passes ({', '.join(names)})")
    if source:
        plan += f"; the papers' methods from the traces in {source}"
    if jobs and all(presets.seconds_per_run(name, size) for name in names):
        longest = max(presets.estimate(name, size)[1] for name in names) + startup_s
        wall = max(expected_wall_s(jobs, parallel, startup_s), longest)
        plan += (f"; measured on a 2-core VM: ~{duration(sum(j.expected_s for j in jobs))} of "
                 f"run time, ~{duration(wall)} of wall time as one batch on {parallel} "
                 f"worker{'s' * (parallel > 1)}"
                 + (" (--overrides hydra/launcher=local hydra.launcher.n_jobs=2: two)"
                    if parallel == 1 else ""))
    return plan


def _list():
    """Print every preset with its paper item and its cost at both sizes."""
    for name in presets.available():
        preset = presets.load(name)
        item = f"{preset['paper']} {preset['item']}"
        print(f"{name:28s} {item:32s} {presets.cost_text(name, 'full')}; "
              f"{presets.cost_text(name, 'smoke')}")
    return 0


def _execute(step):
    """Exit code of a plot or report step, run in this process (its bad input: one line and
    2, as on the command line)."""
    parser = argparse.ArgumentParser(prog=f"ssvmbench {step[0]}")
    (plot_options if step[0] == "plot" else report).configure_parser(parser)
    try:
        args = parser.parse_args(step[1:])
        if step[0] == "report":
            return report.main(args)
        for path in folder.write(args, *presets.plot_inputs(args)):
            print(path)
        return 0
    except UserError as err:
        print(f"ssvmbench {step[0]}: error: {err}", file=sys.stderr)
        return 2
