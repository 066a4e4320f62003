"""The objective every solver minimizes and every log reports, written once:
``P(w) = lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)`` (BCFW eq. 3; SAP's elastic net OP5
divided by ``C n``), and for the L2 problem the dual value of a dual iterate, ``D(alpha) =
b^T alpha - lam/2 ||A alpha||^2`` with ``ell = b^T alpha`` and ``w = A alpha`` (BCFW
Section 3)."""

from dataclasses import dataclass

import numpy as np

FORMULA = "lam/2 ||w||^2 + l1 ||w||_1 + 1/n sum_i H_i(w)  (BCFW eq. 3; SAP OP5 / (C n))"


@dataclass(frozen=True)
class Objective:
    lam: float
    l1: float = 0.0

    def regularizer(self, w):
        return 0.5 * self.lam * (w @ w) + (self.l1 * np.abs(w).sum() if self.l1 else 0.0)

    def primal(self, w, mean_hinge):
        """``P(w)`` given the mean structured hinge at ``w``."""
        return self.regularizer(w) + mean_hinge

    def dual(self, w, ell):
        """``D(alpha)`` of a dual iterate with ``w = A alpha`` and ``ell = b^T alpha``."""
        return ell - 0.5 * self.lam * (w @ w)
