"""SAP Tables II-IV: the best test accuracy within the first passes, its #NZ and %NZ, next to
the paper's numbers (Balamurugan et al., Section V; the presets' ``paper_table`` rows)."""

import numpy as np
import pandas as pd

from ssvmbench.common.errors import UserError


def best_within(df, passes, paper_rows, metric="test_accuracy"):
    """Per run: the checkpoint with the best ``metric`` (a ``test_*`` column; SAP's tables
    report token accuracy) among those at most ``passes`` effective passes (SAP Table III:
    "maximum test accuracy within the first 50 iterations"), with ``C = 1/(n (lambda +
    l1))`` and ``rho1 = l1/(lambda + l1)`` (OP5 with rho1 + rho2 = 1); its value in % is
    the column ``<metric without test_>_%``. A log without ``n`` or ``d`` (the
    attributes C and %NZ need) leaves those cells empty. ``paper_rows``: the paper's
    numbers, ``{(data, solver, C, rho1): [(table, #NZ, accuracy %)]}``
    (:func:`ssvmbench.papers.presets.paper_table`)."""
    if metric not in df:
        raise UserError(f"--best-within: the logs have no column {metric}; their test "
                        f"columns: {sorted(c for c in df if c.startswith('test_'))}")
    early = df[(df["effective_pass"] <= passes + 1e-9) & (df["iterate"] == "raw")]
    best = early.loc[early.groupby("run")[metric].idxmax()].copy()
    l1 = pd.to_numeric(best["l1"], errors="coerce").fillna(0.0)
    total = best["lambda"] + l1
    best["C"] = (1.0 / (pd.to_numeric(best["n"], errors="coerce") * total)).round(6)
    best["rho1"] = (l1 / total).round(6)
    best["passes"] = passes
    best["best_pass"] = best["effective_pass"]
    percent = f"{metric.removeprefix('test_')}_%"
    best[percent] = 100 * best[metric]
    best["nnz_%"] = 100 * best["nnz"] / pd.to_numeric(best["d"], errors="coerce")
    best["paper"] = [_paper(row, paper_rows) for row in best.itertuples()]
    columns = ["data", "data_variant", "method", "C", "rho1", "seed", "passes", "best_pass",
               percent, "nnz", "nnz_%", "time_s", "paper"]
    return best.reindex(columns=columns).sort_values(["data", "data_variant", "C", "rho1",
                                                      "method", "seed"])


def _paper(row, table):
    if "validation" in str(row.data_variant):    # data.holdout: scored on training data
        return ""
    entries = table.get((row.data, row.method.split("-")[0], _round(row.C), _round(row.rho1)))
    return "; ".join(f"Table {t}: {nz} NZ, {acc} %" for t, nz, acc in entries or [])


def _round(value):
    return float(f"{value:.3g}") if np.isfinite(value) else value


def latex(table):
    """A LaTeX ``tabular`` of the table (no extra packages needed)."""
    def cell(value):
        if isinstance(value, float):
            return "" if np.isnan(value) else f"{value:.4g}"
        return str(value).replace("_", r"\_").replace("%", r"\%")
    head = " & ".join(cell(c) for c in table.columns) + r" \\ \hline"
    rows = [" & ".join(cell(v) for v in row) + r" \\" for row in table.itertuples(index=False)]
    return "\n".join([r"\begin{tabular}{" + "l" * len(table.columns) + "}", head, *rows,
                      r"\end{tabular}"]) + "\n"
