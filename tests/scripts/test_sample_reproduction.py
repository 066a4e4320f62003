"""scripts/sample_reproduction.py: every run the presets plan is found in the committed
traces (so each sweep can be sampled), and its estimate replaces one ``measured``."""

import importlib.util
import shutil
from pathlib import Path

import pytest
import yaml

from ssvmbench.papers import presets

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location(
        "sample_reproduction", ROOT / "scripts" / "sample_reproduction.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_planned_run_is_in_the_committed_traces(script):
    committed = script.committed_runs(ROOT / "results" / "reproduction")
    planned = script.sweeps(presets.available())
    found = [script.committed_run(committed, sweep, job)
             for sweep, (jobs, _) in planned.items() for job in jobs]
    assert all(rows is not None for rows in found)
    # each committed run is the run of one planned job (none counted twice, none left out)
    assert len({id(rows) for rows in found}) == len(found) == sum(map(len, committed.values()))


def test_write_measured_replaces_the_full_size_only(script, tmp_path, monkeypatch):
    name = "casimir_figure3b_ner"
    shutil.copy(presets.preset_dir() / f"{name}.yaml", tmp_path)
    monkeypatch.setattr(presets, "preset_dir", lambda: tmp_path)
    before = yaml.safe_load((tmp_path / f"{name}.yaml").read_text())["sizes"]
    script.write_measured(name, 60, 1234.4, 56.6)
    after = yaml.safe_load((tmp_path / f"{name}.yaml").read_text())["sizes"]
    assert after["full"]["measured"] == {"runs": 60, "run_s": 1234, "longest_s": 57}
    assert after["smoke"] == before["smoke"]
    assert {k: v for k, v in after["full"].items() if k != "measured"} == {
        k: v for k, v in before["full"].items() if k != "measured"}


def test_as_committed_writes_the_traces_own_run_times_without_sampling(script, tmp_path,
                                                                       monkeypatch):
    name = "casimir_figure3b_ner"
    shutil.copy(presets.preset_dir() / f"{name}.yaml", tmp_path)
    monkeypatch.setattr(presets, "preset_dir", lambda: tmp_path)
    monkeypatch.setattr(script, "sample", lambda *args: pytest.fail("sampled a run"))
    monkeypatch.setattr("sys.argv", ["sample_reproduction.py", name, "--as-committed",
                                     "--write", "--traces",
                                     str(ROOT / "results" / "reproduction")])
    script.main()
    rows = script.traces.read(ROOT / "results" / "reproduction" / name / "traces.parquet")
    runs, run_s, longest_s = script.compute_time(rows.drop_duplicates("run"))
    measured = yaml.safe_load((tmp_path / f"{name}.yaml").read_text())["sizes"]["full"][
        "measured"]
    assert measured == {"runs": runs, "run_s": round(run_s), "longest_s": round(longest_s)}
