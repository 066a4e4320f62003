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
  (``value``), e.g. SAP Table II's 95.2 % token accuracy on CoNLL-2000, or with ``at_most:
  true`` at most that number (SAP Table III's largest %NZ for "a very small number of
  features");
- ``most_of``: the improvement ``part`` (from its first curve to its second) is at least
  ``share`` (default one half) of the improvement ``whole``, improvements as ratios (the
  figures' log axes), e.g. BCFW Figure 2 "most of the improvement of BCFW with line-search
  over SSG is coming from the optimal step-size choice": SSG → BCFW-predefined is at most
  half of SSG → BCFW on the log axis, i.e. BCFW-predefined → BCFW is at least half;
- ``worsens``: the ``curve`` ends worse than its best in the pass range by a ``factor``,
  e.g. BCFW Figure 3's "overfitting": BCFW-wavg "reaches early a low test error which then
  starts to increase";
- ``rougher``: the first of two ``curves`` fluctuates more than the second over the pass
  range: its path length on the log axis beyond its net change (the distance it travels
  back and forth) is larger, e.g. BCFW-tavg's "performance fluctuates more widely";
- ``early``: the ``curve``'s best in the pass range is within ``tolerance`` of its best
  ``within`` a longer range, e.g. SAP Section V "a reasonable generalization performance in
  the first couple of iterations": the best accuracy of passes 0-2 near that of passes 0-50;
- ``steady``: the ``curve``'s value (``at: best``) in the panels of one dataset (SAP's C
  values) within ``tolerance`` of each other, e.g. SAP Table IV "the generalization
  performance achieved using various C values is comparable".

``expect: false`` turns a check around: the paper says the comparison fails (SC-SVRG-const
"more sensitive" to mu: its final objectives are not within the bound). ``data`` restricts a
check to the panels of one dataset, ``C`` to the panel of SAP's C (regularization
``1/(C n)``), ``lambda`` to the panel of that regularization; ``at: best`` compares each
curve's best value in the pass range (the maximum of a test metric, the minimum otherwise:
SAP's tables report "the maximum test accuracy within the first 50 iterations") instead of
every checkpoint, or with ``best_of: COLUMN`` its value where that column is best (SAP's
#NZ at the maximum test accuracy; the stats then carry the column's centre as ``best_of``).

``lower_as: best`` on a ``below`` check compares the lowest of the ``lower`` curves at each
checkpoint, as one curve (BCFW Figure 3's "the block-coordinate Frank-Wolfe algorithm" read
as the BCFW family: its best variant).

``significant: true`` on a ``below`` check compares the bands over seeds instead of the
centre lines: the lower curve's top edge (max, or mean + std) below the upper curve's bottom
edge (min, or mean - std), i.e. a difference larger than the seed-to-seed spread (BCFW Figure
5, "seems to help both methods significantly").

A check holds when, for every pair of curves in every panel that has both (a curve may exist
in some panels only, e.g. SGD with a step size per lambda), the comparison holds at a
``fraction`` of the compared checkpoints: a number, or one of the words of
:data:`READINGS`, the one reading of such words in every preset (``most``: more than half).
Pairs are counted apart, so that a curve that fails against one other curve is not hidden
by the pairs it wins (BCFW Figure 3's raw BCFW, above BCFW-wavg almost everywhere). Its verdict reads "reproduced" or
"not reproduced", or "not comparable here" when the preset names a deviation from the paper
(``not_comparable``) that makes the comparison meaningless; "n/a" when a curve or the pass
range is missing. The other curve is interpolated (linear in log passes) at the checkpoints
of the first; only checkpoints inside both curves' ranges (up to 1 %) count.

``evidence: true`` marks a check of the project's own explanation of a deviation (SAP Figure
3 on our POS sample), not of a paper's sentence: its verdict reads "evidence: holds" or
"evidence: fails", outside the tally of the papers' claims. ``alternative`` gives the other
natural reading of the words where there are two (the keys that differ, null to drop one,
and its ``why``); the report says what it gives beside the check's own verdict. ``across:
most`` reads "in most of the experiments" (BCFW Section 6): each panel of each preset that
checks the same sentence is one experiment, and the sentence holds when more than half of
the comparable ones do (:func:`across_presets`).
"""

import dataclasses
import itertools

import numpy as np
import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.plotting.curves import BANDS, with_bands

KINDS = {"below": {"lower", "upper"}, "close": {"curves"}, "paper": {"curve", "value"},
         "most_of": {"whole", "part"}, "worsens": {"curve", "factor"}, "rougher": {"curves"},
         "early": {"curve", "tolerance", "within"}, "steady": {"curve", "tolerance"}}
WHOLE_CURVE = ("paper", "worsens", "rougher", "early", "steady")  # one value per curve, panel
COMMON = {"kind", "y", "panel", "passes", "fraction", "factor", "tolerance", "data", "C",
          "lambda", "at", "best_of", "quote", "why", "not_comparable", "expect", "share",
          "significant", "at_most", "lower_as", "evidence", "alternative", "across"}
# the papers' words for how often a comparison holds, read the same way in every preset:
# ``(share of the checkpoints, strictly more than it)``
READINGS = {"most": (0.5, True), "generally": (0.5, True), "always": (1.0, False),
            "sometimes": (0.0, True)}
EDGES = {center: (low, high) for center, low, high in BANDS.values()}   # a band's edges
PANELS = ("all", "largest", "smallest")
WORDS = {True: "reproduced", False: "not reproduced", None: "n/a"}
NOT_COMPARABLE = "not comparable here"
EVIDENCE = {True: "evidence: holds", False: "evidence: fails", None: "n/a"}


@dataclasses.dataclass
class Verdict:
    holds: bool | None      # None: nothing to compare (a curve or the pass range is missing)
    detail: str
    comparable: bool = True  # False: a deviation from the paper makes the comparison moot
    evidence: bool = False   # the project's explanation of a deviation, outside the tally
    panels: tuple = (0, 0)   # (panels where every compared pair holds, panels compared)
    other: "Verdict | None" = None  # the verdict of the check's alternative reading

    @property
    def word(self):
        if self.evidence:
            return EVIDENCE[self.holds]
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
    if kind == "paper" and ("tolerance" in check) == bool(check.get("at_most")):
        raise UserError(f"{where}: a paper check needs the tolerance of the comparison, or "
                        "at_most: true")
    if check.get("expect", True) not in (True, False):
        raise UserError(f"{where}: expect {check['expect']!r}; use true or false (the paper "
                        "says the comparison fails, e.g. 'more sensitive')")
    if check.get("at", "every") not in ("every", "best"):
        raise UserError(f"{where}: at {check['at']!r}; use every (checkpoint) or best")
    if "best_of" in check and check.get("at") != "best":
        raise UserError(f"{where}: best_of picks the checkpoint of at: best")
    fraction = check.get("fraction", 1)
    if not (fraction in READINGS or isinstance(fraction, (int, float)) and 0 < fraction <= 1):
        raise UserError(f"{where}: fraction {fraction!r}; use a number in (0, 1] or one of "
                        f"{sorted(READINGS)}")
    if kind == "most_of" and not all(len(check[key]) == 2 for key in ("whole", "part")):
        raise UserError(f"{where}: most_of compares two improvements, each [from, to]")
    if kind == "rougher" and len(check["curves"]) != 2:
        raise UserError(f"{where}: rougher compares two curves, [rougher, smoother]")
    if "share" in check and kind != "most_of" or "significant" in check and kind != "below":
        raise UserError(f"{where}: share belongs to most_of checks, significant to below")
    if check.get("lower_as", "best") != "best" or "lower_as" in check and kind != "below":
        raise UserError(f"{where}: lower_as: best (the lowest of the lower curves as one) "
                        "belongs to below checks")
    if kind == "early" and not (isinstance(check["within"], list) and len(check["within"]) == 2):
        raise UserError(f"{where}: within {check['within']!r}; use [from, to] (to: null for "
                        "the end)")
    if kind == "steady" and check.get("at") != "best":
        raise UserError(f"{where}: a steady check compares each panel's best: add at: best")
    if check.get("evidence", False) not in (True, False):
        raise UserError(f"{where}: evidence {check['evidence']!r}; use true (the project's own "
                        "explanation, outside the tally) or false")
    if check.get("across", "most") != "most":
        raise UserError(f"{where}: across {check['across']!r}; use most ('in most of the "
                        "experiments')")
    if "alternative" in check:
        alternative = check["alternative"]
        if not isinstance(alternative, dict) or "why" not in alternative:
            raise UserError(f"{where}: alternative: the keys of the other reading and its why")
        validate(reading(check), f"{where}, alternative")


def reading(check):
    """The check under its ``alternative`` reading (the other natural one of the words): its
    keys replaced by the alternative's, those it sets to null left out."""
    merged = {**check, **check["alternative"]}
    return {key: value for key, value in merged.items()
            if key != "alternative" and value is not None}


def describe(check):
    """The check in words, e.g. ``bcfw, ssg >= 10x below fw-best in suboptimality, passes
    1-30, largest-regularization panel``."""
    passes = check.get("passes", [None, None])
    if passes == "last":
        passes = "at the last checkpoint"
    else:
        passes = f"passes {_span(passes)}"
    panel = {"all": "every panel", "largest": "largest-regularization panel",
             "smallest": "smallest-regularization panel"}[check.get("panel", "all")]
    if "C" in check:
        panel = f"C = {check['C']:g}"
    if "lambda" in check:
        panel = f"lambda = {check['lambda']:g}"
    if "data" in check:
        panel += f", data={check['data']}"
    if check["kind"] == "below":
        factor = check.get("factor", 1)
        relation = "below" if factor == 1 else f">= {factor:g}x below"
        lower = ", ".join(check["lower"])
        if check.get("lower_as") == "best":
            lower = f"the best of ({lower})"
        what = f"{lower} {relation} {', '.join(check['upper'])}"
    elif check["kind"] == "early":
        what = (f"{check['curve']}'s best within {check['tolerance']:g} of its best of passes "
                f"{_span(check['within'])}")
    elif check["kind"] == "steady":
        what = f"{check['curve']} within {check['tolerance']:g} across the panels of a dataset"
    elif check["kind"] == "paper":
        what = (f"{check['curve']} at most the paper's {check['value']:g}" if check.get("at_most")
                else f"{check['curve']} within {check['tolerance']:g} of the paper's "
                     f"{check['value']:g}")
    elif check["kind"] == "worsens":
        what = f"{check['curve']} ends >= {check['factor']:g}x worse than its best"
    elif check["kind"] == "rougher":
        what = f"{check['curves'][0]} fluctuates more than {check['curves'][1]}"
    elif check["kind"] == "most_of":
        (a, b), (c, d) = check["whole"], check["part"]
        what = (f"{c} -> {d} >= {check.get('share', 0.5):.0%} of the improvement {a} -> {b} "
                "(as ratios)")
    else:
        bound = (f"within a factor {check['factor']:g}" if "factor" in check
                 else f"within {check['tolerance']:g}")
        what = f"{', '.join(check['curves'])} {bound} of each other"
    if check.get("significant"):
        what += " beyond the seeds' bands"
    share = check.get("fraction", 1)
    if check.get("at") == "best":
        passes = f"best value of {passes}"
    elif check.get("passes") != "last":
        passes += (" (every checkpoint)" if share == 1 else
                   f" ({share} of the checkpoints)" if share in READINGS else
                   f" ({share:.0%} of the checkpoints)")
        if share != 1 and len(_comparison(check)[0]) > 1:
            passes += ", each pair of curves"
    if check.get("expect", True) is False:
        what = f"NOT ({what})"
    return f"{what} in {check['y']}, {passes}, {panel}"


def _span(passes):
    """A pass range ``[from, to]`` in words: ``0-50``, ``1-end``."""
    lo, hi = passes
    return f"{lo or 0:g}-{'end' if hi is None else format(hi, 'g')}"


def evaluate(check, stats, center="median"):
    """The :class:`Verdict` of ``check`` on ``stats`` (:func:`aggregate`'s table of
    ``check['y']``), comparing its column ``center`` (``median`` or ``mean``; the bands
    around it for ``significant``)."""
    if check.get("lower_as") == "best":
        stats, check = _as_one(stats, check)
    groups, compare, margin_name, worst = _comparison(check)
    tallies, margins, present = [], [], set()     # tallies: (curves, panel, good, total)
    for level, panel in (_datasets(stats, check) if check["kind"] == "steady"
                         else _panels(stats, check)):
        curves = {m: c.sort_values("effective_pass") for m, c in panel.groupby("method")}
        present |= set(curves)
        for names in groups:
            if any(name not in curves for name in names):
                continue
            good = total = 0
            for values in _values(check, [curves[name] for name in names], center):
                holds, margin = compare(*values)
                good += holds
                total += 1
                margins.append(margin)
            if total:
                tallies.append((names, level, good, total))
    kept = {"comparable": "not_comparable" not in check,
            "evidence": bool(check.get("evidence"))}
    missing = {name for names in groups for name in names} - present
    if missing:
        return Verdict(None, f"no curve named {', '.join(sorted(missing))} in the logs", **kept)
    if not tallies:
        return Verdict(None, "no checkpoint in the pass range", **kept)
    failing = [t for t in tallies if not _enough(check, t[2], t[3])]
    levels = {t[1] for t in tallies}
    panels = (len(levels - {t[1] for t in failing}), len(levels))
    good, total = sum(t[2] for t in tallies), sum(t[3] for t in tallies)
    unit = ("datasets" if check["kind"] == "steady" else
            "panels" if check.get("at") == "best" or check["kind"] in WHOLE_CURVE
            else "checkpoints")
    detail = f"{good} of {total} {unit}"
    if len(tallies) > 1 and check.get("fraction", 1) != 1:
        detail += f"; {len(tallies) - len(failing)} of {len(tallies)} curve pairs x panels hold"
        if failing:
            names, level, a, b = min(failing, key=lambda t: t[2] / t[3])
            detail += f" (weakest: {' vs '.join(names)} at {level:.3g}: {a} of {b})"
    return Verdict(bool((not failing) == check.get("expect", True)),
                   f"{detail}; {margin_name} {worst(margins):.3g}", panels=panels, **kept)


def _as_one(stats, check):
    """``(stats, check)`` with the ``lower`` curves replaced by one: at each checkpoint of
    each panel the lowest of them (their centre and band edges), named for the check."""
    name = f"best of ({', '.join(check['lower'])})"
    rows = stats[stats["method"].isin(check["lower"])]
    keys = [c for c in stats.columns if c not in _NUMBERS and c != "method"]
    numbers = [c for c in stats.columns if c in _NUMBERS]
    best = rows.groupby(keys, dropna=False)[numbers].min().reset_index().assign(method=name)
    return pd.concat([stats, best], ignore_index=True), {**check, "lower": [name]}


_NUMBERS = {"median", "mean", "min", "max", "std", "best_of"}    # aggregate's values of a curve


def across_presets(checked):
    """``checked`` (``[(check, Verdict)]`` of every preset) with the checks read ``across:
    most`` judged together: the sentence holds when more than half of the comparable panels
    of all the checks quoting it hold; each of them says so after its own detail."""
    groups = {}
    for check, verdict in checked:
        if check.get("across") and verdict.comparable and verdict.holds is not None:
            groups.setdefault(_sentence(check), []).append(verdict)
    tallies = {quote: (sum(v.panels[0] for v in vs), sum(v.panels[1] for v in vs), len(vs))
               for quote, vs in groups.items()}
    judged = []
    for check, verdict in checked:
        tally = tallies.get(_sentence(check)) if check.get("across") else None
        if tally:
            held, total, presets = tally
            verdict = dataclasses.replace(
                verdict, holds=held > total / 2 if verdict.comparable else verdict.holds,
                detail=f"{verdict.detail}; in most of the experiments: {held} of {total} "
                       f"comparable panels of {presets} figures hold")
        judged.append((check, verdict))
    return judged


def _sentence(check):
    """The quoted sentence, its white space as one space (the key of ``across`` checks)."""
    return " ".join(check["quote"].split())


def _enough(check, good, total):
    """Whether ``good`` of ``total`` compared values meet the check's ``fraction``."""
    share, strict = READINGS.get(check.get("fraction", 1), (check.get("fraction", 1), False))
    return good > share * total + 1e-9 if strict else good >= share * total - 1e-9


def higher_is_better(y):
    """Test metrics (``test_*`` but the test error) grow as a model improves."""
    return y.startswith("test_") and y != "test_error"


def _values(check, curves, center):
    """The value tuples a check compares for its curves in one panel: at every checkpoint
    of the first curve (the others interpolated), each curve's best in the pass range (``at:
    best``), or the curve's value against the paper's number (``kind: paper``). With
    ``significant`` the lower curve gives its band's top edge, the upper its bottom edge."""
    columns = [center] * len(curves)
    if check.get("significant"):
        bottom, top = EDGES[center]
        curves = [with_bands(c) for c in curves]
        columns = [top, bottom]
    if check["kind"] == "early":
        early = _in_range(curves[0], center, check.get("passes"))
        within = _in_range(curves[0], center, check["within"])
        if early.empty or within.empty:
            return []
        return [(_best(check, early, center), _best(check, within, center))]
    if check["kind"] == "steady":      # the curve in every panel of a dataset (_datasets)
        ranged = [_in_range(c, center, check.get("passes"))
                  for _, c in curves[0].groupby("regularization")]
        return [tuple(_best(check, c, center) for c in ranged if len(c))]
    if check["kind"] in ("worsens", "rougher"):
        ranged = [_in_range(c, center, check.get("passes")) for c in curves]
        if any(len(c) < 2 for c in ranged):
            return []
        if check["kind"] == "rougher":
            return [tuple(_fluctuation(c[center].to_numpy(float)) for c in ranged)]
        return [(ranged[0][center].to_numpy(float)[-1], _best(check, ranged[0], center))]
    if check["kind"] == "paper":
        first = _in_range(curves[0], center, check.get("passes"))
        if check.get("at") == "best":
            return [(_best(check, first, center), check["value"])] if len(first) else []
        return [(first[center].to_numpy(float)[-1], check["value"])] if len(first) else []
    if check.get("at") == "best":
        ranged = [_in_range(c, column, check.get("passes")) for c, column in zip(curves, columns)]
        if any(c.empty for c in ranged):
            return []
        return [tuple(_best(check, c, column) for c, column in zip(ranged, columns))]
    return _aligned(curves, columns, check.get("passes"))


def _fluctuation(values):
    """How far a curve travels on the log axis beyond its net change: 0 for a monotone
    curve, twice the way back for one that goes up and down."""
    logs = np.log(np.maximum(values, 1e-300))
    return float(np.abs(np.diff(logs)).sum() - abs(logs[-1] - logs[0]))


def _best(check, curve, column):
    """The best of the ``column`` of ``curve``: the maximum of a test metric, the minimum
    otherwise; with ``best_of``, its value where that column (``curve["best_of"]``) is best."""
    if "best_of" in check:
        by = curve["best_of"].to_numpy(float)
        pick = np.nanargmax(by) if higher_is_better(check["best_of"]) else np.nanargmin(by)
        return float(curve[column].to_numpy(float)[pick])
    best = np.nanmax if higher_is_better(check["y"]) else np.nanmin
    return best(curve[column].to_numpy(float))


def _in_range(curve, center, passes):
    """The checkpoints of ``curve`` in the pass range (``last``: the last one)."""
    curve = curve[(curve["effective_pass"] > 0) & curve[center].notna()]
    x = curve["effective_pass"].to_numpy(float)
    if passes == "last":
        return curve[x == x.max()] if len(x) else curve
    lo, hi = passes or [None, None]
    return curve[(x >= (lo or 0) - 1e-9) & (x <= (np.inf if hi is None else hi) + 1e-9)]


def _comparison(check):
    """The groups of curves a check compares (pairs; four for ``most_of``, one for
    ``paper``), ``compare(*values) -> (holds, margin)``, the margin's name and the function
    picking the worst margin."""
    if check["kind"] == "below":
        factor = check.get("factor", 1)

        def compare(a, b):
            return a * factor <= b, (b / a if a > 0 else np.inf)
        return (list(itertools.product(check["lower"], check["upper"])), compare,
                "smallest ratio upper/lower", min)
    if check["kind"] == "paper":
        def compare(ours, paper):
            if check.get("at_most"):
                return ours <= paper, ours - paper
            return abs(ours - paper) <= check["tolerance"], ours - paper
        worst = max if check.get("at_most") else _largest_magnitude    # the largest excess
        return [(check["curve"],)], compare, "ours minus the paper's", worst
    if check["kind"] == "worsens":
        factor = check["factor"]

        def compare(last, best):
            ratio = best / last if higher_is_better(check["y"]) else last / best
            return bool(ratio >= factor), ratio
        return [(check["curve"],)], compare, "end / best", min
    if check["kind"] == "early":
        def compare(early, best):
            return abs(early - best) <= check["tolerance"], early - best
        return [(check["curve"],)], compare, "early best minus the best", _largest_magnitude
    if check["kind"] == "steady":
        def compare(*values):
            spread = max(values) - min(values) if values else np.nan
            return bool(spread <= check["tolerance"]), spread
        return [(check["curve"],)], compare, "largest spread", max
    if check["kind"] == "rougher":
        def compare(rough, smooth):       # two monotone curves: as smooth as each other
            ratio = rough / smooth if smooth > 0 else (np.inf if rough > 0 else 1.0)
            return rough > smooth, ratio
        return [tuple(check["curves"])], compare, "fluctuation ratio", min
    if check["kind"] == "most_of":
        share = check.get("share", 0.5)

        def compare(start, end, part_start, part_end):
            whole = np.log(start / end) if start > 0 and end > 0 else np.nan
            part = np.log(part_start / part_end) if part_start > 0 and part_end > 0 else np.nan
            fraction = part / whole if whole > 0 else np.nan     # no improvement: not "most"
            return bool(fraction >= share), fraction
        return ([tuple(check["whole"]) + tuple(check["part"])], compare,
                "smallest share of the improvement", _smallest)
    pairs = list(itertools.combinations(check["curves"], 2))
    if "factor" in check:
        def compare(a, b):
            low, high = sorted((a, b))
            return high <= check["factor"] * low, (high / low if low > 0 else np.inf)
        return pairs, compare, "largest ratio", max

    def compare(a, b):
        return abs(a - b) <= check["tolerance"], abs(a - b)
    return pairs, compare, "largest difference", max


def _smallest(values):
    return np.nanmin(values) if np.isfinite(values).any() else np.nan


def _largest_magnitude(values):
    return max(values, key=abs)


def _panels(stats, check):
    """``(regularization, rows)`` of each panel (one dataset, variant and regularization) a
    check looks at."""
    if "data" in check:
        stats = stats[stats["data"] == check["data"]]
    if "C" in check:    # SAP's C: regularization lambda + l1 = 1 / (C n)
        product = stats["regularization"] * stats["n"].astype(float) * check["C"]
        stats = stats[np.isclose(product, 1.0, rtol=1e-6)]
    if "lambda" in check:
        stats = stats[np.isclose(stats["regularization"], check["lambda"], rtol=1e-6, atol=0)]
    for _, rows in stats.groupby(["data", "data_variant"], dropna=False):
        levels = sorted(rows["regularization"].unique())
        keep = {"all": levels, "largest": levels[-1:],
                "smallest": levels[:1]}[check.get("panel", "all")]
        for level in keep:
            yield level, rows[rows["regularization"] == level]


def _datasets(stats, check):
    """``(number of panels, rows)`` of each dataset and variant a ``steady`` check compares
    across its panels (SAP Table IV: one panel per C)."""
    if "data" in check:
        stats = stats[stats["data"] == check["data"]]
    for _, rows in stats.groupby(["data", "data_variant"], dropna=False):
        yield rows["regularization"].nunique(), rows


def _aligned(curves, columns, passes):
    """Tuples of the curves' values (``columns``, one per curve) at the checkpoints of the
    first curve in the pass range and inside every other's range, the others interpolated
    linearly in log passes."""
    first = _in_range(curves[0], columns[0], passes)
    others = [_in_range(c, column, None) for c, column in zip(curves[1:], columns[1:])]
    if first.empty or any(c.empty for c in others):
        return []
    x = first["effective_pass"].to_numpy(float)
    keep = np.ones(len(x), bool)
    for other in others:
        xs = other["effective_pass"].to_numpy(float)
        # inside the range up to 1 % (SVRG's anchor gradients: 2.0036 passes vs 2 on 2 % of NER)
        keep &= (x >= xs.min() * (1 - 1e-2)) & (x <= xs.max() * (1 + 1e-2))
    series = [first[columns[0]].to_numpy(float)[keep]]
    series += [np.interp(np.log(x[keep]), np.log(other["effective_pass"].to_numpy(float)),
                         other[column].to_numpy(float))
               for other, column in zip(others, columns[1:])]
    return list(zip(*series))
