"""``api.sweep`` from a plain script (no ``if __name__ == "__main__":``) and from code with
no script file (a notebook, ``python -``): the sweep's worker processes never run the
caller's code again (they did: each worker re-ran the script, started the sweep again and
died on multiprocessing's bootstrapping RuntimeError, and the sweep ran nothing).

The sweep is two jobs that are skipped (BCFW takes the max oracle only), so that its
worker starts, writes their logs and ends without compiling anything."""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    from ssvmbench import api
    with open("body.txt", "a") as f:
        print("the script's body ran", file=f)
    table = api.sweep({"solver": "bcfw", "oracle": "topk", "oracle.K": 2,
                       "oracle.mu": "0.5,0.25", "data": "voc_synthetic",
                       "data.n_train": 12, "data.n_test": 4, "data.size": 32,
                       "solver.passes": 2}, sweep_dir="sweep")
    print("statuses:", sorted(table["status"]))
""")


@pytest.mark.parametrize("how", ["script", "stdin"])
def test_a_sweep_from_code_without_a_main_guard_runs_once(tmp_path, how):
    """``python script.py``: ``__main__`` is a file that multiprocessing's spawn would
    import in each worker; ``python -`` (as a notebook's kernel): ``__main__`` has no file."""
    (tmp_path / "sweep.py").write_text(SCRIPT)
    command = [sys.executable, "sweep.py"] if how == "script" else [sys.executable, "-"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          input=None if how == "script" else SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "bootstrapping" not in proc.stderr
    assert (tmp_path / "body.txt").read_text().count("ran") == 1     # not again in the worker
    assert "statuses: ['skipped', 'skipped']" in proc.stdout
