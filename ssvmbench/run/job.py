"""One job of a batch, run in the calling process (a local worker's, or a SLURM task's):
its messages in ``RUN_DIR/app.log`` and its outcome as an exit status under the run's error
contract. Below the batch, the launchers and the app, which all run jobs through it."""

import logging
from pathlib import Path

from ssvmbench.common.errors import UserError, describe_os_error
from ssvmbench.common.messages import say
from ssvmbench.run import runner
from ssvmbench.run.compose import config
from ssvmbench.run.runlog import Interrupted, LostOwnership
from ssvmbench.run.stop_signals import CONTINUES, Stopped


def execute(job, eval_threads=None):
    """Run ``job`` in this process as ``ssvmbench run`` does in a sweep; its messages go to
    ``RUN_DIR/app.log``. Returns the exit status: 0 (finished, skipped or done before),
    1 (failed; the traceback is in ``app.log``), 2 (bad input), or 128 + the signal that
    stopped it (its state saved; 130 without a signal, e.g. a full disk)."""
    Path(job.run_dir).mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(job.messages)
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - "
                                           "%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        return reported(lambda: runner.run(config(job.overrides, job.search_path),
                                           job.run_dir,
                                           list(job.overrides), sweep=True,
                                           eval_threads=eval_threads),
                        unexpected=True)
    finally:
        root.removeHandler(handler)
        handler.close()


def reported(work, unexpected=False):
    """Call ``work()`` under the run's error contract: a stop, bad input or a file-system error
    is one line (printed and logged) and an exit status (see :func:`execute`); with
    ``unexpected``, any other exception too (its traceback logged)."""
    try:
        work()
        return 0
    except Stopped as stop:
        return stop.status
    except LostOwnership as err:
        say(f"ssvmbench run: stopped: {err}", error=True)
        return 1
    except UserError as err:
        say(f"ssvmbench run: error: {err}", error=True)
        return 2
    except Interrupted as err:
        say(f"ssvmbench run: interrupted: {err}; {CONTINUES}", error=True)
        return 128 + (err.signum or 2)
    except OSError as err:
        say(f"ssvmbench run: error: {describe_os_error(err)}", error=True)
        return 1
    except Exception as err:
        if not unexpected:
            raise
        logging.getLogger("ssvmbench").exception("the run failed")
        say(f"ssvmbench run: failed: {type(err).__name__}: {err}", error=True)
        return 1
