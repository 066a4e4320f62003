"""Averaged iterates, updated after every step inside the compiled loops.

BCFW Appendix C and F: ``wavg`` is the weighted average eq. (14),
``w̄_k = 2/(k(k+1)) sum_{t<=k} t w_t`` (Algorithm 4's optional line:
``w̄ <- (k-1)/(k+1) w̄ + 2/(k+1) w_k``); ``tavg`` is the 0.5-suffix average eq. (15)
by the doubling trick (uniform average of the iterates since the last step that was
a power of 2); ``avg`` is the uniform average of all iterates (SSG-avg, Figure 3).
A dual method averages its dual variables the same way (the scalar ``ell = b^T alpha``
here; ``w`` is linear in ``alpha``), so an averaged iterate still has a dual value.
"""

import numba as nb
import numpy as np

from ssvmbench.errors import UserError

KINDS = {"avg": 0, "wavg": 1, "tavg": 2}
ITERATES = ("raw",) + tuple(KINDS)


def average_kinds(iterates) -> np.ndarray:
    """Codes of the averaged iterates in ``iterates`` (which must include ``raw``)."""
    iterates = list(iterates)
    unknown = [name for name in iterates if name not in ITERATES]
    if unknown or "raw" not in iterates or len(set(iterates)) != len(iterates):
        raise UserError(
            f"solver.iterates={iterates} is invalid: give distinct names from "
            f"{list(ITERATES)}, including 'raw' (e.g. solver.iterates=[raw,wavg])"
        )
    return np.array([KINDS[name] for name in iterates if name != "raw"], dtype=np.int64)


@nb.njit(cache=True)
def average_weight(kind, k):
    """Weight of the ``k``-th iterate (``k >= 1``) in the running average."""
    if kind == 0:
        return 1.0 / k
    if kind == 1:
        return 2.0 / (k + 1)
    last_power = 1
    while last_power * 2 <= k:
        last_power *= 2
    return 1.0 / (k - last_power + 1)


@nb.njit(cache=True)
def update_averages(avg_w, avg_ell, kinds, k, w, ws, ell):
    """Fold the ``k``-th iterate ``(ws * w, ell)`` into every running average."""
    for j in range(len(kinds)):
        rho = average_weight(kinds[j], k)
        keep = 1.0 - rho
        c = rho * ws
        row = avg_w[j]
        for q in range(len(w)):
            row[q] = keep * row[q] + c * w[q]
        avg_ell[j] = keep * avg_ell[j] + rho * ell
