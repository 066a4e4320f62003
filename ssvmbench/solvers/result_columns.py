"""Result columns a solver asks to be shown wherever its runs' results are (the finish line
of ``run`` and of a batch, ``plot``'s summary tables): its class attribute ``shows`` names
them among :data:`COLUMNS` (SAP and the L1-SSVM: the sparsity ``nnz`` and the elastic net's
``l1`` and ``rho1``)."""

import math

import pandas as pd

from ssvmbench.common.errors import UserError

# name -> (how it is printed, its value from a run's row: the logged columns with the run's
# lambda and l1, format); rho1 = l1 / (lambda + l1), SAP's OP5 with rho1 + rho2 = 1
COLUMNS = {"nnz": ("#NZ", lambda row: row["nnz"], ".0f"),
           "l1": ("l1", lambda row: row["l1"], ".4g"),
           "rho1": ("rho1", lambda row: row["l1"] / (row["lambda"] + row["l1"]), ".3g")}


def shown(solvers):
    """The columns the solvers named ``solvers`` declare (``Solver.shows``), in
    :data:`COLUMNS` order; a solver not installed here (a plugin's logs) declares none."""
    from ssvmbench.solvers import registered

    classes = registered()
    declared = set()
    for name in {name for name in solvers if name in classes}:
        unknown = set(classes[name].shows) - set(COLUMNS)
        if unknown:
            raise UserError(f"solver {name} declares shows = {tuple(classes[name].shows)}: "
                            f"{sorted(unknown)} not among {list(COLUMNS)}")
        declared |= set(classes[name].shows)
    return [column for column in COLUMNS if column in declared]


def values(table, columns):
    """``{column: values}`` of ``columns`` for the rows of ``table`` (a DataFrame or one
    row as a mapping) with ``nnz``, ``lambda`` and ``l1`` (missing: 0)."""
    l1 = table.get("l1")
    if isinstance(table, pd.DataFrame):
        l1 = pd.to_numeric(l1, errors="coerce").fillna(0.0) if l1 is not None else 0.0
    elif l1 is None or (isinstance(l1, float) and math.isnan(l1)):
        l1 = 0.0
    row = {"nnz": table.get("nnz", math.nan), "lambda": table["lambda"], "l1": l1}
    found = {column: COLUMNS[column][1](row) for column in columns}
    if isinstance(table, pd.DataFrame):       # counts stay integers in tables (1234, not 1.234e+03)
        found = {column: pd.to_numeric(value).round().astype("Int64")
                 if COLUMNS[column][2] == ".0f" else value for column, value in found.items()}
    return found


def parts(row, columns):
    """``["#NZ 1234", "l1 0.00112", "rho1 0.7"]``: the columns' values of one row (a
    mapping), those it has."""
    found = []
    for column, value in values(row, columns).items():
        label, _, spec = COLUMNS[column]
        if value is not None and not pd.isna(value):
            found.append(f"{label} {value:{spec}}")
    return found
