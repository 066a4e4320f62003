"""Edit one plugin, recompile only what depends on it: compiled kernels are cached per key of
the sources they compile in (ssvmbench.compiled.kernel_sources, ssvmbench.compiled.keyed_cache)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import numpy as np
from numba import typeof

from ssvmbench.compiled import kernel_sources
from ssvmbench.compiled.keyed_cache import KeyedCache
from ssvmbench.solvers.base import Problem
from ssvmbench.solvers.bcfw import bcfw_steps
from ssvmbench.tasks.chain import ChainData

MULTICLASS = Path(__file__).resolve().parents[2] / "examples" / "multiclass"
ENTRY_POINTS = """[ssvmbench.tasks]
multiclass = ssvmbench_multiclass.task:MulticlassTask

[ssvmbench.datasets]
ocr_letters = ssvmbench_multiclass.dataset:load_ocr_letters

[ssvmbench.metrics]
letter_accuracy = ssvmbench_multiclass.metrics:letter_accuracy
"""
COMPILING = "compiling kernels"
PLUGIN = '''from typing import NamedTuple
import numpy as np


def scores():
    return {version}


class DemoData(NamedTuple):
    offsets: np.ndarray


class DemoTask:
    kernels = {{"scores": scores}}
'''


def _problem(data):
    return typeof(Problem((2, 3), data, True, 0.1))


def test_a_kernel_is_keyed_by_the_tasks_it_is_compiled_for(tmp_path, monkeypatch):
    """BCFW's loop compiled for a plugin task depends on the plugin's package (the task's
    data is nested in its Problem); compiled for the chain task, on ssvmbench's sources
    only, so an edit of the plugin changes the first key and not the second."""
    (tmp_path / "demo_task").mkdir()
    source = tmp_path / "demo_task" / "__init__.py"
    source.write_text(PLUGIN.format(version=1))
    monkeypatch.syspath_prepend(str(tmp_path))
    import demo_task
    monkeypatch.setattr(kernel_sources, "task_of_data",
                        lambda cls: demo_task.DemoTask if cls is demo_task.DemoData else None)
    plugin_sig = (_problem(demo_task.DemoData(np.zeros(2, np.int64))),)
    chain_fields = [np.zeros(2, np.int64)] * len(ChainData._fields)
    chain_sig = (_problem(ChainData(*chain_fields)),)
    on_plugin = kernel_sources.compiled_in(bcfw_steps.py_func, plugin_sig)
    on_chain = kernel_sources.compiled_in(bcfw_steps.py_func, chain_sig)
    assert {root.name for root in on_plugin} == {"ssvmbench", "demo_task"}
    assert {root.name for root in on_chain} == {"ssvmbench"}
    before = kernel_sources.key(on_plugin), kernel_sources.key(on_chain)
    source.write_text(PLUGIN.format(version=2))
    kernel_sources.forget()
    after = kernel_sources.key(on_plugin), kernel_sources.key(on_chain)
    assert after[0] != before[0] and after[1] == before[1]


def test_a_signature_naming_a_class_without_source_is_not_cached(tmp_path, monkeypatch):
    """A class typed in at a prompt has no file to key by: kernels compiled for it are
    compiled in the process, never served from the cache."""
    monkeypatch.setitem(sys.modules, "prompt", ModuleType("prompt"))
    Prompted = NamedTuple("Prompted", [("x", np.ndarray)])
    Prompted.__module__ = "prompt"
    sig = (typeof(Prompted(np.zeros(1))),)
    assert kernel_sources.compiled_in(bcfw_steps.py_func, sig) is None
    assert KeyedCache(bcfw_steps.py_func, tmp_path)._cache_file.file(sig) is None


def test_each_signature_goes_to_its_keys_folder_under_the_cache_lock(tmp_path):
    """A signature's index and data files are numba's own in ``<root>/<key>``, so
    ssvmbench.compiled.cache_lock serializes their updates across processes like any index's."""
    cache = KeyedCache(bcfw_steps.py_func, tmp_path)
    sig = (_problem(ChainData(*[np.zeros(2, np.int64)] * len(ChainData._fields))),)
    file = cache._cache_file.file(sig)
    key = kernel_sources.key(kernel_sources.compiled_in(bcfw_steps.py_func, sig))
    assert Path(file._index_path).parent.parent == tmp_path / key
    assert type(file).save.ssvmbench_locked and type(file).load.ssvmbench_locked


def _copy_of_the_multiclass_plugin(site):
    """examples/multiclass as an installed distribution in the folder ``site``."""
    shutil.copytree(MULTICLASS / "ssvmbench_multiclass", site / "ssvmbench_multiclass")
    info = site / "ssvmbench_multiclass-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ssvmbench-multiclass\n"
                                   "Version: 0.1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site / "ssvmbench_multiclass" / "task.py"


def test_editing_a_task_plugin_leaves_the_built_in_kernels_cached(data_root, tmp_path):
    """With the caches warm, a one-line edit of a task plugin: an OCR run compiles nothing
    and the plugin's task compiles again (the edit reaches BCFW's loop). Before, the cache
    folder was keyed by every plugin's sources, and the OCR run compiled everything."""
    task = _copy_of_the_multiclass_plugin(tmp_path / "site")
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), env.get("PYTHONPATH", "")]),
               XDG_CACHE_HOME=str(tmp_path / "cache"), SSVMBENCH_DATA_DIR=str(data_root))

    def run(data, name):
        return subprocess.run(
            [sys.executable, "-m", "ssvmbench", "run", "solver=bcfw", f"data={data}",
             "+data.subset=0.05", "solver.passes=1", f"hydra.run.dir={tmp_path / name}"],
            env=env, capture_output=True, text=True, check=True, cwd=tmp_path).stderr

    assert COMPILING in run("ocr", "ocr")
    assert COMPILING in run("ocr_letters", "letters")
    task.write_text(task.read_text().replace("_CUTOFF = -40.0", "_CUTOFF = -41.0"))
    assert COMPILING not in run("ocr", "ocr_after_edit")
    assert COMPILING in run("ocr_letters", "letters_after_edit")
