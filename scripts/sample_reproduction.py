"""Re-measure a reproduction's run time with the code of this checkout, by sampling each sweep.

For every distinct sweep of the presets (a sweep shared by several presets once), its first
run (Hydra's order) is run again, alone, up to the first of its committed checkpoints at or
after ``--fraction`` of its passes (same settings, same checkpoints), and its timed seconds
(solving plus evaluation, the log's ``time_s + eval_time_s``) are compared with the same
run's in the committed traces at that checkpoint. Every run of the sweep is then expected to
take its committed run time times that ratio; the per-preset sums are what ``reproduce``
prints as its estimate (``sizes.full.measured``), and ``--write`` puts them there.

    python scripts/sample_reproduction.py [PRESET...] --traces results/reproduction \\
        --fraction 0.1 --work $(mktemp -d) [--write]

With ``--as-committed`` nothing is sampled: the committed traces are taken as this code's own
full runs (a reproduction just re-run and committed), each ratio is 1, and the presets'
estimates become those runs' measured times.

Each sample is a real ``ssvmbench run`` (kernels from the warm cache: run one sample first,
or ``ssvmbench check-solver``, on an empty cache). The committed runs ran in sweeps of two
workers, some beside other work; the samples run one at a time, so a ratio also holds what
two workers cost a run (at most 1.1x with BLAS on one thread, docs/benchmarks.md).
"""

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd
import yaml

from ssvmbench.batch.jobs import is_hydra_override
from ssvmbench.papers import presets
from ssvmbench.papers.report import compute_time
from ssvmbench.run import traces
from ssvmbench.runlog import load_logs

IGNORED = ("reuse_stale=",)     # a committed run's words that do not change what it runs


def settings_of(words):
    return frozenset(w for w in words if not is_hydra_override(w) and not w.startswith(IGNORED))


def committed_runs(root):
    """``{settings: {sweep folder: rows of that run}}`` of every committed figure's traces (a
    run two figures draw once; two sweeps may run the same settings, as Casimir Figures 3a
    and 3b do)."""
    frames = [traces.read(path) for path in sorted(Path(root).glob(f"*/{traces.NAME}"))]
    table = pd.concat(frames).drop_duplicates(["run", "iterate", "effective_pass"])
    runs = defaultdict(dict)
    for run, rows in table.groupby("run", sort=False):
        words = yaml.safe_load(rows["overrides"].iloc[0])
        runs[settings_of(words)][Path(run).parent.parent.name] = rows.sort_values(
            "effective_pass")
    return runs


def committed_run(committed, sweep, job):
    """The committed rows of ``job`` of ``sweep``: the run of its settings in that sweep's
    folder, else in another (runs added to a figure later may sit in another sweep's
    folder), else None."""
    found = committed.get(settings_of(job.overrides), {})
    return found.get(sweep, next(iter(found.values()), None))


def timed_until(rows, passes):
    """Solving plus evaluation seconds of a run's rows at the checkpoint ``passes``."""
    at = rows[rows["effective_pass"] == passes]
    return float(at["time_s"].iloc[0] + at["eval_time_s"].iloc[0])


def sample(job, rows, fraction, work):
    """``(checkpoint, committed seconds, seconds now)`` of ``job`` run again up to the first
    committed checkpoint at or after ``fraction`` of its passes."""
    points = sorted(rows["effective_pass"].unique())
    full = points[-1]
    stop = next(p for p in points if p >= fraction * full)
    words = [w for w in job.overrides if not w.startswith("solver.passes=")]
    out = Path(work) / Path(job.run_dir).parent.name
    command = [sys.executable, "-m", "ssvmbench", "run", "-m", *words,
               f"solver.passes={stop:g}", f"hydra.sweep.dir={out}"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"sample of {out.name} failed: {done.stderr.strip().splitlines()[-1:]}")
    now = load_logs(str(out)).sort_values("effective_pass")
    return stop, timed_until(rows, stop), timed_until(now, stop)


