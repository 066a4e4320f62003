"""How a method added to a paper's figure (``reproduce --with``) compares with the paper's
methods drawn in it, on the figure's own quantity and the same checkpoints and seeds.

The input is :func:`~ssvmbench.plotting.curves.aggregate`'s table of one figure's ``y``
(centre line and band over seeds per curve and checkpoint). For every panel, added curve
``a`` and paper curve ``p`` drawn in it (:func:`pairs`), at the checkpoints of ``a`` inside
``p``'s range (``p`` interpolated linearly in log passes, as the papers' checks do,
:mod:`ssvmbench.papers.claims`):

- **better / worse beyond the seed bands**: at how many checkpoints ``a``'s band lies
  entirely on the better (worse) side of ``p``'s band: for a quantity that falls as the
  model improves (suboptimality, primal, test error, #NZ) ``a``'s top edge below ``p``'s
  bottom edge; for a test metric that grows (accuracy, F1, AP) the other way round. Bands are
  min-max over seeds, or mean +- one standard deviation for ``--band std`` figures; with one
  seed the band is the line, so this is "strictly better";
- **reaches**: the first checkpoint (effective pass) at which ``a``'s centre line is at least
  as good as ``p``'s final value (its centre at its last checkpoint), or never;
- **at the end**: ``a``'s centre against ``p``'s at ``a``'s last compared checkpoint, as a
  ratio on a figure with a log axis (``0.5x``: half the suboptimality) and as a difference
  on a linear one (``+0.012`` test error).

:func:`headline` says it in one line per added curve and figure, against the best paper
method of each panel at the end (the paper curve with the best centre there).
"""

import numpy as np
import pandas as pd

from ssvmbench.papers.claims import EDGES, higher_is_better
from ssvmbench.plotting.curves import PANEL, with_bands

COLUMNS = ["data", "data_variant", "regularization", "n", "method", "versus", "checkpoints",
           "better", "worse", "reaches_at", "their_last", "ours_end", "theirs_end",
           "relative"]


def pairs(stats, y, added, center="median", log_scale=True):
    """One row per panel, added curve (a label of ``added``) and paper curve of ``stats``
    (:func:`aggregate`'s table of ``y``): the measures of the module's docstring, in the
    columns :data:`COLUMNS` (``reaches_at`` NaN: never; ``their_last``: the paper curve's
    last pass; ``relative``: ratio if ``log_scale`` else difference)."""
    low, high = EDGES[center]
    stats = with_bands(stats)
    rows = []
    for key, panel in stats.groupby(PANEL, dropna=False):
        curves = {m: c[(c["effective_pass"] > 0) & c[center].notna()].sort_values(
                  "effective_pass") for m, c in panel.groupby("method")}
        curves = {m: c for m, c in curves.items() if len(c)}
        for ours in sorted(set(curves) & set(added)):
            for theirs in sorted(set(curves) - set(added)):
                measures = _measures(curves[ours], curves[theirs], y, center, low, high,
                                     log_scale)
                if measures is not None:
                    rows.append({**dict(zip(PANEL, key)),
                                 "n": panel["n"].iloc[0] if "n" in panel else np.nan,
                                 "method": ours, "versus": theirs, **measures})
    return pd.DataFrame(rows, columns=COLUMNS)


def _measures(ours, theirs, y, center, low, high, log_scale):
    """The measures of ``ours`` against ``theirs`` (two curves of one panel), or None when
    no checkpoint of ours lies inside their range."""
    up = higher_is_better(y)
    x = ours["effective_pass"].to_numpy(float)
    xs = theirs["effective_pass"].to_numpy(float)
    inside = (x >= xs.min() * (1 - 1e-2)) & (x <= xs.max() * (1 + 1e-2))
    if not inside.any():
        return None

    def at(column):            # theirs at our checkpoints inside their range
        return np.interp(np.log(x[inside]), np.log(xs), theirs[column].to_numpy(float))
    ours_c, ours_lo, ours_hi = (ours[c].to_numpy(float)[inside] for c in (center, low, high))
    theirs_c, theirs_lo, theirs_hi = at(center), at(low), at(high)
    better = ours_lo > theirs_hi if up else ours_hi < theirs_lo
    worse = ours_hi < theirs_lo if up else ours_lo > theirs_hi
    final = float(theirs[center].to_numpy(float)[-1])
    line = ours[center].to_numpy(float)
    reached = line >= final if up else line <= final
    end_ours, end_theirs = float(ours_c[-1]), float(theirs_c[-1])
    relative = (end_ours / end_theirs if end_theirs > 0 else np.nan) if log_scale \
        else end_ours - end_theirs
    return {"checkpoints": int(inside.sum()), "better": int(better.sum()),
            "worse": int(worse.sum()),
            "reaches_at": float(x[reached][0]) if reached.any() else np.nan,
            "their_last": float(xs[-1]), "ours_end": end_ours, "theirs_end": end_theirs,
            "relative": relative}


