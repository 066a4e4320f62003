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
  ``tolerance``, e.g. Figure 2 "BCFW with predefined step sizes does similarly as SSG";
- ``paper``: the ``curve`` is within ``tolerance`` of the number the paper prints
  (``value``), e.g. SAP Table II's 95.2 % token accuracy on CoNLL-2000.

``expect: false`` turns a check around: the paper says the comparison fails (SC-SVRG-const
"more sensitive" to mu: its final objectives are not within the bound). ``data`` restricts a
check to the panels of one dataset, ``C`` to the panel of SAP's C (regularization
``1/(C n)``); ``at: best`` compares each curve's best value in the pass range (the maximum of
a test metric, the minimum otherwise: SAP's tables report "the maximum test accuracy within
the first 50 iterations") instead of every checkpoint.

A check holds when the comparison holds at a ``fraction`` (default all) of the compared
checkpoints; each pair of curves is compared in the panels that have both (a curve may exist
in some panels only, e.g. SGD with a step size per lambda). Its verdict reads "reproduced" or
"not reproduced", or "not comparable here" when the preset names a deviation from the paper
(``not_comparable``) that makes the comparison meaningless; "n/a" when a curve or the pass
range is missing. The other curve is interpolated (linear in log passes) at the checkpoints of
the first; only checkpoints inside both curves' ranges (up to 1 %) count.
"""

import itertools
from dataclasses import dataclass

import numpy as np

from ssvmbench.errors import UserError

KINDS = {"below": {"lower", "upper"}, "close": {"curves"}, "paper": {"curve", "value"}}
COMMON = {"kind", "y", "panel", "passes", "fraction", "factor", "tolerance", "data", "C", "at",
          "quote", "why", "not_comparable", "expect"}
PANELS = ("all", "largest", "smallest")
WORDS = {True: "reproduced", False: "not reproduced", None: "n/a"}
NOT_COMPARABLE = "not comparable here"


@dataclass
class Verdict:
    holds: bool | None      # None: nothing to compare (a curve or the pass range is missing)
    detail: str
    comparable: bool = True  # False: a deviation from the paper makes the comparison moot

    @property
    def word(self):
        return WORDS[self.holds] if self.comparable else NOT_COMPARABLE


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
    if kind == "paper" and "tolerance" not in check:
        raise UserError(f"{where}: a paper check needs the tolerance of the comparison")
    if check.get("expect", True) not in (True, False):
        raise UserError(f"{where}: expect {check['expect']!r}; use true or false (the paper "
                        "says the comparison fails, e.g. 'more sensitive')")
    if check.get("at", "every") not in ("every", "best"):
        raise UserError(f"{where}: at {check['at']!r}; use every (checkpoint) or best")


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
    if "C" in check:
        panel = f"C = {check['C']:g}"
    if "data" in check:
        panel += f", data={check['data']}"
    if check["kind"] == "below":
        factor = check.get("factor", 1)
        relation = "below" if factor == 1 else f">= {factor:g}x below"
        what = f"{', '.join(check['lower'])} {relation} {', '.join(check['upper'])}"
    elif check["kind"] == "paper":
        what = f"{check['curve']} within {check['tolerance']:g} of the paper's {check['value']:g}"
    else:
        bound = (f"within a factor {check['factor']:g}" if "factor" in check
                 else f"within {check['tolerance']:g}")
        what = f"{', '.join(check['curves'])} {bound} of each other"
    share = check.get("fraction", 1)
    if check.get("at") == "best":
        passes = f"best value of {passes}"
    elif check.get("passes") != "last":
        passes += " (every checkpoint)" if share == 1 else f" ({share:.0%} of the checkpoints)"
    if check.get("expect", True) is False:
        what = f"NOT ({what})"
    return f"{what} in {check['y']}, {passes}, {panel}"


def evaluate(check, stats, center="median"):
    """The :class:`Verdict` of ``check`` on ``stats`` (:func:`aggregate`'s table of
    ``check['y']``), comparing its column ``center``."""
    pairs, compare, margin_name, worst = _comparison(check)
    good = total = 0
    margins, present = [], set()
    for panel in _panels(stats, check):
        curves = {m: c.sort_values("effective_pass") for m, c in panel.groupby("method")}
        present |= set(curves)
        for a, b in pairs:
            if a not in curves or (b is not None and b not in curves):
                continue
            for va, vb in _values(check, curves[a], curves.get(b), center):
                holds, margin = compare(va, vb)
                good += holds
                total += 1
                margins.append(margin)
    comparable = "not_comparable" not in check
    missing = {name for pair in pairs for name in pair if name is not None} - present
    if missing:
        return Verdict(None, f"no curve named {', '.join(sorted(missing))} in the logs",
                       comparable)
    if not total:
        return Verdict(None, "no checkpoint in the pass range", comparable)
    share = check.get("fraction", 1)
    holds = good >= share * total - 1e-9
    unit = "checkpoints" if check.get("at") != "best" and check["kind"] != "paper" else "panels"
    return Verdict(bool(holds == check.get("expect", True)),
                   f"{good} of {total} {unit}; {margin_name} {worst(margins):.3g}", comparable)


def higher_is_better(y):
    """Test metrics (``test_*`` but the test error) grow as a model improves."""
    return y.startswith("test_") and y != "test_error"


def _values(check, first, second, center):
    """The value pairs a check compares for one pair of curves of a panel: at every
    checkpoint (``second`` interpolated), each curve's best in the pass range (``at:
    best``), or the curve's value against the paper's number (``kind: paper``)."""
    if check.get("at") != "best":
        if second is None:
            first = _in_range(first, center, check.get("passes"))
            return [(first[center].to_numpy(float)[-1], check["value"])] if len(first) else []
        return _aligned(first, second, center, check.get("passes"))
    best = np.nanmax if higher_is_better(check["y"]) else np.nanmin
    ranged = [_in_range(c, center, check.get("passes")) for c in (first, second)
              if c is not None]
    if any(c.empty for c in ranged):
        return []
    values = [best(c[center].to_numpy(float)) for c in ranged]
    return [(values[0], values[1] if second is not None else check["value"])]


def _in_range(curve, center, passes):
    """The checkpoints of ``curve`` in the pass range (``last``: the last one)."""
    curve = curve[(curve["effective_pass"] > 0) & curve[center].notna()]
    x = curve["effective_pass"].to_numpy(float)
    if passes == "last":
        return curve[x == x.max()] if len(x) else curve
    lo, hi = passes or [None, None]
    return curve[(x >= (lo or 0) - 1e-9) & (x <= (np.inf if hi is None else hi) + 1e-9)]


def _comparison(check):
    """The curve pairs a check compares, ``compare(a, b) -> (holds, margin)``, the margin's
    name and the function picking the worst margin."""
    if check["kind"] == "below":
        factor = check.get("factor", 1)

        def compare(a, b):
            return a * factor <= b, (b / a if a > 0 else np.inf)
        return (list(itertools.product(check["lower"], check["upper"])), compare,
                "smallest ratio upper/lower", min)
    if check["kind"] == "paper":
        def compare(ours, paper):
            return abs(ours - paper) <= check["tolerance"], ours - paper
        return [(check["curve"], None)], compare, "ours minus the paper's", _largest_magnitude
    pairs = list(itertools.combinations(check["curves"], 2))
    if "factor" in check:
        def compare(a, b):
            low, high = sorted((a, b))
            return high <= check["factor"] * low, (high / low if low > 0 else np.inf)
        return pairs, compare, "largest ratio", max

    def compare(a, b):
        return abs(a - b) <= check["tolerance"], abs(a - b)
    return pairs, compare, "largest difference", max


def _largest_magnitude(values):
    return max(values, key=abs)


def _panels(stats, check):
    """The panels (rows of one dataset, variant and regularization) a check looks at."""
    if "data" in check:
        stats = stats[stats["data"] == check["data"]]
    if "C" in check:    # SAP's C: regularization lambda + l1 = 1 / (C n)
        product = stats["regularization"] * stats["n"].astype(float) * check["C"]
        stats = stats[np.isclose(product, 1.0, rtol=1e-6)]
    for _, rows in stats.groupby(["data", "data_variant"], dropna=False):
        levels = sorted(rows["regularization"].unique())
        keep = {"all": levels, "largest": levels[-1:],
                "smallest": levels[:1]}[check.get("panel", "all")]
        for level in keep:
            yield rows[rows["regularization"] == level]


def _aligned(first, second, center, passes):
    """Pairs (first, second) of centre values at the checkpoints of ``first`` in the pass
    range and inside ``second``'s range, ``second`` interpolated linearly in log passes."""
    first = _in_range(first, center, passes)
    second = _in_range(second, center, None)
    if first.empty or second.empty:
        return []
    x = first["effective_pass"].to_numpy(float)
    xs = second["effective_pass"].to_numpy(float)
    # inside second's range up to 1 % (SVRG's anchor gradients: 2.0036 passes vs 2 on 2 % of NER)
    keep = (x >= xs.min() * (1 - 1e-2)) & (x <= xs.max() * (1 + 1e-2))
    values = np.interp(np.log(x[keep]), np.log(xs), second[center].to_numpy(float))
    return list(zip(first[center].to_numpy(float)[keep], values))
