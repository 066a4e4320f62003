"""The solver contract from outside the package: configs generated from the classes, the
conformance checks of ``ssvmbench check-solver`` (which pass for every built-in and catch
broken solvers), plugins found through the ``ssvmbench.solvers`` entry points, and the examples:
the plugin examples/gap_bcfw (BCFW with gap sampling, Osokin et al. 2016) and the plain-Python
solver examples/plain_python_ssg.py."""

import importlib.util
import os
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.cli import ssvmbench

from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import config_dir
from ssvmbench.plugin_kit import conformance
from ssvmbench.run.runlog import read_log
from ssvmbench.solvers import SOLVERS, make_solver, registered, task_kinds
from ssvmbench.solvers.bcfw import BCFW
from ssvmbench.solvers.fw import FW
from ssvmbench.solvers.sgd import SGD
from ssvmbench.tasks.kernels import decode, example_oracle, mean_hinge_and_gradient, scores, scratch
from ssvmbench.tasks.oracle import Oracle

REQUIRED = {"l1_subgradient": {"epsilon": 5.0}}       # options without a default
TASKS = conformance.tiny_tasks()


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_each_solver_config_is_its_class_defaults(name):
    """configs/solver/NAME.yaml (commented, for users) says what the class does."""
    stored = yaml.safe_load((config_dir() / "solver" / f"{name}.yaml").read_text())
    assert stored == SOLVERS[name].default_config()


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_check_solver_passes_for_every_built_in(name):
    cls = SOLVERS[name]
    for kind in task_kinds(cls):
        for check, failure in conformance.check_on(cls, TASKS[kind], REQUIRED.get(name, {})):
            assert failure is None, (kind, check, failure)


class MiscountingSGD(SGD):
    name = "sgd"

    def advance(self, budget):
        return 5 * super().advance(budget)              # reports five calls for each one


class WallClockSGD(SGD):
    name = "sgd"

    def advance(self, budget):
        self.rng = np.random.default_rng(budget)         # the trajectory follows checkpoints
        return super().advance(budget)


class UncountedFW(FW):
    name = "fw"

    def advance(self, budget):
        t = self.task                                    # an oracle pass it does not report
        mean_hinge_and_gradient(np.zeros(t.d), t.dims, t.data, t.normalized, 0, 1, 0.0,
                                self._bufs, t.max_len, np.empty(t.d))
        return super().advance(budget)


class OverstatedDualBCFW(BCFW):
    name = "bcfw"

    def state(self):
        a, w, ell = super().state()
        return a, w, ell + 1.0                           # a dual above the primal


COUNTED = "the oracle calls it reports are the calls it made"


@pytest.mark.parametrize("cls, checks", [
    (MiscountingSGD, {"run_until(k n) makes k n to k n + 3 n oracle calls", COUNTED}),
    (UncountedFW, {COUNTED}),
    (WallClockSGD, {"same seed, same iterates with or without checkpoints"}),
    (OverstatedDualBCFW, {"weak duality: primal - dual >= 0"}),
])
def test_check_solver_catches_a_broken_solver(cls, checks, monkeypatch):
    monkeypatch.setitem(registered(), cls.name, cls)
    results = dict(conformance.check_on(cls, TASKS["chain"], {}))
    assert {check for check, failure in results.items() if failure is not None} == checks


def test_the_kernel_oracles_count_their_calls():
    """Called from Python and from compiled code, example_oracle and decode add one to the
    data's counter per call; the other kernels do not."""
    task = TASKS["chain"]
    oracle = Oracle("max", 1, 0.0)
    U, delta, y, R, E, _ = scratch(task.dims, task.data, task.max_len)
    w = np.zeros(task.d)
    task.data.calls[0] = 0
    T = scores(w, 1.0, task.dims, task.data, 0, U)
    example_oracle(0, 1, 0.0, w, 1.0, task.dims, task.data, task.normalized, 0, U, T,
                   oracle.buffers(task.max_len, task.n_labels), y, R, E)
    decode(w, task.dims, task.data, task.normalized, 0, U, T, delta, y)
    assert task.data.calls[0] == 2
    mean_hinge_and_gradient(w, task.dims, task.data, task.normalized, 0, 1, 0.0,
                            oracle.buffers(task.max_len, task.n_labels), task.max_len,
                            np.empty(task.d))
    assert task.data.calls[0] == 2 + task.n


def test_kernels_refuse_data_without_a_task():
    task = TASKS["chain"]
    U = np.empty((task.max_len, task.n_labels))
    with pytest.raises(TypeError, match="declare its task"):
        scores(np.zeros(task.d), 1.0, task.dims, tuple(task.data), 0, U)


