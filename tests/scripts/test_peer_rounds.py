"""scripts/peer_rounds.py, the interleaved timing rounds of the peer scripts: each round runs
every measurement once in order, and the summary's min, median and peer / ours ratios are of
the right rounds and the right way round."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rounds():
    spec = importlib.util.spec_from_file_location("peer_rounds",
                                                  ROOT / "scripts" / "peer_rounds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rounds = _rounds()


def test_spread_is_min_and_median_of_an_even_count():
    assert rounds.spread([4.0, 1.0, 3.0, 2.0]) == (1.0, 2.5)
    assert rounds.spread([0.3]) == (0.3, 0.3)
    with pytest.raises(ValueError):
        rounds.spread([])


def test_rounds_interleave_the_measurements():
    """Round by round, ours then the peer's: a, b, a, b, a, b; never a, a, a, b, b, b."""
    calls = []
    figures = {"ours": iter([1.0, 2.0, 3.0]), "peer": iter([10.0, 30.0, 20.0])}

    def measure(name):
        def run():
            calls.append(name)
            return {name: next(figures[name]), f"{name} setup": 0.5}
        return run

    shown = []
    samples = rounds.run_rounds(3, [measure("ours"), measure("peer")], show=shown.append)
    assert calls == ["ours", "peer"] * 3
    assert samples["ours"] == [1.0, 2.0, 3.0]
    assert samples["peer"] == [10.0, 30.0, 20.0]
    assert samples["peer setup"] == [0.5] * 3
    assert len(shown) == 3 and shown[1].startswith("round 2: ours 2.0000")
    with pytest.raises(ValueError):
        rounds.run_rounds(0, [measure("ours")])


def test_ratios_are_peer_over_ours_from_medians_and_from_mins():
    samples = {"ours": [0.2, 0.1, 0.4], "peer": [1.0, 3.0, 0.5]}
    [(peer, ours, by_median, by_min)] = rounds.ratios(samples, [("peer", "ours")])
    assert (peer, ours) == ("peer", "ours")
    assert by_median == pytest.approx(1.0 / 0.2)
    assert by_min == pytest.approx(0.5 / 0.1)


def test_summary_shows_min_median_ratio_and_load():
    samples = {"ssvmbench bcfw": [0.25, 0.20, 0.30],
               "crfsuite ap": [0.30, 0.33, 0.36]}
    lines = rounds.summary(samples, [("crfsuite ap", "ssvmbench bcfw")], "0.10 0.20 0.30",
                           "1.00 2.00 3.00")
    text = "\n".join(lines)
    assert lines[0].startswith("Timing, 3 interleaved rounds")
    row = next(line for line in lines if line.strip().startswith("ssvmbench bcfw"))
    assert row.split()[2:4] == ["0.2000", "0.2500"]
    assert "crfsuite ap / ssvmbench bcfw: 1.32x from the medians, 1.50x from the mins" in text
    assert lines[-1].endswith("0.10 0.20 0.30 at the start, 1.00 2.00 3.00 at the end")
    assert len(rounds.loads().split()) == 3
