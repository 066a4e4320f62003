"""Plot data from the tidy table of all run logs (data first, then the renderer).

The input is :func:`ssvmbench.run.runlog.load_logs`'s table, whose ``method`` column is the
run's solver with its non-default options; curves are named by :func:`method_label`.
"""

import contextlib
import warnings

import numpy as np
import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.solvers import result_columns

OBJECTIVE = ["data", "data_variant", "lambda", "l1"]   # rows of one objective
# one panel: the total regularization lambda + l1 (= 1/(C n) in SAP's terms), so that the
# elastic net at several rho1 and the L2 SSVM at the same C share a panel (SAP Figures 1, 3)
PANEL = ["data", "data_variant", "regularization"]
TINY = 1e-12  # floor of the suboptimality, so that it stays on log axes
SUMMARY = ["data", "lambda", "solver", "method", "iterate", "seed", "status", "effective_pass",
           "primal", "dual", "gap", "test_error", "test_metric", "time_s", "seconds_per_pass",
           "run"]


# the column that marks the rows of a method added to a figure (``plot --added``, ``reproduce
# --with``): its label; empty for the runs a figure is about (a paper's methods)
ADDED = "added"


def added_rows(df):
    """Whether each row belongs to an added method (:data:`ADDED`)."""
    if ADDED not in df:
        return pd.Series(False, index=df.index)
    return df[ADDED].notna() & (df[ADDED].astype("string") != "")


def added_labels(df):
    """The curve labels (:func:`curve_labels`) of the added methods' rows."""
    rows = df[added_rows(df)]
    return set(curve_labels(rows)) if len(rows) else set()


def method_label(solver, iterate):
    """``bcfw`` for the raw iterate, ``bcfw-wavg`` for an average (BCFW Figure 1 names)."""
    return solver if iterate == "raw" else f"{solver}-{iterate}"


def curve_labels(df):
    """The curve name of every row (:func:`method_label` of its method and iterate), with
    ``-rho1=`` (``l1 / (lambda + l1)``) for elastic-net runs."""
    l1 = _l1(df)
    rho1 = l1 / (df["lambda"] + l1)
    return [method_label(m, i) + (f"-rho1={r:.3g}" if r > 0 else "")
            for m, i, r in zip(df["method"], df["iterate"], rho1)]


def _l1(df):
    """The run's l1 weight (0 for logs without one)."""
    if "l1" not in df:
        return pd.Series(0.0, index=df.index)
    return pd.to_numeric(df["l1"], errors="coerce").fillna(0.0)


def _regularization(df):
    """The panel key ``lambda + l1`` of every row, to 10 digits (so that 0.1 x + 0.9 x ==
    0.3 x + 0.7 x)."""
    return [float(f"{v:.10g}") for v in df["lambda"] + _l1(df)]


def _given(optimum, data, lam):
    """The user's optimum for ``(data, lam)`` (λ compared to 6 significant digits)."""
    for (name, value_lam), value in (optimum or {}).items():
        if not pd.isna(data) and name == data and np.isclose(value_lam, lam, rtol=1e-6, atol=0):
            return value
    return None


LOOSE_REFERENCE = 1e-3   # relative gap of the reference above which the plot warns


class LooseReference(UserWarning):
    """:func:`add_suboptimality`'s warning of one panel whose best dual, the reference, is
    ``gap`` below its best primal (more than :data:`LOOSE_REFERENCE`)."""

    def __init__(self, panel, value, gap):
        super().__init__(f"{panel}: the best dual in the logs ({value:.6g}) is {gap:.3g} below "
                         "the best primal, so suboptimality curves flatten there; run longer "
                         "or give --optimum FILE.csv")
        self.panel, self.gap = panel, gap


