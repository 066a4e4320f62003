"""Run log: round trip, never overwriting, statuses, and surviving SIGKILL."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import yaml

from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import source_digest
from ssvmbench.run.provenance import code_identity
from ssvmbench.run.runlog import Interrupted, RunLog, find_logs, load_logs, make_room, read_log


def rows(k, start=0):
    return {"iterate": ["raw", "wavg"] * k,
            "effective_pass": np.repeat(np.arange(start, start + k), 2),
            "primal": np.linspace(1, 0, 2 * k), "nnz": np.arange(2 * k)}


def test_round_trip(tmp_path):
    path = tmp_path / "run.h5"
    attrs = {"solver": "bcfw", "lambda": 0.01, "seed": 2, "warm": False,
             "opts": {"a": [1, 2], "b": {"c": "d"}}}
    with RunLog(path, attrs) as log:
        log.append(rows(2))
        log.append(rows(300, start=2))
        log.append({**rows(1, start=302), "iterate": ["a-name-longer-than-16", "wavg"]})
    trace, attrs = read_log(path)
    assert len(trace) == 606 and attrs["n_rows"] == 606
    assert trace["iterate"].tolist()[:3] == ["raw", "wavg", "raw"]
    assert trace["iterate"].iloc[-2] == "a-name-longer-than-16"
    assert trace["effective_pass"].iloc[-1] == 302 and trace["nnz"].dtype == np.int64
    assert trace["primal"].dtype == np.float64
    assert attrs["status"] == "finished" and attrs["lambda"] == 0.01 and attrs["seed"] == 2
    assert attrs["warm"] is False and type(attrs["seed"]) is int
    assert yaml.safe_load(attrs["opts"]) == {"a": [1, 2], "b": {"c": "d"}}
    assert attrs["schema_version"] == 1 and attrs["started"] <= attrs["finished"]


def test_append_checks_columns(tmp_path):
    log = RunLog(tmp_path / "run.h5", {})
    with pytest.raises(ValueError):
        log.append({"x": [1], "y": [1, 2]})
    log.append({"x": [1], "y": [1.5]})
    with pytest.raises(ValueError):
        log.append({"x": [2]})
    log.close()
    log.close()
    assert read_log(tmp_path / "run.h5")[0].to_dict("list") == {"x": [1], "y": [1.5]}


def test_bad_attribute_is_refused_before_the_file_exists(tmp_path):
    with pytest.raises(TypeError, match="when"):
        RunLog(tmp_path / "run.h5", {"when": None})
    assert not (tmp_path / "run.h5").exists()


def test_existing_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "run.h5"
    with RunLog(path, {"seed": 1}) as log:
        log.append(rows(1))
    before = path.read_bytes()
    with pytest.raises(UserError, match="already exists.*hydra.run.dir"):
        RunLog(path, {"seed": 2})
    assert path.read_bytes() == before


def test_make_room_skips_finished_runs_and_keeps_unfinished_logs(tmp_path, capsys):
    path = tmp_path / "run.h5"
    assert make_room(path, "cfg: 1")                         # nothing there yet
    with RunLog(path, {"config": "cfg: 1"}) as log:
        log.append(rows(1))
    before = path.read_bytes()
    assert not make_room(path, "cfg: 1")                     # finished: skip
    assert "finished already, skipped" in capsys.readouterr().out
    with pytest.raises(UserError, match="another configuration"):
        make_room(path, "cfg: 2")
    assert path.read_bytes() == before
    for status, error in (("interrupted", Interrupted), ("failed", RuntimeError)):
        path = tmp_path / status / "run.h5"
        path.parent.mkdir()
        with pytest.raises(error):
            with RunLog(path, {"config": "cfg: 1"}) as log:
                log.append(rows(1))
                raise error
        assert make_room(path, "cfg: 1") and not path.exists()
        aside = list(path.parent.glob(f"run.h5.{status}-*"))
        assert len(aside) == 1 and read_log(aside[0])[1]["status"] == status


def test_make_room_skips_a_log_another_process_writes(tmp_path, capsys):
    """HDF5's file lock tells a running job's log from a killed one's."""
    path = tmp_path / "run.h5"
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
from ssvmbench.run.runlog import RunLog
log = RunLog({str(path)!r}, {{"config": "cfg: 1"}})
print("open", flush=True)
sys.stdin.read()
"""], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "open"
        assert not make_room(path, "cfg: 1") and path.exists()
        assert "being written by another process" in capsys.readouterr().out
    finally:
        writer.kill()
        writer.wait()
    assert make_room(path, "cfg: 1") and list(tmp_path.glob("run.h5.running-*"))


@pytest.mark.parametrize("error,status", [(KeyboardInterrupt, "interrupted"),
                                         (Interrupted, "interrupted"),
                                         (RuntimeError, "failed")])
def test_status_on_errors(tmp_path, error, status):
    path = tmp_path / "run.h5"
    with pytest.raises(error):
        with RunLog(path, {}) as log:
            log.append(rows(1))
            raise error("stop")
    trace, attrs = read_log(path)
    assert attrs["status"] == status and len(trace) == 2 and "stop" in attrs["error"]


def test_sigkill_leaves_every_flushed_checkpoint(tmp_path):
    path = tmp_path / "run.h5"
    script = f"""
