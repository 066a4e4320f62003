"""``import ssvmbench`` leaves the user's process alone: the environment, numba's settings and
the cache of the user's own ``@njit(cache=True)`` kernels are what they were without it."""

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os, sys
before = dict(os.environ)
import numba
from numba import njit
if {with_ssvmbench}:
    import ssvmbench
    from ssvmbench.solvers import bcfw          # ssvmbench's own kernels are defined too
@njit(cache=True)
def mine(x):
    return x + 1
mine(1)
print(json.dumps({{"env_changed": sorted(k for k in set(os.environ) | set(before)
                                          if os.environ.get(k) != before.get(k)),
                  "cache_dir": numba.config.CACHE_DIR,
                  "cache_path": mine.stats.cache_path}}))
"""


def _probe(tmp_path, with_ssvmbench, env):
    script = tmp_path / f"user_script_{with_ssvmbench}.py"
    script.write_text(PROBE.format(with_ssvmbench=with_ssvmbench))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("user_cache_dir", [False, True])
def test_a_users_numba_cache_settings_survive_import_ssvmbench(tmp_path, user_cache_dir):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if user_cache_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "my_numba_cache")
    without, with_it = _probe(tmp_path, False, env), _probe(tmp_path, True, env)
    assert with_it == without
    assert with_it["env_changed"] == []
    assert not list(tmp_path.rglob("*.nbi.lock"))


def test_an_unsupported_platform_is_one_line(tmp_path):
    """Windows (no POSIX signals or file locks): one line, from Python and the command line."""
    fake = "import os, sys; os.name = 'nt'; sys.argv = {argv!r}; import ssvmbench"
    for argv, status in ((["-c"], 1), (["ssvmbench"], 1)):
        done = subprocess.run([sys.executable, "-c", fake.format(argv=argv)],
                              capture_output=True, text=True, timeout=120)
        last = done.stderr.strip().splitlines()[-1]
        assert done.returncode == status and "Linux and macOS" in last and "WSL" in last
        if argv == ["ssvmbench"]:
            assert done.stderr.strip() == last and last.startswith("ssvmbench: error:")


def test_old_kernel_caches_are_pruned_by_a_command_not_by_import(tmp_path):
    """Another version's cache folder unused for weeks: importing leaves it, a command that
    compiles (here `ssvmbench run --help`) deletes it."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    old = tmp_path / "cache" / "ssvmbench" / "numba" / "0123456789ab"
    old.mkdir(parents=True)
    os.utime(old, (0, 0))
    subprocess.run([sys.executable, "-c", "import ssvmbench.cli"], env=env, check=True,
                   timeout=120)
    assert old.is_dir()
    subprocess.run([sys.executable, "-m", "ssvmbench", "run", "--help"], env=env, check=True,
                   capture_output=True, timeout=300)
    assert not old.exists()
