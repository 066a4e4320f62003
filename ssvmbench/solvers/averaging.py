"""Averaged iterates, kept lazily so that a step costs only what it touches.

BCFW Appendix C and F: ``wavg`` is the weighted average eq. (14),
``w̄_k = 2/(k(k+1)) sum_{t<=k} t w_t``; ``tavg`` the 0.5-suffix average eq. (15) by the
doubling trick (uniform average of the iterates since the last step that was a power of 2);
``avg`` the uniform average of all iterates (SSG-avg, Figure 3). With weights ``c_t``,
``S_k = sum_t c_t`` and iterates ``w_t = a_t v_t`` (a scalar times a vector that changes by
sparse ``delta_s`` at step ``s``),

    sum_t c_t w_t = C_k v_k - U_k,   C_k = sum_t c_t a_t,   U_k = sum_s C_{s-1} delta_s,

so a step adds ``C_{s-1} delta_s`` to ``U`` on the coordinates it changes, and
``w̄_k = (C_k v_k - U_k) / S_k``. A dual method averages its dual variables the same way
(the scalar ``ell = b^T alpha``; ``w`` is linear in ``alpha``), so an averaged iterate
still has a dual value.
"""

from typing import NamedTuple

import numpy as np

from ssvmbench.common.errors import UserError
from ssvmbench.common.inner import inner

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


class AverageArrays(NamedTuple):
    """What the compiled steps take of :class:`Averages` (its attributes of the same names)."""

    kinds: np.ndarray
    U: np.ndarray
    S: np.ndarray
    C: np.ndarray
    L: np.ndarray


class Averages:
    """State of the running averages: ``U`` (one d-vector each) and the scalars
    ``S`` (sum of weights), ``C`` (sum of weights times scale), ``L`` (weighted sum of ell)."""

    def __init__(self, iterates, d):
        self.kinds = average_kinds(iterates)
        k = len(self.kinds)
        self.U = np.zeros((k, d))
        self.S, self.C, self.L = np.zeros(k), np.zeros(k), np.zeros(k)

    def arrays(self):
        """The arrays the compiled steps take."""
        return AverageArrays(self.kinds, self.U, self.S, self.C, self.L)

    def materialize(self, j, v):
        """``(w̄, ell̄)`` of average ``j`` given the current vector ``v`` (one new array)."""
        out = self.C[j] * v
        out -= self.U[j]
        out /= self.S[j]
        return out, self.L[j] / self.S[j]


@inner
def start_step(avg, k):
    """Before step ``k`` (from 1) on the :class:`AverageArrays` ``avg``: ``tavg`` restarts
    when ``k`` is a power of 2."""
    if k & (k - 1) == 0:
        for j in range(len(avg.kinds)):
            if avg.kinds[j] == 2:
                avg.U[j, :] = 0.0
                avg.S[j] = avg.C[j] = avg.L[j] = 0.0


@inner
def end_step(avg, k, a, ell):
    """After step ``k``: fold in the weight of the new iterate ``(a v_k, ell_k)``."""
    for j in range(len(avg.kinds)):
        c = float(k) if avg.kinds[j] == 1 else 1.0
        avg.S[j] += c
        avg.C[j] += c * a
        avg.L[j] += c * ell


@inner
def fold(U, C, v):
    """Before ``v <- a v`` (SGD renormalization): ``U <- U - C v``, ``C <- 0`` keeps every
    ``C v - U``. (Dividing ``C`` by ``a`` instead would let ``C`` grow geometrically when ``a``
    shrinks geometrically, and ``C v - U`` would cancel catastrophically.) O(d), but only
    when ``a`` has shrunk a millionfold."""
    for j in range(len(C)):
        U[j] -= C[j] * v
        C[j] = 0.0