def sweeps(names):
    """``{sweep folder: (its jobs, the presets drawing it)}`` in the presets' order."""
    found = {}
    for name in names:
        for job in presets.batch_jobs([name], "full", "OUT"):
            sweep = Path(job.run_dir).parent.name
            entry = found.setdefault(sweep, ([], []))
            if name not in entry[1]:
                entry[1].append(name)
            if job.run_dir not in {j.run_dir for j in entry[0]}:
                entry[0].append(job)
    return found


def write_measured(name, runs, run_s, longest_s):
    """Replace the ``measured`` of the preset's full size in its YAML file (one line)."""
    path = presets.preset_dir() / f"{name}.yaml"
    text = path.read_text()
    line = re.compile(r"^(  full: \{.*?)measured: \{[^}]*\}", re.M)
    new, count = line.subn(rf"\1measured: {{runs: {runs}, run_s: {round(run_s)}, "
                           rf"longest_s: {round(longest_s)}}}", text)
    if count != 1:
        raise SystemExit(f"{path}: no single `full: {{... measured: {{...}}}}` line to update")
    path.write_text(new)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("presets", nargs="*", help="preset names (default: all)")
    parser.add_argument("--traces", default="results/reproduction",
                        help="the committed reproduction (its figures' traces.parquet)")
    parser.add_argument("--fraction", type=float, default=0.1,
                        help="share of a run's passes to sample (its next checkpoint)")
    parser.add_argument("--work", help="a scratch folder for the samples")
    parser.add_argument("--as-committed", action="store_true",
                        help="no samples: the traces are this code's own full runs, so each "
                             "sweep's runs are expected to take their committed run times")
    parser.add_argument("--write", action="store_true",
                        help="write the estimates into the presets' sizes.full.measured")
    args = parser.parse_args()
    if not args.as_committed and not args.work:
        parser.error("give --work DIR for the samples (or --as-committed)")
    names = presets.expand(args.presets) if args.presets else presets.available()
    committed = committed_runs(args.traces)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}; " + (
        "the committed run times" if args.as_committed else
        f"sampling {args.fraction:g} of each sweep's first run"))
    print(f"{'sweep':40s} {'runs':>4s} {'pass':>6s} {'then s':>8s} {'now s':>8s} "
          f"{'ratio':>5s} {'then h':>6s} {'now h':>6s}")
    per_preset = defaultdict(lambda: [0, 0.0, 0.0])
    then_total = now_total = 0.0
    for sweep, (jobs, drawn_by) in sweeps(names).items():
        rows = [committed_run(committed, sweep, job) for job in jobs]
        if any(r is None for r in rows):
            raise SystemExit(f"sweep {sweep}: {sum(r is None for r in rows)} of its runs "
                             f"are not in the traces under {args.traces}")
        stop, then_s, now_s = (0, 1.0, 1.0) if args.as_committed else sample(
            jobs[0], rows[0], args.fraction, args.work)
        ratio = now_s / then_s
        seconds = pd.Series([compute_time(r.drop_duplicates("run"))[1] for r in rows])
        then_total += seconds.sum()
        now_total += seconds.sum() * ratio
        print(f"{sweep:40s} {len(jobs):4d} {stop:6g} {then_s:8.1f} {now_s:8.1f} {ratio:5.2f} "
              f"{seconds.sum() / 3600:6.2f} {seconds.sum() * ratio / 3600:6.2f}", flush=True)
        for name in drawn_by:
            entry = per_preset[name]
            entry[0] += len(jobs)
            entry[1] += seconds.sum() * ratio
            entry[2] = max(entry[2], seconds.max() * ratio)
    print(f"all sweeps, each run once: {then_total / 3600:.2f} h then, "
          f"{now_total / 3600:.2f} h now ({now_total / then_total:.2f}x)")
    for name in names:
        runs, run_s, longest_s = per_preset[name]
        print(f"  {name}: {runs} runs, {run_s / 3600:.2f} h, longest {longest_s:.0f} s")
        if args.write:
            write_measured(name, runs, run_s, longest_s)


if __name__ == "__main__":
    main()