@contextlib.contextmanager
def loose_references_counted(shown=3):
    """Within it (a command: also a decorator), the :class:`LooseReference` warnings become
    one at its end that counts their panels and names the ``shown`` loosest; other
    warnings pass unchanged."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        _counted(caught, shown)


def _counted(caught, shown):
    """Warn the ``caught`` warnings again, their :class:`LooseReference` ones as one."""
    loose = {}
    for w in caught:
        if isinstance(w.message, LooseReference):
            loose[str(w.message)] = w.message
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if loose:
        worst = sorted(loose.values(), key=lambda w: -w.gap)
        named = "; ".join(f"{w.panel} ({w.gap:.3g} below)" for w in worst[:shown])
        warnings.warn(f"the best dual objective is the optimum of {len(worst)} panel"
                      f"{'s' * (len(worst) > 1)} whose suboptimality curves flatten there, "
                      f"where it is far below the best primal: {named}"
                      f"{'; ...' if len(worst) > shown else ''}; run longer or give "
                      "--optimum FILE.csv", UserWarning, stacklevel=2)


NO_REFERENCE = "none"     # a group without a dual objective or a given optimum


def add_suboptimality(df, optimum=None):
    """Add ``suboptimality`` = primal − reference and ``reference`` (its kind) per dataset,
    variant and λ. The reference is the user's ``optimum[(data, lambda)]`` if given, else the
    best (largest) finite dual objective over all rows of the group (BCFW Appendix F): a
    bound no plotted primal curve defines; the rows of added methods (:func:`added_rows`)
    do not count where other rows are there, so that a method put beside a paper's moves
    none of the paper's curves. A group without either has no suboptimality
    (NaN; reference ``none``): the best primal seen would send the curve that reached it to
    0. A best dual further than :data:`LOOSE_REFERENCE` below the best primal is warned about
    (the curves flatten at that gap)."""
    df = df.copy()
    reference = pd.Series(np.nan, index=df.index)
    kind = pd.Series("", index=df.index, dtype=object)
    if "l1" not in df:
        df["l1"] = 0.0
    added = added_rows(df)
    for (data, _, lam, _), rows in df.groupby(OBJECTIVE, dropna=False).groups.items():
        basis = rows[~added[rows].to_numpy()] if not added[rows].all() else rows
        dual, primal = df.loc[basis, "dual"], df.loc[rows, "primal"]
        given = _given(optimum, data, lam)
        if given is not None:
            value, source = given, "given optimum"
            if primal.min() < value - 1e-9 * max(1.0, abs(value)):
                warnings.warn(f"{data}, lambda={lam:g}: primal {primal.min():.10g} is below "
                              f"the given optimum {value:.10g}; check the --optimum file")
        elif np.isfinite(dual).any():
            value, source = dual[np.isfinite(dual)].max(), "best dual"
            floor = primal.min() - value      # the smallest suboptimality the curves can show
            if floor > LOOSE_REFERENCE * max(1.0, abs(value)):
                warnings.warn(LooseReference(f"{data}, lambda={lam:g}", value, floor))
        else:
            value, source = np.nan, NO_REFERENCE
        reference[rows] = value
        kind[rows] = source
    df["reference"] = kind
    df["suboptimality"] = np.maximum(df["primal"] - reference, TINY)
    return df


def check_panels(df):
    """Refuse panels that would mix objectives: every run of a panel (dataset, variant,
    ``lambda + l1``) must share the task ``loss`` and the ``objective`` definition, else the
    suboptimality reference and the curves would compare different problems."""
    df = df.assign(regularization=_regularization(df))
    for key in ("loss", "objective"):
        if key not in df:
            continue
        kinds = df.dropna(subset=[key]).groupby(PANEL, dropna=False)[key].unique()
        for (data, variant, reg), values in kinds.items():
            if len(values) > 1:
                runs = [df.loc[df[key] == v, "run"].iloc[0] for v in values]
                raise UserError(
                    f"{data} ({variant}), lambda + l1 = {reg:g}: the logs mix {key} "
                    + " and ".join(f"{v!r} (e.g. {r})" for v, r in zip(values, runs))
                    + "; plot their directories apart")


def provenance(df):
    """One row per run log behind a figure: what it ran (config overrides, seed) on which
    code (git revision) and data (checksum)."""
    columns = ["run", "data", "data_variant", "lambda", "l1", "method", "seed", "status",
               "loss", "overrides", "git_revision", "dataset_checksum", "started", "finished",
               "run_s"]
    return (df.drop_duplicates("run").reindex(columns=columns)
            .sort_values(["data", "lambda", "method", "seed"]).reset_index(drop=True))


# a curve's line and band over seeds, per ``plot --band``: median with min-max (BCFW) or mean
# with one standard deviation (Casimir); the edges of the latter come from :func:`with_bands`
BANDS = {"minmax": ("median", "min", "max"), "std": ("mean", "mean - std", "mean + std")}


def with_bands(stats):
    """:func:`aggregate`'s table with the columns ``mean - std`` and ``mean + std``."""
    return stats.assign(**{"mean - std": stats["mean"] - stats["std"],
                           "mean + std": stats["mean"] + stats["std"]})


# columns computed from logged ones: the share of non-zero weights in % (SAP Table III's %NZ)
DERIVED = {"nnz_percent": lambda df: 100.0 * df["nnz"] / df["d"].astype(float)}


def aggregate(df, y, x="effective_pass"):
    """Median, min, max, mean and standard deviation of ``y`` (a column, or one of
    :data:`DERIVED`) over seeds per dataset,
    variant, regularization ``lambda + l1``, curve ``method`` (:func:`curve_labels`) and
    effective pass, with the training-set size ``n``. For another ``x`` (``oracle_calls``, ``time_s``) its median at that pass
    is added as column ``x``."""
    df = df.assign(method=curve_labels(df), regularization=_regularization(df))
    if y in DERIVED:
        df[y] = DERIVED[y](df)
    runs = df.groupby(PANEL + ["method", "seed"], dropna=False)["run"].nunique()
    if (runs > 1).any():
        data, _, lam, method, seed = runs[runs > 1].index[0]
        raise UserError(f"{data}, lambda={lam:g}: several runs of {method} with seed {seed}; "
                        "they differ in a setting the curve name does not show, so they would "
                        "be averaged as if they were seeds: plot their directories apart or "
                        "select curves with --methods")
    grouped = df.groupby(PANEL + ["method", "effective_pass"], dropna=False)
    stats = grouped[y].agg(["median", "min", "max", "mean", "std"])
    stats["std"] = stats["std"].fillna(0.0)
    if x != "effective_pass":
        stats[x] = grouped[x].median()
    if "n" in df:          # training-set size: SAP's C = 1 / (n (lambda + l1)) of a panel
        stats["n"] = grouped["n"].first()
    if "reference" in df:  # add_suboptimality's reference kind
        stats["reference"] = grouped["reference"].first()
    return stats.reset_index()


def summary(df):
    """One row per run and iterate: its last checkpoint, with ``seconds_per_pass`` and,
    after the test metric, the result columns its solvers declare
    (:func:`ssvmbench.solvers.result_columns.shown`: SAP's #NZ, l1 and rho1)."""
    last = df.groupby(["run", "iterate"], sort=False).tail(1)
    passes = last["effective_pass"].where(last["effective_pass"] > 0)
    shown = result_columns.shown(last["solver"].dropna()) if "solver" in last else []
    table = last.assign(method=curve_labels(last), seconds_per_pass=last["time_s"] / passes,
                        **result_columns.values(last, shown))
    at = SUMMARY.index("time_s")
    return (table.reindex(columns=SUMMARY[:at] + shown + SUMMARY[at:])
            .sort_values(["data", "lambda", "method", "seed"]).reset_index(drop=True))