def best_at_end(rows, y):
    """Per panel and added curve, the row of :func:`pairs` whose paper curve is best at the
    end (its ``theirs_end``)."""
    if rows.empty:
        return rows
    keys = PANEL + ["method"]
    pick = (rows.groupby(keys, dropna=False)["theirs_end"].idxmax() if higher_is_better(y)
            else rows.groupby(keys, dropna=False)["theirs_end"].idxmin())
    return rows.loc[pick.to_numpy()]


def relative_text(value, log_scale):
    """``0.52x`` (a ratio) or ``+0.012`` (a difference)."""
    if pd.isna(value):
        return "n/a"
    return f"{value:.3g}x" if log_scale else f"{value:+.3g}"


def headline(rows, y, quantity, label, names, panel_name, log_scale=True):
    """One line a reader can quote: how the added curve ``label`` compares in the figure of
    ``quantity`` (``y``'s axis label) with the best paper method of each panel at the end
    (:func:`best_at_end` of :func:`pairs`' ``rows``): its value relative to that method at
    the end, the pass at which it reaches that method's final value, and the checkpoints at
    which it is better / worse beyond the seed bands. ``names``: the paper curves' names in
    the figure; ``panel_name(row)``: a panel's name (``ocr, λ=0.01``)."""
    best = best_at_end(rows[rows["method"] == label], y)
    if best.empty:
        return f"{label} in {quantity}: no checkpoint beside a paper method's"
    parts = []
    for row in best.itertuples(index=False):
        row = row._asdict()
        reach = ("never reaches its final value" if pd.isna(row["reaches_at"]) else
                 f"reaches its final value (pass {row['their_last']:.3g}) at pass "
                 f"{row['reaches_at']:.3g}")
        parts.append(f"{panel_name(row)}: {relative_text(row['relative'], log_scale)} "
                     f"{names.get(row['versus'], row['versus'])}, {reach}")
    better, worse, total = (int(best[c].sum()) for c in ("better", "worse", "checkpoints"))
    wins = _ends_better(best, y)
    return (f"{label} in {quantity}, against the best paper method of each panel at the end "
            f"(ends better in {wins} of {len(best)} panels): " + "; ".join(parts)
            + f"; beyond the seed bands better at {better} of {total} checkpoints, worse at "
            f"{worse}.")


def _ends_better(best, y):
    """In how many panels the added curve ends better than the best paper method."""
    ours, theirs = best["ours_end"].to_numpy(float), best["theirs_end"].to_numpy(float)
    return int(((ours > theirs) if higher_is_better(y) else (ours < theirs)).sum())


# comparisons.csv's columns (after preset and item): one row per figure, panel, added curve
# and paper curve
TABLE = ["figure", "panel", "method", "versus", "versus_curve", "checkpoints",
         "better_beyond_bands", "worse_beyond_bands", "reaches_final_at_pass",
         "their_last_pass", "at_the_end", "ours_end", "theirs_end"]


def table(rows, y, names, panel_name, log_scale=True):
    """:func:`pairs`' ``rows`` of the figure of ``y`` as :data:`TABLE` (the paper curves by
    their ``names`` in the figure, panels by ``panel_name(row)``, the end as text:
    :func:`relative_text`)."""
    return pd.DataFrame({
        "figure": y, "panel": [panel_name(row) for row in rows.to_dict("records")],
        "method": rows["method"], "versus": [names.get(v, v) for v in rows["versus"]],
        "versus_curve": rows["versus"], "checkpoints": rows["checkpoints"],
        "better_beyond_bands": rows["better"], "worse_beyond_bands": rows["worse"],
        "reaches_final_at_pass": rows["reaches_at"], "their_last_pass": rows["their_last"],
        "at_the_end": [relative_text(v, log_scale) for v in rows["relative"]],
        "ours_end": rows["ours_end"], "theirs_end": rows["theirs_end"]}, columns=TABLE)