def write_plugin(site, name, source, group="ssvmbench.solvers", extra=""):
    """A distribution ``demo`` on ``site`` whose entry point ``name`` in ``group`` is
    ``demo:Demo`` (``extra``: more lines of entry_points.txt)."""
    site.mkdir(parents=True)
    (site / "demo.py").write_text(source)
    info = site / "demo-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = demo:Demo\n{extra}")
    return {"PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def test_a_plugin_solver_runs_like_a_built_in(tmp_path):
    """A class in another installed distribution: ``solver=NAME`` composes its generated
    config, sweeps, logs under its own method name and passes check-solver."""
    env = write_plugin(tmp_path / "site", "demo_sgd", (
        "from ssvmbench.solvers.sgd import SGD\n\n\n"
        "class Demo(SGD):\n    name = 'demo_sgd'\n    numbers = {'gamma0': 0.05, 't0': 100.0}\n"))
    out = tmp_path / "sweep"
    ssvmbench("run", "-m", "solver=demo_sgd,sgd", "data=voc_synthetic", "data.n_train=16",
              "data.n_test=4", "data.size=32", "solver.passes=2", f"hydra.sweep.dir={out}",
              cwd=tmp_path, env=env)
    methods = {read_log(log)[1]["method"] for log in out.rglob("run.h5")}
    assert methods == {"demo_sgd", "sgd"}          # its own defaults: no options in the name
    result = ssvmbench("check-solver", "demo_sgd", cwd=tmp_path, env=env)
    assert "solver demo_sgd: every check passed" in result.stdout


DATA_PLUGIN = """
import numpy as np
from ssvmbench.data.sequences import SplitData
from ssvmbench.data.synthetic import random_chains
from ssvmbench.tasks.metrics import Metric


def Demo(flavour, n_train=20, seed=0):
    data = random_chains(n_train + 10, 3, 6, seed=seed)
    return SplitData(train=data.subset(range(n_train)), test=data.subset(range(n_train, n_train + 10)),
                     variant=f"demo {flavour}", checksum="none", source="generated")


first_label = Metric("first_label_rate", "share of tokens predicted as label 0",
                     lambda ds, pred: float(np.mean(pred == 0)), lambda ds: hasattr(ds, "feat_ptr"))
"""


def test_a_plugin_dataset_and_metric(tmp_path):
    """A loader registered under ssvmbench.datasets gets ``data=NAME`` with its keyword
    arguments as options (one without default must be given); a Metric under
    ssvmbench.metrics is logged as its own column."""
    env = write_plugin(tmp_path / "site", "demo_data", DATA_PLUGIN, "ssvmbench.datasets",
                       "[ssvmbench.metrics]\nfirst_label_rate = demo:first_label\n")
    run_dir = tmp_path / "run"
    ssvmbench("run", "solver=bcfw", "data=demo_data", "data.n_train=15", "data.flavour=mint",
              "solver.passes=2", f"hydra.run.dir={run_dir}", cwd=tmp_path, env=env)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["n"] == 15 and attrs["data_variant"] == "demo mint"
    assert trace["test_first_label_rate"].between(0, 1).all()
    missing = ssvmbench("run", "solver=bcfw", "data=demo_data", cwd=tmp_path, env=env,
                        check=False)
    assert missing.returncode != 0 and "flavour" in missing.stderr


@pytest.mark.parametrize("name, source, message", [
    ("broken", "import not_a_module\n", "does not load: ModuleNotFoundError"),
    ("bcfw", "from ssvmbench.solvers.bcfw import BCFW as Demo\n", "not a built-in's"),
    ("other", "class Demo:\n    name = 'other'\n", "not a subclass"),
])
def test_a_bad_plugin_is_named_in_one_line(tmp_path, name, source, message):
    env = write_plugin(tmp_path / "site", name, source)
    result = ssvmbench("run", "solver=bcfw", "data=voc_synthetic", cwd=tmp_path, env=env,
                       check=False)
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("name, source, message", [
    ("broken_task", "import not_a_module\n", "does not load: ModuleNotFoundError"),
    ("chain", "from ssvmbench.tasks.chain_task import ChainTask\n\n\n"
              "class Demo(ChainTask):\n    pass\n", "not a built-in's"),
    ("half_task", "from ssvmbench.tasks.chain_task import ChainTask\n\n\n"
                  "class Demo(ChainTask):\n    kind = 'half_task'\n"
                  "    kernels = {'scores': ChainTask.kernels['scores']}\n",
     "missing: ['scratch', 'example_oracle', 'add_direction']"),
    ("other_task", "class Demo:\n    kind = 'other_task'\n", "not a subclass of"),
])
def test_a_bad_task_plugin_is_named_in_one_line(tmp_path, name, source, message):
    """A task registered under ssvmbench.tasks must load, declare the core kernels and
    its types, and carry its own name."""
    env = write_plugin(tmp_path / "site", name, source, "ssvmbench.tasks")
    result = ssvmbench("run", "solver=bcfw", "data=voc_synthetic", cwd=tmp_path, env=env,
                       check=False)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert f"task plugin '{name}'" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_every_kernel_of_the_api_is_dispatched():
    """ssvmbench.tasks.kernels has one dispatcher per name of the API, of that name."""
    from ssvmbench.tasks import kernels
    from ssvmbench.tasks.base import KERNEL_NAMES
    assert all(getattr(kernels, name).__name__ == name for name in KERNEL_NAMES)


def test_a_solver_is_refused_on_a_task_without_the_kernels_it_needs():
    """SAP needs the active-set kernels (stored labelings' scores and Gram entries), which the
    box task does not declare."""
    assert "boxes" not in task_kinds(registered()["sap"])
    with pytest.raises(UserError, match=r"lacks the kernels \['labeling_score', "):
        make_solver("sap", TASKS["boxes"], 0.1, {}, 0)


def gap_plugin():
    """The example plugin (examples/gap_bcfw), which the README's test command installs."""
    if not any(point.name == "gap_bcfw" for point in entry_points(group="ssvmbench.solvers")):
        if os.environ.get("CI"):
            pytest.fail("CI installs examples/gap_bcfw (README's test command)")
        pytest.skip("needs the example plugin: pip install ./examples/gap_bcfw")
    import ssvmbench_gap_bcfw
    return ssvmbench_gap_bcfw


def test_gap_sampling_draws_blocks_in_proportion_to_their_gaps():
    plugin = gap_plugin()
    weights = np.array([0.0, 3.0, 1.0, 0.0, 4.0])
    tree = np.zeros(16)
    for i, value in enumerate(weights):
        plugin.tree_set(tree, i, value)
    assert tree[1] == weights.sum()
    draws = [plugin.tree_draw(tree, u, len(weights)) for u in (np.arange(800) + 0.5) / 800]
    np.testing.assert_allclose(np.bincount(draws, minlength=5) / 800, weights / weights.sum())


def test_gap_bcfw_visits_each_block_first_then_refreshes_every_gap_check_passes():
    plugin = gap_plugin()
    task = TASKS["chain"]
    n = task.n
    solver = plugin.GapBCFW(task, 0.1, {"gap_check": 3}, 0)
    solver.run_until(n)
    assert solver.steps == n and solver.visits == n
    gaps = solver.tree[len(solver.tree) // 2:][:n]
    assert (gaps >= 0).all() and gaps.sum() > 0
    solver.run_until(3 * n)
    assert solver.steps == 3 * n and solver.visits == 3 * n
    solver.run_until(4 * n)                    # the refresh: n oracle calls, no step
    assert solver.steps == 3 * n and solver.visits == 0 and solver.oracle_calls == 4 * n


def test_gap_bcfw_next_to_bcfw_from_the_command_line(data_root, tmp_path):
    """The README's plugin example: a sweep of the plugin and the built-in, then its plot and
    its conformance check."""
    gap_plugin()
    out = tmp_path / "sweep"
    ssvmbench("run", "-m", "solver=bcfw,gap_bcfw", "data=ocr", "+data.subset=0.1",
              "lambda=0.01", "solver.passes=4", f"hydra.sweep.dir={out}", cwd=tmp_path)
    ssvmbench("plot", str(out), "-o", str(tmp_path / "figures"), cwd=tmp_path)
    assert (tmp_path / "figures" / "suboptimality.png").exists()
    summary = (tmp_path / "figures" / "summary.md").read_text()
    assert "gap_bcfw" in summary and "| bcfw |" in summary
    assert "every check passed" in ssvmbench("check-solver", "gap_bcfw", cwd=tmp_path).stdout


def test_one_run_from_python(tmp_path):
    """ssvmbench.api.run: the command line's configs and log, the trace returned; a second
    call with the same configuration reads the finished log instead of training again."""
    from ssvmbench import api
    overrides = ["solver=sgd", "data=voc_synthetic", "data.n_train=12", "data.n_test=4",
                 "data.size=32", "solver.passes=3", "seed=4"]
    trace, attrs = api.run(overrides, run_dir=tmp_path / "run")
    assert attrs["status"] == "finished" and attrs["seed"] == 4 and attrs["solver"] == "sgd"
    assert trace["effective_pass"].max() == 3 and set(trace["iterate"]) == {"raw", "wavg"}
    again, attrs_again = api.run(overrides, run_dir=tmp_path / "run")
    assert attrs_again["started"] == attrs["started"] and again.equals(trace)


USER_PRESET = """
paper: Mine
item: Figure 1
claim: "BCFW beats SGD on my scenes."
deviations: {}
checks:
  - {kind: below, y: suboptimality, lower: [bcfw], upper: [sgd-wavg], passes: [1, null],
     fraction: 0.5, quote: "BCFW beats SGD", why: "'beats': below at most checkpoints"}
sweeps:
  my_scenes: >-
    solver=bcfw,sgd seed={seeds} data=voc_synthetic data.n_train=12 data.n_test=4 data.size=32
plot: "--methods bcfw sgd-wavg"
sizes:
  full: {passes: 4, seeds: 2}
  smoke: {passes: 2, seeds: 1}
"""


def test_a_preset_file_outside_the_package_reproduces_and_reports(tmp_path):
    preset = tmp_path / "my_figure.yaml"
    preset.write_text(USER_PRESET)
    out = tmp_path / "out"
    ssvmbench("reproduce", str(preset), "--size", "full", "--out", str(out), cwd=tmp_path)
    assert (out / "my_figure" / "suboptimality.png").exists()
    report = (out / "report.md").read_text()
    assert "## Mine Figure 1 (`my_figure`)" in report and "BCFW beats SGD" in report
    again = ssvmbench("report", str(out), cwd=tmp_path).stdout    # found again from its copy
    assert "report.md" in again and "(`my_figure`)" in (out / "report.md").read_text()


def test_own_configs_from_a_config_dir(tmp_path):
    """Hydra's --config-dir adds a folder of the user's own config groups."""
    (tmp_path / "mine" / "solver").mkdir(parents=True)
    (tmp_path / "mine" / "solver" / "bcfw_short.yaml").write_text(
        "name: bcfw\npasses: 3\nstep: predefined\nsampling: permutation\niterates: [raw]\n")
    data = ["data=voc_synthetic", "data.n_train=12", "data.n_test=4", "data.size=32"]
    ssvmbench("run", "--config-dir", str(tmp_path / "mine"), "solver=bcfw_short", *data,
              f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)
    trace, attrs = read_log(tmp_path / "run" / "run.h5")
    assert attrs["method"] == "bcfw-predefined-permutation" and trace["effective_pass"].max() == 3
    # a sweep's workers compose each run with the same folder (they once read the package's
    # configs only, and every run failed)
    ssvmbench("run", "-m", "--config-dir", str(tmp_path / "mine"), "solver=bcfw_short,bcfw",
              *data, "solver.passes=3", f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path)
    methods = sorted(read_log(log)[1]["method"] for log in (tmp_path / "sweep").rglob("run.h5"))
    assert methods == ["bcfw", "bcfw-predefined-permutation"]


def test_a_run_leaves_its_trained_weights(tmp_path):
    """weights.npz beside the log holds every logged iterate's final weights: evaluated
    again they give the log's last test error."""
    from ssvmbench import api
    from ssvmbench.run.runner import load_tasks
    from ssvmbench.run.settings import read
    overrides = ["solver=bcfw", "data=voc_synthetic", "data.n_train=12", "data.n_test=4",
                 "data.size=32", "solver.passes=3"]
    trace, _ = api.run(overrides, run_dir=tmp_path / "run")
    weights = np.load(tmp_path / "run" / "weights.npz")
    assert sorted(weights.files) == ["raw", "wavg"]
    _, _, test = load_tasks(read(api.config(overrides)))
    last = trace.groupby("iterate").tail(1).set_index("iterate")
    for name in weights.files:
        assert test.evaluate(weights[name], with_hinge=False)[1] == last.loc[name, "test_error"]
    api.run([*overrides, "seed=1", "save_weights=false"], run_dir=tmp_path / "none")
    assert not (tmp_path / "none" / "weights.npz").exists()


@pytest.mark.parametrize("name", sorted(name for name, cls in SOLVERS.items()
                                        if not cls.averages_iterates))
def test_a_raw_only_solver_refuses_averaged_iterates(name):
    """``averages_iterates = False`` is the one place that says a solver logs no averages
    (SAP, L1 subgradient, SVRG, SC-SVRG, online-EG, cutting plane)."""
    cls = SOLVERS[name]
    kind = task_kinds(cls)[0]
    options = {**REQUIRED.get(name, {}), "iterates": ["raw", "wavg"]}
    with pytest.raises(UserError, match=f"invalid for solver {name}: choose from"):
        make_solver(name, TASKS[kind], 0.1, options, 0,
                    conformance.smooth_oracle(cls, TASKS[kind]))


def _plain_ssg():
    spec = importlib.util.spec_from_file_location(
        "plain_python_ssg", Path(__file__).resolve().parents[2] / "examples" / "plain_python_ssg.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PlainSSG


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_a_plain_python_solver_keeps_the_contract(kind, monkeypatch):
    """examples/plain_python_ssg.py calls the kernel API from Python, one example at a time:
    check-solver passes (its calls counted from Python too), and its iterate is the compiled
    SSG's (solver=sgd solver.step=pegasos) with the same seed."""
    cls = _plain_ssg()
    monkeypatch.setitem(registered(), cls.name, cls)
    for check, failure in conformance.check_on(cls, TASKS[kind], {}):
        assert failure is None, (check, failure)
    plain = make_solver(cls.name, TASKS[kind], 0.1, {}, 3, Oracle())
    compiled = make_solver("sgd", TASKS[kind], 0.1, {"step": "pegasos", "iterates": ["raw"]},
                           3, Oracle())
    for solver in (plain, compiled):
        solver.run_until(3 * TASKS[kind].n)
    np.testing.assert_allclose(plain.iterates()[0][1], compiled.iterates()[0][1], rtol=1e-9,
                               atol=1e-12)


FAULTY = """
import numpy as np
from ssvmbench.solvers.sgd import SGD


class Demo(SGD):
    name = "faulty"

    def advance(self, budget):
        if FAULT == "raises":
            return 1 // 0
        if FAULT == "no_progress":
            return 0
        return super().advance(budget)

    def state(self):
        a, v, ell = super().state()
        return (a, v[:-1], ell) if FAULT == "short_state" else (a, v, ell)
"""


@pytest.mark.parametrize("fault, message", [
    ("raises", "raised ZeroDivisionError: integer division or modulo by zero (its traceback "
               "is in the run's app.log"),
    ("no_progress", "advance() returned 0 oracle calls 10000 times in a row"),
    ("short_state", "shape"),        # caught by its averages, or by the iterates' check
])
def test_a_faulty_plugin_solver_is_one_line_naming_it(tmp_path, fault, message):
    """Issue 29: a plugin whose advance raises was a traceback, one that returns 0 oracle
    calls looped forever, one whose state() has the wrong length finished with exit 0 and
    saved weights of the wrong size. Each is now one line naming the plugin and its entry
    point; a raising plugin's traceback is kept in app.log (SSVMBENCH_DEBUG=1 shows it)."""
    env = write_plugin(tmp_path / "site", "faulty", f"FAULT = {fault!r}\n" + FAULTY)
    run_dir = tmp_path / "run"
    args = ("run", "solver=faulty", "data=voc_synthetic", "data.n_train=8", "data.n_test=2",
            "data.size=32", "solver.passes=2", f"hydra.run.dir={run_dir}")
    result = ssvmbench(*args, cwd=tmp_path, env=env, check=False, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("ssvmbench run: error: solver faulty (plugin demo:Demo, entry point "
                           "ssvmbench.solvers)") and message in line, line
    assert not (run_dir / "weights.npz").exists()
    if fault == "raises":
        assert "ZeroDivisionError" in (run_dir / "app.log").read_text()
        assert "Traceback" in (run_dir / "app.log").read_text()
        debug = ssvmbench(*args, "restart=true", cwd=tmp_path, check=False,
                          env={**env, "SSVMBENCH_DEBUG": "1"})
        assert "Traceback" in debug.stderr and "1 // 0" in debug.stderr
    checked = ssvmbench("check-solver", "faulty", cwd=tmp_path, env=env, check=False,
                        timeout=300)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert "FAIL" in checked.stdout and "solver faulty: " in checked.stdout


def test_a_solver_whose_state_has_the_wrong_length_is_refused_at_its_checkpoint():
    from ssvmbench.common.errors import PluginError
    from ssvmbench.data.synthetic import random_chains
    from ssvmbench.solvers.sgd import SGD
    from ssvmbench.tasks import make_task

    class Short(SGD):
        name = "short"

        def state(self):
            a, v, ell = super().state()
            return a, v[:-1], ell

    task = make_task(random_chains(6, 3, 4, seed=1))
    solver = Short(task, 0.1, {"iterates": ["raw"]}, 0)
    solver.run_until(6)
    with pytest.raises(PluginError, match=rf"solver short \(plugin .*Short, entry point "
                                          rf"ssvmbench.solvers\): iterate raw has shape "
                                          rf"\({task.d - 1},\), not \({task.d},\)"):
        solver.iterates()
