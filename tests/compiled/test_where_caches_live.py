"""A newcomer's first hour (issue 20): data and compiled kernels where a user expects them,
whatever the current directory and across reinstalls."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ssvmbench.common import paths
from ssvmbench.common.paths import data_root, kernel_cache, source_digest, user_cache


def test_the_default_data_root_does_not_depend_on_the_current_directory(tmp_path,
                                                                        monkeypatch):
    monkeypatch.delenv("SSVMBENCH_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert data_root() == (user_cache() / "datasets").resolve()
    assert tmp_path not in data_root().parents
    assert data_root(tmp_path / "mine") == tmp_path / "mine"


def test_kernel_cache_folder_changes_with_any_source_file(tmp_path):
    """numba re-compiles a cached kernel when its own file changes, not when a callee in
    another file does: the cache folder is keyed by every source file's contents."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "chain.py").write_text("def f(): return 1\n")
    (tmp_path / "bcfw.py").write_text("from tasks.chain import f\n")
    before = source_digest(tmp_path)
    assert source_digest(tmp_path) == before
    (tmp_path / "tasks" / "chain.py").write_text("def f(): return 2\n")
    assert source_digest(tmp_path) != before


def test_kernel_cache_folder_changes_with_a_plugin_tasks_kernels(tmp_path, monkeypatch):
    """A plugin task's kernels are compiled into the built-in solvers' loops (BCFW's
    ``bcfw_steps`` calls them), so editing them must change the cache folder too."""
    plugin = tmp_path / "my_task"
    plugin.mkdir()
    (plugin / "kernels.py").write_text("def direction_dot(): return 1\n")
    monkeypatch.setattr(paths, "plugin_roots", lambda: [plugin])
    before = kernel_cache()
    assert kernel_cache() == before and before.name != source_digest()
    (plugin / "kernels.py").write_text("def direction_dot(): return 2\n")
    assert kernel_cache() != before


def test_installed_task_plugins_are_part_of_the_kernel_cache_key():
    names = [root.name for root in paths.plugin_roots()]
    if "ssvmbench_multiclass" not in names and not os.environ.get("CI"):
        pytest.skip("needs the example task plugin: pip install ./examples/multiclass")
    assert "ssvmbench_multiclass" in names and "ssvmbench_gap_bcfw" in names


def test_compiled_kernels_are_cached_outside_the_installed_sources(tmp_path):
    """A reinstall replaces the package's files and would drop a cache kept beside them;
    NUMBA_CACHE_DIR set by the user still wins."""
    probe = ("import ssvmbench; from ssvmbench.tasks import chain_oracles; "
             "print(chain_oracles.hinge_oracle.stats.cache_path)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    default = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             env=env, check=True).stdout.strip()
    assert Path(default).parent == kernel_cache()
    assert kernel_cache().parent == user_cache() / "numba"
    mine = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**env, "NUMBA_CACHE_DIR": str(tmp_path)}, check=True)
    assert Path(mine.stdout.strip()).parent == tmp_path


def test_the_kernel_cache_holds_when_numba_was_imported_first():
    """A script that imports numba before ssvmbench still gets the per-version cache: numba
    had read its settings already and kept kernels beside the sources, where it served a
    caller compiled with an older version of the kernels it calls (found when a profile
    script measured the top-K oracle at its old speed)."""
    probe = ("import numba, ssvmbench; from ssvmbench.tasks import chain_oracles; "
             "print(chain_oracles.hinge_oracle.stats.cache_path)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True).stdout.strip()
    assert kernel_cache() in Path(out).parents


def test_other_versions_kernel_caches_unused_for_two_weeks_are_deleted(tmp_path, monkeypatch):
    """Each version of the sources gets its own ~30 MB kernel folder; those of other versions
    left unused for KERNEL_CACHE_KEEP_DAYS go, this version's and recent ones stay."""
    monkeypatch.setattr(paths, "user_cache", lambda: tmp_path)
    current = paths.kernel_cache()
    old, recent = tmp_path / "numba" / "0ld", tmp_path / "numba" / "recent"
    for folder in (current, old, recent):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kernel.nbi").write_text("x")
    weeks_ago = time.time() - (paths.KERNEL_CACHE_KEEP_DAYS + 1) * 86400
    os.utime(old, (weeks_ago, weeks_ago))
    os.utime(current, (weeks_ago, weeks_ago))          # in use now, whatever its age
    paths.prune_kernel_caches()
    assert current.exists() and recent.exists() and not old.exists()
