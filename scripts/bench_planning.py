#!/usr/bin/env python
"""Planning a big sweep: how long ``ssvmbench run -m`` takes before its first run starts.

For each sweep — ``solver=bcfw data=ocr seed=range(0,N)`` for N in ``--sizes`` (default 100,
1,000 and 5,000) and a mixed one of the same size over ``solver=bcfw,ssg`` × five λ ×
seeds — one fresh ``python -m ssvmbench run -m … hydra.sweep.dir=TMP`` (a local pool of one
worker) is started and watched from outside:

- *batch line*: seconds until the batch's first line (``ssvmbench: N runs on …``), when
  planning is done;
- *first run*: seconds until the first run's folder appears (its worker has started it);
- *planning*: the batch line's seconds minus those of the same sweep with one run (start-up
  and imports), and per run in ms; *CPU*: the command's CPU seconds until its first run,
  minus the one-run sweep's;
- *peak RSS*: the command's peak resident memory (``VmHWM``) when its first run starts.

Then the command is stopped (SIGTERM: the batch stops its runs and exits). Nothing is
trained beyond the first run's start; the data need not be there.

    python scripts/bench_planning.py                       # the table, markdown
    python scripts/bench_planning.py --sizes 100 --no-mixed
    python scripts/bench_planning.py --profile 200         # cProfile of planning 200 runs
    python scripts/bench_planning.py --profile 200 --reproduce bcfw_figure2_ocr

``--repo DIR`` runs the code of another checkout (its ``PYTHONPATH``), e.g. an older
revision exported with ``git archive``, for before/after figures in one sitting.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAMBDAS = "lambda=0.1,0.01,0.001,1/n,inv_n"


def sweeps(sizes, mixed):
    """``(name, runs, overrides, the overrides of its one-run version)`` of each sweep."""
    for n in sizes:
        yield ("bcfw × seed", n, ["solver=bcfw", "data=ocr", f"seed=range(0,{n})"],
               ["solver=bcfw", "data=ocr", "seed=0"])
        if mixed:
            yield ("bcfw,ssg × 5 λ × seed", n,
                   ["solver=bcfw,ssg", "data=ocr", LAMBDAS, f"seed=range(0,{max(1, n // 10)})"],
                   ["solver=bcfw", "data=ocr", "lambda=0.1", "seed=0"])


def _proc(pid):
    """``(CPU seconds, peak RSS in MiB)`` of process ``pid`` so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        status = Path(f"/proc/{pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
        return cpu, peak
    except (OSError, AttributeError, IndexError):
        return float("nan"), float("nan")


def measure(words, repo, python, timeout_s=3600):
    """One sweep, measured from outside: ``{batch_s, first_s, cpu_s, rss_mib}``."""
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "s"
        env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONWARNINGS": "ignore"}
        start = time.perf_counter()
        process = subprocess.Popen([python, "-m", "ssvmbench", "run", "-m", *words,
                                    f"hydra.sweep.dir={sweep}"], cwd=tmp, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        seen, err = {}, []

        def read_stdout():
            for line in process.stdout:
                if re.match(r"ssvmbench: \d+ runs? on", line):
                    seen.setdefault("batch_s", time.perf_counter() - start)

        def read_stderr():
            err.extend(process.stderr)

        readers = [threading.Thread(target=read_stdout, daemon=True),
                   threading.Thread(target=read_stderr, daemon=True)]
        for reader in readers:
            reader.start()
        cpu = rss = float("nan")
        while process.poll() is None and time.perf_counter() - start < timeout_s:
            cpu_now, rss_now = _proc(process.pid)
            if sweep.is_dir() and any(p.is_dir() for p in sweep.iterdir()):
                seen["first_s"] = time.perf_counter() - start
                cpu, rss = cpu_now, rss_now
                break
            time.sleep(0.01)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for reader in readers:
            reader.join(timeout=5)
        if "first_s" not in seen:
            raise RuntimeError(f"no run started: {' '.join(words)}\n{''.join(err)[-2000:]}")
        return {**seen, "cpu_s": cpu, "rss_mib": rss}


def table(sizes, mixed, repo, python):
    print(f"code: {repo}; python: {python}; cores: {os.cpu_count()}", flush=True)
    print("| sweep | runs | batch line, s | first run, s | planning, s | ms per run | "
          "CPU, s | peak RSS, MiB |\n|---|---|---|---|---|---|---|---|", flush=True)
    base = {}
    for name, runs, words, one in sweeps(sizes, mixed):
        if name not in base:
            base[name] = measure(one, repo, python)
        got = measure(words, repo, python)
        plan_s = got["batch_s"] - base[name]["batch_s"]
        cpu_s = got["cpu_s"] - base[name]["cpu_s"]
        print(f"| {name} | {runs:,} | {got['batch_s']:.2f} | {got['first_s']:.2f} | "
              f"{plan_s:.2f} | {1000 * plan_s / runs:.2f} | {cpu_s:.2f} | "
              f"{got['rss_mib']:.0f} |", flush=True)


def profile(runs, preset, top, repo):
    """cProfile of planning ``runs`` runs of ``run -m`` (or of ``reproduce PRESET``) in this
    process, the batch itself left out (its launcher returns at once)."""
    import cProfile
    import pstats

    sys.path.insert(0, str(repo))
    import ssvmbench.batch.launchers as launchers
    import ssvmbench.batch.launchers.local as local
    from ssvmbench import cli

    local.run_local = lambda jobs, workers=1: print(f"planned {len(jobs)} runs") or 0
    launchers.run_batch = lambda jobs, settings: print(f"planned {len(jobs)} runs") or 0
    import ssvmbench.papers.reproduce as reproduce
    reproduce.run_batch = launchers.run_batch
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        argv = (["reproduce", preset, "--size", "smoke", "--out", f"{tmp}/out"] if preset
                else ["run", "-m", "solver=bcfw", "data=ocr", f"seed=range(0,{runs})",
                      f"hydra.sweep.dir={tmp}/s"])
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.runcall(cli.main, argv)
        print(f"{' '.join(argv)}: {time.perf_counter() - start:.2f} s")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--no-mixed", action="store_true", help="only the seed sweeps")
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="the checkout whose code runs (default: this one)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--profile", type=int, metavar="RUNS",
                        help="profile planning RUNS runs in this process instead")
    parser.add_argument("--reproduce", metavar="PRESET",
                        help="with --profile: profile `reproduce PRESET --size smoke`")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    if args.profile:
        return profile(args.profile, args.reproduce, args.top, args.repo.resolve())
    table(args.sizes, not args.no_mixed, args.repo.resolve(), args.python)


if __name__ == "__main__":
    sys.exit(main())
