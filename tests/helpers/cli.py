"""The command line as a user runs it: the installed console script, run in a folder
(:func:`ssvmbench`, :func:`command`), and waiting for the logs a running command writes."""

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ssvmbench.run.runlog import read_log

EXE = shutil.which("ssvmbench", path=str(Path(sys.executable).parent)) or shutil.which("ssvmbench")


def command(argv, cwd, check=True, timeout=600, env=None):
    """Run ``argv`` (e.g. a scripts/*.sh) with the ssvmbench console script on the PATH
    (and the variables ``env`` set)."""
    assert EXE, "the ssvmbench console script is not installed (pip install '.[test]')"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {}),
           "PATH": f"{Path(EXE).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                            env=env)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def ssvmbench(*args, cwd, check=True, timeout=600, env=None):
    return command([EXE, *args], cwd, check, timeout, env)


def wait_for_logs(out, count, rows, timeout=300):
    """Wait until ``count`` run logs under ``out`` have ``rows`` rows each; returns them."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready = []
        for log in sorted(out.rglob("run.h5")):
            with contextlib.suppress(OSError, KeyError, RuntimeError):   # mid-write
                if len(read_log(log)[0]) >= rows:
                    ready.append(log)
        if len(ready) >= count:
            return ready
        time.sleep(0.3)
    raise AssertionError(f"fewer than {count} logs with {rows} rows under {out}")


def wait_for_rows(out, rows, timeout=300):
    """Wait until a run log under ``out`` has ``rows`` rows; returns it."""
    return wait_for_logs(out, 1, rows, timeout)[0]