import time
from ssvmbench.run.runlog import RunLog
log = RunLog({str(path)!r}, {{"seed": 0}})
for k in range(3):
    log.append({{"iterate": ["raw"], "primal": [float(k)]}})
print("ready", flush=True)
time.sleep(60)
"""
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "ready"
            trace, attrs = read_log(path)          # readable while the writer is alive
            assert trace["primal"].tolist() == [0.0, 1.0, 2.0]
        finally:
            proc.send_signal(signal.SIGKILL)
    trace, attrs = read_log(path)
    assert trace["primal"].tolist() == [0.0, 1.0, 2.0] and attrs["status"] == "running"
    assert trace["iterate"].tolist() == ["raw"] * 3


def test_load_logs_tags_rows_with_run_metadata(tmp_path):
    for seed in (0, 1):
        (tmp_path / f"s{seed}").mkdir()
        with RunLog(tmp_path / f"s{seed}" / "run.h5", {"solver": "ssg", "lambda": 0.1,
                                                       "seed": seed}) as log:
            log.append(rows(2))
    (tmp_path / "broken.h5").write_text("not hdf5")
    assert find_logs(tmp_path)[0].name == "broken.h5" and len(find_logs(tmp_path)) == 3
    with pytest.warns(UserWarning, match="broken.h5"):
        table = load_logs(tmp_path)
    assert len(table) == 8 and sorted(table["seed"].unique()) == [0, 1]
    assert set(table["solver"]) == {"ssg"} and set(table["method"]) == {"ssg"}
    assert table["data"].isna().all() and table["lambda"].dtype == np.float64
    assert set(table["status"]) == {"finished"}
    assert set(table["run"]) == {str(tmp_path / f"s{s}" / "run.h5") for s in (0, 1)}
    assert len(load_logs(tmp_path / "s0" / "run.h5")) == 4
    with pytest.raises(UserError, match="nothing"):
        load_logs(tmp_path / "s0" / "nothing")


def test_a_signal_is_recorded_and_raised_at_the_next_check():
    """SIGTERM never raises inside what runs (a compiled pass, an HDF5 write, a compile):
    the next check between steps raises it, and the handlers are restored afterwards."""
    from ssvmbench.run.stop_signals import StopSignals
    reached = []
    with pytest.raises(Interrupted, match="SIGTERM"):
        with StopSignals() as signals:
            os.kill(os.getpid(), signal.SIGTERM)
            reached.append("went on")
            signals.check()
            reached.append("not reached")
    assert reached == ["went on"]
    with StopSignals() as signals:
        signals.check()                       # nothing received: no stop
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_finished_log_of_other_code_is_stale(tmp_path, capsys):
    """Same configuration, other code (the package's sources or a version that shapes the numbers):
    redone, the old log kept aside, unless reuse_stale keeps it; a log that recorded no code
    identity counts as other code."""
    path = tmp_path / "run.h5"
    with RunLog(path, {"config": "cfg: 1", "code": {"sources": "a", "numpy": "2.0"}}) as log:
        log.append(rows(1))
    assert not make_room(path, "cfg: 1", {"sources": "a", "numpy": "2.0"})
    assert not make_room(path, "cfg: 1", {"sources": "b", "numpy": "2.0"},
                         reuse_stale=True)
    assert "reuse_stale=true; sources a -> b" in capsys.readouterr().out
    assert make_room(path, "cfg: 1", {"sources": "b", "numpy": "2.0"})
    assert "made by other code (sources a -> b)" in capsys.readouterr().out
    assert not path.exists() and len(list(tmp_path.glob("run.h5.stale-*"))) == 1
    with RunLog(path, {"config": "cfg: 1"}) as log:       # no code identity recorded
        log.append(rows(1))
    assert make_room(path, "cfg: 1", {"sources": "b"})


def test_code_identity_is_the_sources_not_the_commit():
    """A run is redone after an uncommitted edit of the package and not after a commit that
    changes only docs: the identity is the sources' digest, without the git revision."""
    identity = code_identity()
    assert identity["sources"] == source_digest()
    assert "git_revision" not in identity


def test_a_continued_log_is_a_fresh_copy_of_the_rows_before_its_saved_state(tmp_path):
    """A SIGKILL in the middle of an HDF5 flush can leave a log whose internals are
    inconsistent ("bad heap index" on the next write): the continued run writes a fresh file
    holding the attributes and the rows up to the saved state, never the killed file."""
    path = tmp_path / "run.h5"
    log = RunLog(path, {"solver": "bcfw", "error": "old"})
    log.append({**rows(3), "oracle_calls": np.repeat([10, 20, 30], 2)})
    log.file.flush()
    log.file.close()                     # left "running", as by a SIGKILL
    inode = path.stat().st_ino
    with RunLog.reopen(path, oracle_calls=20) as again:
        assert again.n_rows == 4
        again.append({**rows(1, start=2), "oracle_calls": [30, 30]})
    assert path.stat().st_ino != inode and not list(tmp_path.glob("*.resuming"))
    trace, attrs = read_log(path)
    assert trace["oracle_calls"].tolist() == [10, 10, 20, 20, 30, 30]
    assert trace["iterate"].tolist() == ["raw", "wavg"] * 3
    assert attrs["status"] == "finished" and attrs["resumed"] == 1 and "error" not in attrs
    assert attrs["solver"] == "bcfw"


def test_run_time_leaves_out_the_pause_of_a_continued_run(tmp_path, monkeypatch):
    """``run_s`` sums the time each session wrote the log: a run stopped for an hour and
    continued counts its two sessions, not the hour between (``finished - started`` does),
    and the report's compute reads it; a log without it falls back to the timestamps."""
    import pandas as pd

    from ssvmbench.papers.report import compute_time
    from ssvmbench.run import runlog

    clock = iter([100.0, 130.0, 140.0,              # session 1: opened, two appends
                  5000.0, 5000.0, 5020.0, 5025.0])  # an hour later: reopened, append, close
    monkeypatch.setattr(runlog.time, "monotonic", lambda: next(clock))
    path = tmp_path / "run.h5"
    log = RunLog(path, {"solver": "bcfw"})
    log.append({**rows(1), "oracle_calls": [10, 10]})
    log.append({**rows(1, start=1), "oracle_calls": [20, 20]})
    log.file.close()                                # stopped, as by a SIGKILL
    assert read_log(path)[1]["run_s"] == 40.0
    with RunLog.reopen(path, oracle_calls=20) as again:   # 0 s: copies the rows
        again.append({**rows(1, start=2), "oracle_calls": [30, 30]})   # + 20 s
    _, attrs = read_log(path)                       # closed: + 5 s
    assert attrs["run_s"] == 65.0 and attrs["resumed"] == 1
    runs = pd.DataFrame({"started": ["2026-01-01T00:00:00+00:00"] * 2,
                         "finished": ["2026-01-01T01:00:00+00:00"] * 2, "run_s": [65.0, None]})
    assert compute_time(runs) == (2, 65.0 + 3600.0, 3600.0)
