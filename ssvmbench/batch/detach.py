"""``reproduce … --detach``: submit and log off. The batch, its figures and its report go on
without the submitting shell, and ``ssvmbench status OUT`` says how they do.

- *Local pool*: the same ``reproduce`` command (without ``--detach``) runs in a process of its
  own session, its messages in ``OUT/reproduce.log``; closing the terminal does not stop it.
- *SLURM*: the runs are submitted as one array, and a small job that depends on it
  (``--dependency=afterany``) runs ``reproduce … --finish`` when the last task has ended:
  the figures and the report if every run finished, else one line per run that did not
  (the same command, not detached or detached again, continues them). It holds no CPU while
  the array runs. Its messages: ``OUT/reproduce-JOBID.log``.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from ssvmbench.batch.launchers.slurm import submit
from ssvmbench.common.errors import UserError

LOG_NAME = "reproduce.log"
FINISH_MINUTES = 60      # the finishing job's time limit: plots and report of the presets


def child_command(args, size, out):
    """The ``ssvmbench reproduce`` words of ``args`` (the parsed command line), without
    ``--detach``, with absolute paths (the child may start elsewhere)."""
    words = [str(Path(name).resolve()) if name.endswith(".yaml") else name
             for name in args.presets]
    words += ["--size", size, "--out", str(Path(out).resolve())]
    for method in args.methods or []:
        words += ["--with", *method["words"]] + (["--as", method["label"]]
                                                 if method["label"] else [])
    if args.source:
        words += ["--from", str(Path(args.source).resolve())]
    if args.overwrite_committed:
        words.append("--overwrite-committed")
    if args.overrides:
        words += ["--overrides", *args.overrides]
    return [sys.executable, "-m", "ssvmbench", "reproduce", *words]


def local(command, out):
    """Start ``command`` in a session of its own (no terminal, no hang-up), its output in
    ``OUT/reproduce.log``; returns its PID."""
    log = Path(out) / LOG_NAME
    with open(log, "ab") as messages:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=messages,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   cwd=os.getcwd())
    return process.pid


def slurm(jobs, settings, command, out):
    """Submit ``jobs`` as one array (:func:`ssvmbench.batch.launchers.slurm.submit`) and the job
    that finishes after it; returns ``(array id, finishing job id)``."""
    array = submit(jobs, settings)
    if not shutil.which("sbatch"):
        raise UserError("sbatch is not on PATH: run on the cluster's login node")
    partition = settings.get("partition")
    sbatch = ["sbatch", "--parsable", f"--dependency=afterany:{array}", "--kill-on-invalid-dep=no",
              "--job-name=ssvmbench-finish", "--cpus-per-task=1", "--mem=4G",
              f"--time={FINISH_MINUTES}", f"--output={Path(out).resolve()}/reproduce-%j.log",
              *([f"--partition={partition}"] if partition else []),
              "--wrap", shlex.join([*command, "--finish"])]
    done = subprocess.run(sbatch, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no reason given"]
        raise UserError(f"the runs were submitted as SLURM job {array}, but not the job that "
                        f"finishes after them: {lines[-1]}; run the same command without "
                        "--detach when they have ended")
    return array, done.stdout.strip().split(";")[0]

