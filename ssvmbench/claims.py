"""Automatic checks of a paper's claim on our curves (the ``checks`` of a preset).

A check compares the plotted centre line (median over seeds, or the mean for ``--band std``)
of named curves (:func:`ssvmbench.plotting.curves.curve_labels`) at the checkpoints of a
range of effective passes (``passes: [from, to]``, ``to: null`` for the end, or ``last``
for the last checkpoint), in every panel or in the panel of the largest / smallest
regularization per dataset:

- ``below``: every ``lower`` curve times ``factor`` (default 1) is at or below every
  ``upper`` curve, e.g. BCFW Figure 1a "the stochastic algorithms perform considerably
  better than the batch solvers" as BCFW and SSG 2x below FW and the cutting plane;
- ``close``: every pair of ``curves`` is within a ratio ``factor`` or an absolute
  ``tolerance``, e.g. Figure 2 "BCFW with predefined step sizes does similarly as SSG".

A check holds when the comparison holds at a ``fraction`` (default all) of the compared
checkpoints. The other curve is interpolated (linear in log passes) at the checkpoints of
the first; only checkpoints inside both curves' ranges (up to 1 %) count.
"""

import itertools
from dataclasses import dataclass

import numpy as np

from ssvmbench.errors import UserError

KINDS = {"below": {"lower", "upper"}, "close": {"curves"}}
COMMON = {"kind", "y", "panel", "passes", "fraction", "factor", "tolerance"}
PANELS = ("all", "largest", "smallest")


@dataclass
class Verdict:
    holds: bool | None      # None: nothing to compare (a curve or the pass range is missing)
    detail: str

    @property
    def word(self):
        return {True: "yes", False: "no", None: "n/a"}[self.holds]


def validate(check, where):
    """Refuse a check with unknown keys, kinds or panels, with ``where`` in the message."""
    kind = check.get("kind")
    if kind not in KINDS:
        raise UserError(f"{where}: check kind {kind!r}; use one of {sorted(KINDS)}")
    unknown = set(check) - COMMON - KINDS[kind]
    missing = KINDS[kind] - set(check)
    if unknown or missing or "y" not in check:
        raise UserError(f"{where}: {kind} check needs y and {sorted(KINDS[kind])}; unknown "
                        f"keys {sorted(unknown)}")
    if check.get("panel", "all") not in PANELS:
        raise UserError(f"{where}: panel {check['panel']!r}; use one of {PANELS}")
    passes = check.get("passes", [None, None])
    if passes != "last" and not (isinstance(passes, list) and len(passes) == 2):
        raise UserError(f"{where}: passes {passes!r}; use [from, to] (to: null for the end) "
                        "or last")
    if kind == "close" and ("factor" in check) == ("tolerance" in check):
        raise UserError(f"{where}: a close check needs exactly one of factor and tolerance")


def describe(check):
    """The check in words, e.g. ``bcfw, ssg >= 10x below fw-best in suboptimality, passes
    1-30, largest-regularization panel``."""
    passes = check.get("passes", [None, None])
    if passes == "last":
        passes = "at the last checkpoint"
    else:
        lo, hi = passes
        passes = f"passes {lo or 0:g}-{'end' if hi is None else format(hi, 'g')}"
    panel = {"all": "every panel", "largest": "largest-regularization panel",
             "smallest": "smallest-regularization panel"}[check.get("panel", "all")]
    if check["kind"] == "below":
        factor = check.get("factor", 1)
        relation = "below" if factor == 1 else f">= {factor:g}x below"
        what = f"{', '.join(check['lower'])} {relation} {', '.join(check['upper'])}"
    else:
        bound = (f"within a factor {check['factor']:g}" if "factor" in check
                 else f"within {check['tolerance']:g}")
        what = f"{', '.join(check['curves'])} {bound} of each other"
    share = check.get("fraction", 1)
    if check.get("passes") != "last":
        passes += " (every checkpoint)" if share == 1 else f" ({share:.0%} of the checkpoints)"
    return f"{what} in {check['y']}, {passes}, {panel}"


def evaluate(check, stats, center="median"):
    """The :class:`Verdict` of ``check`` on ``stats`` (:func:`aggregate`'s table of
    ``check['y']``), comparing its column ``center``."""
    pairs, compare, margin_name, worst = _comparison(check)
    good = total = 0
    margins, missing = [], set()
    for panel in _panels(stats, check.get("panel", "all")):
        curves = {m: c.sort_values("effective_pass") for m, c in panel.groupby("method")}
        for a, b in pairs:
            if a not in curves or b not in curves:
                missing |= {a, b} - set(curves)
                continue
            for va, vb in _aligned(curves[a], curves[b], center, check.get("passes")):
                holds, margin = compare(va, vb)
                good += holds
                total += 1
                margins.append(margin)
    if missing:
        return Verdict(None, f"no curve named {', '.join(sorted(missing))} in the logs")
    if not total:
        return Verdict(None, "no checkpoint in the pass range")
    share = check.get("fraction", 1)
    return Verdict(bool(good >= share * total - 1e-9),
                   f"{good} of {total} checkpoints; {margin_name} {worst(margins):.3g}")


def _comparison(check):
    """The curve pairs a check compares, ``compare(a, b) -> (holds, margin)``, the margin's
    name and the function picking the worst margin."""
    if check["kind"] == "below":
        factor = check.get("factor", 1)

        def compare(a, b):
            return a * factor <= b, (b / a if a > 0 else np.inf)
        return (list(itertools.product(check["lower"], check["upper"])), compare,
                "smallest ratio upper/lower", min)
    pairs = list(itertools.combinations(check["curves"], 2))
    if "factor" in check:
        def compare(a, b):
            low, high = sorted((a, b))
            return high <= check["factor"] * low, (high / low if low > 0 else np.inf)
        return pairs, compare, "largest ratio", max

    def compare(a, b):
        return abs(a - b) <= check["tolerance"], abs(a - b)
    return pairs, compare, "largest difference", max


def _panels(stats, which):
    """The panels (rows of one dataset, variant and regularization) a check looks at."""
    for _, rows in stats.groupby(["data", "data_variant"], dropna=False):
        levels = sorted(rows["regularization"].unique())
        keep = {"all": levels, "largest": levels[-1:], "smallest": levels[:1]}[which]
        for level in keep:
            yield rows[rows["regularization"] == level]


def _aligned(first, second, center, passes):
    """Pairs (first, second) of centre values at the checkpoints of ``first`` in the pass
    range and inside ``second``'s range, ``second`` interpolated linearly in log passes."""
    first = first[(first["effective_pass"] > 0) & first[center].notna()]
    second = second[(second["effective_pass"] > 0) & second[center].notna()]
    if first.empty or second.empty:
        return []
    x = first["effective_pass"].to_numpy(float)
    if passes == "last":
        keep = x == x.max()
    else:
        lo, hi = passes or [None, None]
        keep = (x >= (lo or 0) - 1e-9) & (x <= (np.inf if hi is None else hi) + 1e-9)
    xs = second["effective_pass"].to_numpy(float)
    # inside second's range up to 1 % (SVRG's anchor gradients: 2.0036 passes vs 2 on 2 % of NER)
    keep &= (x >= xs.min() * (1 - 1e-2)) & (x <= xs.max() * (1 + 1e-2))
    values = np.interp(np.log(x[keep]), np.log(xs), second[center].to_numpy(float))
    return list(zip(first[center].to_numpy(float)[keep], values))
